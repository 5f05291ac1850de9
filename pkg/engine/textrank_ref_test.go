package engine

import (
	"fmt"
	"slices"

	"memsvc.dev/memsvc/pkg/engine/rank"
	"memsvc.dev/memsvc/pkg/engine/searchindex"
	"memsvc.dev/memsvc/pkg/memory"
)

// rankAdmittedReference is rankAdmitted as it was before the second
// stage kept its documents in slices (the maps, rank.SmoothNeighbours and
// the memo below): what TestSecondStageMatchesReference compares with.
// The first stage (textRanking.firstStage) and the choice of the
// candidates among its hits (textRanking.split) are shared, as they did
// not change.
func (r textRanking) rankAdmittedReference(ix *searchindex.Index, an *rank.Analyzer, seq rank.Sequence[memory.ID], text string, k int, eligible func(memory.ID) bool, admit func(searchindex.Candidate) bool) ([]rank.Scored[memory.ID], error) {
	if k <= 0 {
		return nil, nil
	}
	q, content, fields, hits, err := r.firstStage(ix, an, text, k, admit)
	if err != nil || len(hits) == 0 {
		return nil, err
	}
	top, rest := r.split(hits)
	// The candidates, then their neighbours that are not candidates:
	// the index scores them all in one call per kind of evidence.
	docs := make([]memory.ID, len(top), 3*len(top))
	for i, h := range top {
		docs[i] = h.ID
	}
	smooth := r.Context != (rank.Context{})
	if smooth {
		if c, ok := seq.(conversation); ok {
			seq = newRefSeqMemo(c.s)
		}
		docs = refAppendNeighbours(docs, seq, len(top))
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

// refAppendNeighbours appends to docs, whose first n are the candidates,
// the records before and after each candidate in seq that are neither
// candidates nor appended already, in that order.
func refAppendNeighbours(docs []memory.ID, seq rank.Sequence[memory.ID], n int) []memory.ID {
	for i := range n {
		for _, side := range [2]func(memory.ID) (memory.ID, bool){seq.Prev, seq.Next} {
			if nb, ok := side(docs[i]); ok && !slices.Contains(docs, nb) {
				docs = append(docs, nb)
			}
		}
	}
	return docs
}

// refSeqMemo remembers the neighbours a ranking looked up in the engine's
// conversation order: each record's are asked for several times (once to
// score it, once per record next to it), and both are found with one
// lookup of its place. A neighbour found in its session's list is looked
// up in turn from the place it was found at, without searching the list.
type refSeqMemo struct {
	s    *state
	memo map[memory.ID]refSeqLook
}

// refSeqLook is what refSeqMemo knows of a record: where it sits, when it was
// found as a neighbour, and its neighbours once looked up.
type refSeqLook struct {
	at   seqPlace
	n    [2]neighbourOf
	done bool
}

func newRefSeqMemo(s *state) *refSeqMemo {
	return &refSeqMemo{s: s, memo: make(map[memory.ID]refSeqLook, 128)}
}

// Prev returns the record before doc.
func (m *refSeqMemo) Prev(doc memory.ID) (memory.ID, bool) { n := m.look(doc)[0]; return n.id, n.ok }

// Next returns the record after doc.
func (m *refSeqMemo) Next(doc memory.ID) (memory.ID, bool) { n := m.look(doc)[1]; return n.id, n.ok }

func (m *refSeqMemo) look(doc memory.ID) [2]neighbourOf {
	l := m.memo[doc]
	if l.done {
		return l.n
	}
	prev, next, prevAt, nextAt := m.s.neighboursAt(doc, l.at)
	m.memo[doc] = refSeqLook{at: l.at, n: [2]neighbourOf{prev, next}, done: true}
	m.place(prev, prevAt)
	m.place(next, nextAt)
	return [2]neighbourOf{prev, next}
}

// place notes where neighbour n sits, if it was found in a list and has
// not been looked up.
func (m *refSeqMemo) place(n neighbourOf, at seqPlace) {
	if !n.ok || !at.ok {
		return
	}
	if _, known := m.memo[n.id]; !known {
		m.memo[n.id] = refSeqLook{at: at}
	}
}

// hiddenPlaces is a conversation without its places: the ranking must
// rank the same through a plain rank.Sequence.
type hiddenPlaces struct{ c conversation }

func (h hiddenPlaces) Prev(doc memory.ID) (memory.ID, bool) { return h.c.Prev(doc) }
func (h hiddenPlaces) Next(doc memory.ID) (memory.ID, bool) { return h.c.Next(doc) }
