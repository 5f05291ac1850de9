package rank

import "math"

// BM25 holds the parameters of Okapi BM25 (Robertson and Zaragoza, "The
// Probabilistic Relevance Framework: BM25 and Beyond", 2009): K1 bounds
// how much repeating a term in a document counts, B how much a long
// document is discounted.
type BM25 struct {
	K1, B float64
}

// Okapi returns the textbook setting, k1 = 1.2 and b = 0.75, which the
// engine's index uses today.
func Okapi() BM25 { return BM25{K1: 1.2, B: 0.75} }

// IDF is the BM25 inverse document frequency of a term found in df of n
// documents: ln(1 + (n − df + 0.5)/(df + 0.5)). It is positive for every
// df ≤ n and 0 for df = 0 only when n = 0.
func IDF(n, df int) float64 {
	if df > n {
		n = df
	}
	return math.Log(1 + (float64(n-df)+0.5)/(float64(df)+0.5))
}

// TermScore is one term's BM25 contribution: idf · tf · (k1 + 1) /
// (tf + k1 · (1 − b + b · dl/avgdl)). It is 0 when tf is 0.
func (p BM25) TermScore(idf float64, tf, dl int, avgdl float64) float64 {
	if tf <= 0 {
		return 0
	}
	f := float64(tf)
	return idf * f * (p.K1 + 1) / (f + p.norm(dl, avgdl))
}

// norm is k1 · (1 − b + b · dl/avgdl), the K of Robertson's formula.
func (p BM25) norm(dl int, avgdl float64) float64 {
	if avgdl <= 0 {
		avgdl = 1
	}
	return p.K1 * (1 - p.B + p.B*float64(dl)/avgdl)
}
