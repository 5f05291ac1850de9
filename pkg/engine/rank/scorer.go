package rank

import "slices"

// Scorer scores documents, given as term sequences, against one analysed
// query: BM25 from the sequence itself (for records the first stage did
// not score, such as a candidate's neighbours) and term-pair proximity.
// Build one per query with NewScorer; it is not safe for concurrent use.
type Scorer struct {
	p     BM25
	avgdl float64
	terms []string       // weighted query terms; w[i] is terms[i]'s
	index map[string]int // term -> position, for long queries only
	w     []float64      // weight · idf of each query term
	// Buffers reused across documents.
	tf     []int
	recent []int // query-term index at the last positions, -1 for none
	pairs  []float64
}

// NewScorer prepares the scoring of query q, whose terms have the inverse
// document frequencies idf (idf[i] for q[i]), over documents whose mean
// length is avgdl. Terms of weight 0 take no part.
func NewScorer(p BM25, q []QueryTerm, idf []float64, avgdl float64) *Scorer {
	s := &Scorer{p: p, avgdl: avgdl}
	for i, t := range q {
		if t.Weight <= 0 || slices.Contains(s.terms, t.Term) {
			continue
		}
		s.terms = append(s.terms, t.Term)
		s.w = append(s.w, t.Weight*idf[i])
	}
	if len(s.terms) > linearTerms {
		s.index = make(map[string]int, len(s.terms))
		for i, t := range s.terms {
			s.index[t] = i
		}
	}
	s.tf = make([]int, len(s.w))
	s.pairs = make([]float64, len(s.w)*len(s.w))
	return s
}

// linearTerms is the longest query whose terms are looked up by a linear
// scan, which beats hashing for a handful of strings.
const linearTerms = 8

// lookup returns the position of a query term, or -1.
func (s *Scorer) lookup(t string) int {
	if s.index != nil {
		if i, ok := s.index[t]; ok {
			return i
		}
		return -1
	}
	for i, q := range s.terms {
		if q == t {
			return i
		}
	}
	return -1
}

// BM25 is the weighted BM25 score of the document whose terms, in order
// with repeats, are doc: Σ weight · TermScore over the query's terms.
func (s *Scorer) BM25(doc []string) float64 {
	clear(s.tf)
	for _, t := range doc {
		if i := s.lookup(t); i >= 0 {
			s.tf[i]++
		}
	}
	var sum float64
	for i, n := range s.tf {
		sum += s.p.TermScore(s.w[i], n, len(doc), s.avgdl)
	}
	return sum
}

// Proximity is the term-pair proximity score of BM25TP (Rasolofo and
// Savoy, "Term Proximity Scoring for Keyword-Based Retrieval Systems",
// ECIR 2003): every occurrence of two different query terms at most
// window positions apart adds 1/d² to the pair's proximity frequency tpi
// (d is their distance), and each pair contributes
// min(w_a, w_b) · (k1 + 1) · tpi / (K + tpi), with the document's BM25
// length normalisation K, exactly as a term's frequency does in BM25.
// Added to the BM25 score, it ranks a record where the query's words
// stand together above one where they are scattered. The cost is
// O(len(doc) · window).
func (s *Scorer) Proximity(doc []string, window int) float64 {
	n := len(s.w)
	if n < 2 || window < 1 {
		return 0
	}
	clear(s.pairs)
	if cap(s.recent) < window {
		s.recent = make([]int, window)
	}
	recent := s.recent[:window]
	for i := range recent {
		recent[i] = -1
	}
	for pos, t := range doc {
		cur := s.lookup(t)
		if cur >= 0 {
			for d := 1; d <= window && d <= pos; d++ {
				other := recent[(pos-d)%window]
				if other < 0 || other == cur {
					continue
				}
				a, b := min(cur, other), max(cur, other)
				s.pairs[a*n+b] += 1 / float64(d*d)
			}
		}
		recent[pos%window] = cur
	}
	k := s.p.norm(len(doc), s.avgdl)
	var sum float64
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			tpi := s.pairs[a*n+b]
			if tpi > 0 {
				sum += min(s.w[a], s.w[b]) * (s.p.K1 + 1) * tpi / (k + tpi)
			}
		}
	}
	return sum
}
