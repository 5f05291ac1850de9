package engine

import (
	"fmt"
	"slices"

	"memsvc.dev/memsvc/pkg/engine/idtable"
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
//     with its neighbours in its conversation (the smoothing of
//     rank.SmoothNeighbours, computed by stage.smooth over the engine's
//     sequence, sequence.go), which brings in the record
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
	q, content, fields, hits, err := r.firstStage(ix, an, text, k, admit)
	if err != nil || len(hits) == 0 {
		return nil, err
	}
	top, rest := r.split(hits)
	st := newStage(len(top))
	for _, h := range top {
		st.add(h.ID, seqPlace{})
	}
	smooth := r.Context != (rank.Context{})
	if smooth {
		// The candidates, then their neighbours that are not candidates:
		// the index scores them all in one call per kind of evidence.
		st.neighbours(placedOf(seq))
	}
	// Proximity is of the text's terms: the field terms of a record sit
	// next to each other in their field whatever the record says.
	textQ, fieldQ := q, q
	textQ.Terms, fieldQ.Terms = content, fields
	bm25, prox, err := ix.ScoreProximity(textQ, st.ids)
	if err != nil {
		return nil, fmt.Errorf("text proximity: %w", err)
	}
	n := len(top)
	cands := make([]stagedScore, len(st.ids), len(st.ids)+len(rest))
	for i, h := range top {
		cands[i] = stagedScore{doc: h.ID, score: h.Score + r.Proximity*prox[i].Score}
	}
	if smooth {
		// Time and speaker evidence stays a record's own: the candidates'
		// comes off now and, like the neighbours', is added back after
		// the smoothing.
		own, err := r.fieldScores(ix, fieldQ, st.ids)
		if err != nil {
			return nil, err
		}
		base := make([]float64, len(st.ids))
		for i := range n {
			base[i] = max(0, cands[i].score-own[i])
		}
		// A neighbour's own text evidence, which the smoothing shares
		// with the records next to it; proximity only where a query
		// term occurs (it is 0 elsewhere).
		for i := n; i < len(st.ids); i++ {
			base[i] = bm25[i]
			if bm25[i] > 0 {
				base[i] += r.Proximity * prox[i].Score
			}
			cands[i] = stagedScore{doc: st.ids[i], neighbour: true}
		}
		st.smooth(base, r.Context)
		for i := range cands {
			cands[i].score = base[i]
			if own[i] > 0 {
				cands[i].score += own[i]
			}
		}
	}
	for _, h := range rest {
		if !st.has(h.ID) {
			cands = append(cands, stagedScore{doc: h.ID, score: h.Score})
		}
	}
	// Equal scores fall to the id, as everywhere in recall.
	slices.SortFunc(cands, func(a, b stagedScore) int { return byScoreThenID(a.score, b.score, a.doc, b.doc) })
	out := make([]rank.Scored[memory.ID], 0, min(k, len(cands)))
	for _, c := range cands {
		if len(out) == k {
			break
		}
		// The first stage's hits passed the filter; neighbours may not.
		if c.score > 0 && (!c.neighbour || eligible(c.doc)) {
			out = append(out, rank.Scored[memory.ID]{Doc: c.doc, Score: c.score})
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

// firstStage runs the first stage of a ranking of text: the query of its
// content terms (those analysed with weight 0 left out) and field terms,
// the index's best max(k, Candidates) admitted hits for it, and the
// query's two parts, which the second stage scores apart.
func (r textRanking) firstStage(ix *searchindex.Index, an *rank.Analyzer, text string, k int, admit func(searchindex.Candidate) bool) (q searchindex.Query, content, fields []searchindex.QueryTerm, hits []searchindex.Hit, err error) {
	for _, t := range an.Analyze(ix.Analyze(text)) {
		// Function words (weight 0) add nothing to any score: leave them
		// out of the index's work (the analyser weighs them when the
		// query has nothing else).
		if t.Weight > 0 {
			content = append(content, searchindex.QueryTerm{Term: t.Term, Weight: t.Weight})
		}
	}
	fields = r.fieldTerms(ix, text, content)
	q = searchindex.Query{Limit: max(k, r.Candidates), Admit: admit}
	q.Terms = append(slices.Clip(content), fields...)
	if hits, err = ix.Search(q); err != nil {
		return q, nil, nil, nil, fmt.Errorf("text search: %w", err)
	}
	return q, content, fields, hits, nil
}

// split divides the first stage's hits into the best Candidates, which
// the second stage sees, and the rest, which keep their first-stage
// score, below the candidates', and follow them.
func (r textRanking) split(hits []searchindex.Hit) (top, rest []searchindex.Hit) {
	if r.Candidates > 0 && len(hits) > r.Candidates {
		return hits[:r.Candidates], hits[r.Candidates:]
	}
	return hits, nil
}

// stagedScore is a document of the second stage's answer and its score;
// neighbour is set for a neighbour of a candidate that the first stage
// did not return (the filter has not seen it).
type stagedScore struct {
	doc       memory.ID
	score     float64
	neighbour bool
}

// stage holds the documents the second stage scores, in order: the n
// first-stage candidates, then the neighbours of the candidates that are
// not candidates, in the order they were reached (each candidate's
// record before, then after). For each it keeps where the conversation
// order found it and which of the documents are its neighbours, so that
// the smoothing looks nothing up in maps.
type stage struct {
	ids        []memory.ID
	at         []seqPlace
	prev, next []int32 // index in ids of the neighbour, -1: none among them
	set        idtable.Table
	n          int
}

func newStage(n int) *stage {
	st := &stage{n: n}
	c := 3 * n
	st.ids = make([]memory.ID, 0, c)
	st.at = make([]seqPlace, 0, c)
	st.set = idtable.New(c)
	return st
}

// add appends document id, found at place at, and returns its index.
func (st *stage) add(id memory.ID, at seqPlace) int {
	i := len(st.ids)
	st.ids = append(st.ids, id)
	st.at = append(st.at, at)
	st.set.Insert(st.ids, i)
	return i
}

// has reports whether id is one of the documents.
func (st *stage) has(id memory.ID) bool { _, ok := st.set.Find(st.ids, id); return ok }

// neighbours appends the neighbours of the candidates in seq that are not
// candidates, and links every document to those of its neighbours that
// are among the documents.
func (st *stage) neighbours(seq placedSequence) {
	st.prev = make([]int32, 0, cap(st.ids))
	st.next = make([]int32, 0, cap(st.ids))
	link := func(nb neighbourOf, at seqPlace, grow bool) int32 {
		if !nb.ok {
			return -1
		}
		j, found := st.set.Find(st.ids, nb.id)
		switch {
		case !found && !grow:
			return -1
		case !found:
			j = st.add(nb.id, at)
		case !st.at[j].ok:
			st.at[j] = at // spares the search when it is looked up
		}
		return int32(j)
	}
	for i := 0; i < len(st.ids); i++ {
		// Candidates bring their neighbours in; a neighbour's own
		// neighbours count only if they are among the documents already
		// (two steps from every candidate, a record lends nothing).
		prev, next, prevAt, nextAt := seq.neighboursAt(st.ids[i], st.at[i])
		grow := i < st.n
		st.prev = append(st.prev, link(prev, prevAt, grow))
		st.next = append(st.next, link(next, nextAt, grow))
	}
}

// smooth replaces base, each document's own score, with the score it has
// once it shares in its neighbours' evidence:
//
//	s'(d) = s(d) + Before · s(prev(d)) + After · s(next(d))
//
// with 0 for a neighbour outside the documents: what
// rank.SmoothNeighbours computes, bit for bit.
func (st *stage) smooth(base []float64, c rank.Context) {
	out := make([]float64, len(base))
	for i := range base {
		s := base[i]
		if j := st.prev[i]; j >= 0 && c.Before != 0 {
			s += c.Before * base[j]
		}
		if j := st.next[i]; j >= 0 && c.After != 0 {
			s += c.After * base[j]
		}
		out[i] = s
	}
	copy(base, out)
}

// placedSequence is a conversation order that can start a lookup from
// where an earlier one found the record (conversation, whose lookups
// otherwise cost a map access and a search of the session's list).
type placedSequence interface {
	neighboursAt(id memory.ID, at seqPlace) (prev, next neighbourOf, prevAt, nextAt seqPlace)
}

// neighboursAt is state.neighboursAt.
func (c conversation) neighboursAt(id memory.ID, at seqPlace) (prev, next neighbourOf, prevAt, nextAt seqPlace) {
	return c.s.neighboursAt(id, at)
}

// placedOf returns seq as a placedSequence: itself when it is one, else a
// wrapper that ignores places.
func placedOf(seq rank.Sequence[memory.ID]) placedSequence {
	if p, ok := seq.(placedSequence); ok {
		return p
	}
	return placeless{seq}
}

type placeless struct{ seq rank.Sequence[memory.ID] }

func (p placeless) neighboursAt(id memory.ID, _ seqPlace) (prev, next neighbourOf, _, _ seqPlace) {
	prev.id, prev.ok = p.seq.Prev(id)
	next.id, next.ok = p.seq.Next(id)
	return prev, next, seqPlace{}, seqPlace{}
}

// neighbourOf is a neighbour in a conversation, if there is one.
type neighbourOf struct {
	id memory.ID
	ok bool
}
