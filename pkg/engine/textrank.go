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
//     (rank.Analyzer); its dates become time-field terms
//     (rank.QueryTimeTerms) and its content terms speaker-field terms.
//  2. First stage: the index's top Candidates by weighted BM25F over the
//     text, time and speaker fields (index.go).
//  3. Second stage: each candidate's text score plus Proximity times the
//     BM25TP term-pair score (searchindex.Index.ScoreProximity), then shared
//     with its neighbours in its conversation (rank.SmoothNeighbours over
//     the engine's sequence, sequence.go), which brings in the record
//     after the turn that echoes the question; last, each record's own
//     time and speaker evidence, which is not shared (neighbours in one
//     session have the same time, and a name says nothing about the
//     other speaker's turn).
//
// Everything is a function of the index and the sequence: no map order,
// time or randomness, and ties fall to the record id.
type textRanking struct {
	Candidates int          // first-stage hits the second stage sees
	Proximity  float64      // weight of the BM25TP score
	Context    rank.Context // share of a neighbour's evidence
	// Time and Speaker weigh a match of the query's dates in the
	// record's time field and of its content terms in the record's
	// speaker field; 0 leaves the field out of the query.
	Time, Speaker float64
}

// recommendedTextRanking returns the settings measured best on the
// development sets (rank.Recommended), with the second stage over the
// best 15 first-stage hits rather than 30: through the engine's recall
// both sets score the same hit@5 and MRR with 15, 20 and 30 candidates
// (TestRecallAblation's loop), and the second stage is most of the
// stage's cost.
func recommendedTextRanking() textRanking {
	p := rank.Recommended()
	return textRanking{Candidates: secondStageCandidates, Proximity: p.Proximity, Context: p.Context, Time: p.Time, Speaker: p.Speaker}
}

// secondStageCandidates is how many first-stage hits recall's second
// stage reranks.
const secondStageCandidates = 15

// rank returns up to k records for the query text, best first, from
// index ix whose records are in conversation order seq; an analyses the
// query's function words. Only records eligible accepts are returned,
// but every indexed record lends its evidence to its neighbours. Callers
// hold whatever lock seq needs (Engine.mu for the engine's sequence).
func (r textRanking) rank(ix *searchindex.Index, an *rank.Analyzer, seq rank.Sequence[memory.ID], text string, k int, eligible func(memory.ID) bool) ([]rank.Scored[memory.ID], error) {
	return r.rankAdmitted(ix, an, seq, text, k, eligible, func(c searchindex.Candidate) bool { return eligible(c.ID()) })
}

// rankAdmitted is rank with admit, the same decision as eligible, as the
// index's filter: one that may decide from the document's mark
// (searchindex.Query.Admit, marks.go).
func (r textRanking) rankAdmitted(ix *searchindex.Index, an *rank.Analyzer, seq rank.Sequence[memory.ID], text string, k int, eligible func(memory.ID) bool, admit func(searchindex.Candidate) bool) ([]rank.Scored[memory.ID], error) {
	if k <= 0 {
		return nil, nil
	}
	var content []searchindex.QueryTerm
	for _, t := range an.Analyze(ix.Analyze(text)) {
		// Function words (weight 0) add nothing to any score: leave them
		// out of the index's work (the analyser weighs them when the
		// query has nothing else).
		if t.Weight > 0 {
			content = append(content, searchindex.QueryTerm{Term: t.Term, Weight: t.Weight})
		}
	}
	fields := r.fieldTerms(ix, text, content)
	q := searchindex.Query{Limit: max(k, r.Candidates), Admit: admit}
	q.Terms = append(slices.Clip(content), fields...)
	hits, err := ix.Search(q)
	if err != nil {
		return nil, fmt.Errorf("text search: %w", err)
	}
	if len(hits) == 0 {
		return nil, nil
	}
	// The second stage sees the best Candidates hits; the rest keep their
	// first-stage score, below the candidates', and follow them.
	top, rest := hits, []searchindex.Hit(nil)
	if r.Candidates > 0 && len(hits) > r.Candidates {
		top, rest = hits[:r.Candidates], hits[r.Candidates:]
	}
	// The candidates, then their neighbours that are not candidates:
	// the index scores them all in one call per kind of evidence.
	docs := make([]memory.ID, len(top), 3*len(top))
	for i, h := range top {
		docs[i] = h.ID
	}
	smooth := r.Context != (rank.Context{})
	if smooth {
		if c, ok := seq.(conversation); ok {
			seq = newSeqMemo(c.s)
		}
		docs = appendNeighbours(docs, seq, len(top))
	}
	// Proximity is of the text's terms: the field terms of a record sit
	// next to each other in their field whatever the record says.
	textQ, fieldQ := q, q
	textQ.Terms, fieldQ.Terms = content, fields
	bm25, prox, err := ix.ScoreProximity(textQ, docs)
	if err != nil {
		return nil, fmt.Errorf("text proximity: %w", err)
	}
	cands := make([]rank.Scored[memory.ID], len(top), len(hits))
	for i, h := range top {
		cands[i] = rank.Scored[memory.ID]{Doc: h.ID, Score: h.Score + r.Proximity*prox[i].Score}
	}
	var near map[memory.ID]float64 // the neighbours that are not hits: their text evidence
	if smooth {
		// Time and speaker evidence stays a record's own: the candidates'
		// comes off now and, like the neighbours', is added back after
		// the smoothing.
		own, err := r.fieldScores(ix, fieldQ, docs)
		if err != nil {
			return nil, err
		}
		ownOf := make(map[memory.ID]float64, len(docs))
		for i, id := range docs {
			if own[i] > 0 {
				ownOf[id] = own[i]
			}
		}
		for i := range cands {
			cands[i].Score = max(0, cands[i].Score-own[i])
		}
		// A neighbour's own text evidence, which rank.SmoothNeighbours
		// shares with the records next to it; proximity only where a
		// query term occurs (it is 0 elsewhere).
		near = make(map[memory.ID]float64, len(docs)-len(top))
		for i := len(top); i < len(docs); i++ {
			near[docs[i]] = bm25[i]
			if bm25[i] > 0 {
				near[docs[i]] += r.Proximity * prox[i].Score
			}
		}
		cands = rank.SmoothNeighbours(cands, seq, r.Context, func(id memory.ID) float64 { return near[id] })
		for i := range cands {
			cands[i].Score += ownOf[cands[i].Doc]
		}
	}
	if len(rest) > 0 {
		seen := make(map[memory.ID]bool, len(cands))
		for _, c := range cands {
			seen[c.Doc] = true
		}
		for _, h := range rest {
			if !seen[h.ID] {
				cands = append(cands, rank.Scored[memory.ID]{Doc: h.ID, Score: h.Score})
			}
		}
	}
	// Equal scores fall to the id, as everywhere in recall.
	slices.SortFunc(cands, func(a, b rank.Scored[memory.ID]) int { return byScoreThenID(a.Score, b.Score, a.Doc, b.Doc) })
	out := cands[:0]
	for _, c := range cands {
		if len(out) == k {
			break
		}
		// The first stage's hits passed the filter; neighbours may not.
		if _, nb := near[c.Doc]; c.Score > 0 && (!nb || eligible(c.Doc)) {
			out = append(out, c)
		}
	}
	return out, nil
}

