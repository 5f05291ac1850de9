package rank

import (
	"slices"
)

// Feedback configures pseudo-relevance feedback in the manner of RM3
// (Abdul-Jaleel et al., "UMass at TREC 2004: Novelty and HARD", the
// relevance model of Lavrenko and Croft, SIGIR 2001, interpolated with the
// original query): the best first-stage documents are assumed relevant,
// their distinctive terms are added to the query, and the search runs
// again.
type Feedback struct {
	Docs   int     // feedback documents: the best Docs of the first stage
	Terms  int     // expansion terms kept
	Weight float64 // λ: share of the expanded query that the new terms get
	// IDF weights each candidate term's relevance-model probability by
	// its inverse document frequency, so words common to every record
	// ("yeah", "good") are not picked.
	IDF bool
}

// Expand returns q with expansion terms. docs are the term sequences of
// the feedback documents, best first, and scores their first-stage
// scores (> 0); idf gives a term's inverse document frequency; terms for
// which skip is true (function terms) are never added. The relevance
// model is P(w|R) ∝ Σ_D P(w|D) · P(D|Q) with P(w|D) = tf/|D| and P(D|Q)
// the document's share of the feedback scores. With W the sum of q's
// weights, q's terms keep (1 − λ) of their weight and the best Terms
// terms of the model share λ · W in proportion to P(w|R) (a query term
// among them gets its share on top of its own weight, unless its weight
// is 0), so the expanded query weighs as much as q. Ties between terms
// break by term: the expansion is deterministic.
func (f Feedback) Expand(q []QueryTerm, docs [][]string, scores []float64, idf func(string) float64, skip func(string) bool) []QueryTerm {
	n := min(f.Docs, len(docs), len(scores))
	if n == 0 || f.Terms <= 0 || f.Weight <= 0 {
		return q
	}
	var total float64
	for _, s := range scores[:n] {
		total += s
	}
	if total <= 0 {
		return q
	}
	rel := map[string]float64{}
	for i, d := range docs[:n] {
		if len(d) == 0 {
			continue
		}
		pd := scores[i] / total / float64(len(d))
		for _, t := range d {
			rel[t] += pd
		}
	}
	type cand struct {
		term string
		p    float64
	}
	cs := make([]cand, 0, len(rel))
	for t, p := range rel {
		if skip != nil && skip(t) {
			continue
		}
		if f.IDF {
			p *= idf(t)
		}
		if p > 0 {
			cs = append(cs, cand{t, p})
		}
	}
	slices.SortFunc(cs, func(a, b cand) int {
		switch {
		case a.p > b.p:
			return -1
		case a.p < b.p:
			return 1
		}
		if a.term < b.term {
			return -1
		}
		if a.term > b.term {
			return 1
		}
		return 0
	})
	cs = cs[:min(len(cs), f.Terms)]
	var sumP, sumW float64
	for _, c := range cs {
		sumP += c.p
	}
	for _, t := range q {
		sumW += t.Weight
	}
	if sumP <= 0 || sumW <= 0 {
		return q
	}
	out := make([]QueryTerm, len(q), len(q)+len(cs))
	for i, t := range q {
		out[i] = QueryTerm{Term: t.Term, Weight: (1 - f.Weight) * t.Weight}
	}
	for _, c := range cs {
		w := f.Weight * sumW * c.p / sumP
		if i := slices.IndexFunc(out, func(t QueryTerm) bool { return t.Term == c.term }); i >= 0 {
			if out[i].Weight > 0 {
				out[i].Weight += w
			}
			continue
		}
		out = append(out, QueryTerm{Term: c.term, Weight: w})
	}
	return out
}
