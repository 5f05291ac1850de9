package rank

import (
	"math"
	"slices"
)

// Scored is a document and its score.
type Scored[K comparable] struct {
	Doc   K
	Score float64
}

// Sequence tells where a document stands in its conversation: the
// records stored before and after it in one batch or one session.
type Sequence[K comparable] interface {
	// Prev and Next return the neighbour of doc, if it has one.
	Prev(doc K) (K, bool)
	Next(doc K) (K, bool)
}

// Context is how much of a neighbour's score a record receives:
// Before of the score of the record just before it, After of the one just
// after it.
type Context struct {
	Before, After float64
}

// SmoothNeighbours lets a record share in the evidence of its neighbours,
// because in a conversation the turn that answers a question usually
// follows the turn that repeats its words: with s the first-stage score,
//
//	s'(d) = s(d) + Before · s(prev(d)) + After · s(next(d))
//
// over the candidates and their neighbours (so an answer that shares no
// word with the question can enter). This is score propagation over the
// sequence graph, a one-step form of the passage and context smoothing of
// conversational and passage retrieval. The scores of candidates are
// those given; a neighbour's own score comes from score (nil: 0), called
// at most once per neighbour; a document two steps from every candidate
// lends nothing (measured: looking those up too changed no ranking for
// the better and doubles the cost). The result is ordered by s'
// descending; ties keep the order of cands, then of the neighbours in
// the order they were reached.
func SmoothNeighbours[K comparable](cands []Scored[K], seq Sequence[K], c Context, score func(K) float64) []Scored[K] {
	// out holds every document in order of appearance; at maps a document
	// to its place; base[i] is out[i]'s own score, NaN until known.
	out := make([]Scored[K], 0, 3*len(cands))
	base := make([]float64, 0, 3*len(cands))
	at := make(map[K]int, 3*len(cands))
	add := func(d K, s float64) int {
		if i, ok := at[d]; ok {
			return i
		}
		at[d] = len(out)
		out = append(out, Scored[K]{Doc: d})
		base = append(base, s)
		return len(out) - 1
	}
	for _, x := range cands {
		add(x.Doc, x.Score)
	}
	known := len(out)
	for i := range known {
		d := out[i].Doc
		if p, ok := seq.Prev(d); ok {
			add(p, math.NaN())
		}
		if n, ok := seq.Next(d); ok {
			add(n, math.NaN())
		}
	}
	get := func(d K) float64 {
		i, ok := at[d]
		if !ok {
			return 0 // two steps from every candidate
		}
		if math.IsNaN(base[i]) {
			base[i] = 0
			if score != nil {
				base[i] = score(d)
			}
		}
		return base[i]
	}
	for i := range out {
		d := out[i].Doc
		s := get(d)
		if p, ok := seq.Prev(d); ok && c.Before != 0 {
			s += c.Before * get(p)
		}
		if nx, ok := seq.Next(d); ok && c.After != 0 {
			s += c.After * get(nx)
		}
		out[i].Score = s
	}
	sortScored(out)
	return out
}

// sortScored orders s by score, best first, keeping the order of equal
// scores.
func sortScored[K comparable](s []Scored[K]) {
	slices.SortStableFunc(s, func(a, b Scored[K]) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
}