// fieldTerms are the query's terms in the time and speaker fields that
// the index knows: the time terms of the dates text names (widened: a
// day also asks for its month, a month for its year) and the speaker
// term of each content term, with the weights of r.
func (r textRanking) fieldTerms(ix *searchindex.Index, text string, content []searchindex.QueryTerm) []searchindex.QueryTerm {
	var out []searchindex.QueryTerm
	if r.Time > 0 {
		for _, t := range rank.QueryTimeTerms(text, true) {
			out = append(out, searchindex.QueryTerm{Term: timePrefix + t, Weight: r.Time})
		}
	}
	if r.Speaker > 0 {
		for _, t := range content {
			out = append(out, searchindex.QueryTerm{Term: speakerPrefix + t.Term, Weight: r.Speaker * t.Weight})
		}
	}
	// Unknown terms would cost the second stage a pass for nothing.
	return slices.DeleteFunc(out, func(t searchindex.QueryTerm) bool { return ix.DocFreq(t.Term) == 0 })
}

// fieldScores returns the time and speaker evidence of each of ids for
// the field terms of fieldQ, nil when there are none.
func (r textRanking) fieldScores(ix *searchindex.Index, fieldQ searchindex.Query, ids []memory.ID) ([]float64, error) {
	if len(fieldQ.Terms) == 0 || len(ids) == 0 {
		return make([]float64, len(ids)), nil
	}
	s, err := ix.ScoreDocs(fieldQ, ids)
	if err != nil {
		return nil, fmt.Errorf("score the time and speaker fields: %w", err)
	}
	return s, nil
}

// appendNeighbours appends to docs, whose first n are the candidates,
// the records before and after each candidate in seq that are neither
// candidates nor appended already, in that order.
func appendNeighbours(docs []memory.ID, seq rank.Sequence[memory.ID], n int) []memory.ID {
	for i := range n {
		for _, side := range [2]func(memory.ID) (memory.ID, bool){seq.Prev, seq.Next} {
			if nb, ok := side(docs[i]); ok && !slices.Contains(docs, nb) {
				docs = append(docs, nb)
			}
		}
	}
	return docs
}

// seqMemo remembers the neighbours a ranking looked up in the engine's
// conversation order: each record's are asked for several times (once to
// score it, once per record next to it), and both are found with one
// lookup of its place. A neighbour found in its session's list is looked
// up in turn from the place it was found at, without searching the list.
type seqMemo struct {
	s    *state
	memo map[memory.ID]seqLook
}

// seqLook is what seqMemo knows of a record: where it sits, when it was
// found as a neighbour, and its neighbours once looked up.
type seqLook struct {
	at   seqPlace
	n    [2]neighbourOf
	done bool
}

type neighbourOf struct {
	id memory.ID
	ok bool
}

func newSeqMemo(s *state) *seqMemo {
	return &seqMemo{s: s, memo: make(map[memory.ID]seqLook, 128)}
}

// Prev returns the record before doc.
func (m *seqMemo) Prev(doc memory.ID) (memory.ID, bool) { n := m.look(doc)[0]; return n.id, n.ok }

// Next returns the record after doc.
func (m *seqMemo) Next(doc memory.ID) (memory.ID, bool) { n := m.look(doc)[1]; return n.id, n.ok }

func (m *seqMemo) look(doc memory.ID) [2]neighbourOf {
	l := m.memo[doc]
	if l.done {
		return l.n
	}
	prev, next, prevAt, nextAt := m.s.neighboursAt(doc, l.at)
	m.memo[doc] = seqLook{at: l.at, n: [2]neighbourOf{prev, next}, done: true}
	m.place(prev, prevAt)
	m.place(next, nextAt)
	return [2]neighbourOf{prev, next}
}

// place notes where neighbour n sits, if it was found in a list and has
// not been looked up.
func (m *seqMemo) place(n neighbourOf, at seqPlace) {
	if !n.ok || !at.ok {
		return
	}
	if _, known := m.memo[n.id]; !known {
		m.memo[n.id] = seqLook{at: at}
	}
}
