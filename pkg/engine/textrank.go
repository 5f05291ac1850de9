package engine

import (
	"fmt"
	"slices"

	"memsvc.dev/memsvc/pkg/engine/rank"
	"memsvc.dev/memsvc/pkg/engine/searchindex"
	"memsvc.dev/memsvc/pkg/memory"
)

// textRanking is the ranking of text recall over a namespace's in-memory
// index, the pipeline docs/recall-ranking.md measured with package rank:
//
//  1. Query analysis: the query's terms, each once, question and function
//     words at weight 0 unless the query has nothing else
//     (rank.Analyzer).
//  2. First stage: the index's top Candidates by weighted BM25F.
//  3. Second stage: each candidate's score plus Proximity times the
//     BM25TP term-pair score (searchindex.Index.Proximity), then shared
//     with its neighbours in its conversation (rank.SmoothNeighbours over
//     the engine's sequence, sequence.go), which brings in the record
//     after the turn that echoes the question.
//
// Everything is a function of the index and the sequence: no map order,
// time or randomness, and ties fall to the record id.
type textRanking struct {
	Candidates int          // first-stage hits the second stage sees
	Proximity  float64      // weight of the BM25TP score
	Context    rank.Context // share of a neighbour's evidence
}

// recommendedTextRanking returns the settings measured best on the
// development sets (rank.Recommended).
func recommendedTextRanking() textRanking {
	p := rank.Recommended()
	return textRanking{Candidates: p.Candidates, Proximity: p.Proximity, Context: p.Context}
}

// rank returns up to k records for the query text, best first, from
// index ix whose records are in conversation order seq; an analyses the
// query's function words. Only records eligible accepts are returned,
// but every indexed record lends its evidence to its neighbours. Callers
// hold whatever lock seq needs (Engine.mu for the engine's sequence).
func (r textRanking) rank(ix *searchindex.Index, an *rank.Analyzer, seq rank.Sequence[memory.ID], text string, k int, eligible func(memory.ID) bool) ([]rank.Scored[memory.ID], error) {
	if k <= 0 {
		return nil, nil
	}
	q := searchindex.Query{Limit: max(k, r.Candidates), Filter: func(id memory.ID, _ searchindex.Attrs) bool { return eligible(id) }}
	for _, t := range an.Analyze(ix.Analyze(text)) {
		q.Terms = append(q.Terms, searchindex.QueryTerm{Term: t.Term, Weight: t.Weight})
	}
	hits, err := ix.Search(q)
	if err != nil {
		return nil, fmt.Errorf("text search: %w", err)
	}
	if len(hits) == 0 {
		return nil, nil
	}
	ids := make([]memory.ID, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	prox, err := ix.Proximity(q, ids)
	if err != nil {
		return nil, fmt.Errorf("text proximity: %w", err)
	}
	cands := make([]rank.Scored[memory.ID], len(hits))
	for i, h := range hits {
		cands[i] = rank.Scored[memory.ID]{Doc: h.ID, Score: h.Score + r.Proximity*prox[i].Score}
	}
	if r.Context != (rank.Context{}) {
		own, err := r.neighbourScores(ix, q, seq, ids)
		if err != nil {
			return nil, err
		}
		cands = rank.SmoothNeighbours(cands, seq, r.Context, func(id memory.ID) float64 { return own[id] })
	}
	out := cands[:0]
	for _, c := range cands {
		if c.Score > 0 && eligible(c.Doc) {
			out = append(out, c)
		}
	}
	// Equal scores fall to the id, as everywhere in recall.
	slices.SortStableFunc(out, func(a, b rank.Scored[memory.ID]) int { return byScoreThenID(a.Score, b.Score, a.Doc, b.Doc) })
	if len(out) > k {
		out = out[:k]
	}
	return out, nil
}

// neighbourScores scores, in one pass over the index, the neighbours of
// the candidates ids that are not candidates themselves: their own
// evidence, which rank.SmoothNeighbours shares with the records next to
// them.
func (r textRanking) neighbourScores(ix *searchindex.Index, q searchindex.Query, seq rank.Sequence[memory.ID], ids []memory.ID) (map[memory.ID]float64, error) {
	var near []memory.ID
	for _, id := range ids {
		for _, side := range [2]func(memory.ID) (memory.ID, bool){seq.Prev, seq.Next} {
			if n, ok := side(id); ok && !slices.Contains(ids, n) && !slices.Contains(near, n) {
				near = append(near, n)
			}
		}
	}
	if len(near) == 0 {
		return nil, nil
	}
	bm25, err := ix.ScoreDocs(q, near)
	if err != nil {
		return nil, fmt.Errorf("score the neighbours: %w", err)
	}
	prox, err := ix.Proximity(q, near)
	if err != nil {
		return nil, fmt.Errorf("score the neighbours' proximity: %w", err)
	}
	own := make(map[memory.ID]float64, len(near))
	for i, id := range near {
		own[id] = bm25[i] + r.Proximity*prox[i].Score
	}
	return own, nil
}
