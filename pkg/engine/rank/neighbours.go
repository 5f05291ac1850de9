package rank

import "slices"

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
// those given; a neighbour's own score comes from score (nil: 0). The
// result is ordered by s' descending; ties keep the order of cands,
// then of the neighbours added in the order they were reached.
func SmoothNeighbours[K comparable](cands []Scored[K], seq Sequence[K], c Context, score func(K) float64) []Scored[K] {
	base := make(map[K]float64, 3*len(cands))
	order := make([]K, 0, 3*len(cands))
	for _, x := range cands {
		if _, dup := base[x.Doc]; !dup {
			base[x.Doc] = x.Score
			order = append(order, x.Doc)
		}
	}
	known := len(order)
	get := func(d K) float64 {
		if s, ok := base[d]; ok {
			return s
		}
		s := 0.0
		if score != nil {
			s = score(d)
		}
		base[d] = s
		return s
	}
	inSet := make(map[K]struct{}, 3*len(cands))
	for _, d := range order {
		inSet[d] = struct{}{}
	}
	for _, d := range order[:known] {
		for _, nb := range [2]func(K) (K, bool){seq.Prev, seq.Next} {
			if n, ok := nb(d); ok {
				if _, dup := inSet[n]; !dup {
					inSet[n] = struct{}{}
					order = append(order, n)
				}
			}
		}
	}
	out := make([]Scored[K], len(order))
	for i, d := range order {
		s := get(d)
		if p, ok := seq.Prev(d); ok && c.Before != 0 {
			s += c.Before * get(p)
		}
		if n, ok := seq.Next(d); ok && c.After != 0 {
			s += c.After * get(n)
		}
		out[i] = Scored[K]{Doc: d, Score: s}
	}
	slices.SortStableFunc(out, func(a, b Scored[K]) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	return out
}
