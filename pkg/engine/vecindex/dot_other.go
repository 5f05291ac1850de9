//go:build !amd64

package vecindex

// dot is the inner product of a and b[:len(a)]: the exact score of the
// rows a search's bounds leave, of Rank's candidates and of Dot.
func dot(a, b []float32) float32 { return dotGeneric(a, b) }

// prepareQuery readies q for boundsI8: nothing to do without the VNNI
// kernel.
func prepareQuery(*quantQuery) {}

// boundsI8 sets out[r] to the bound on the exact score of row r of codes
// (rows of len(q.codes) codes, their rowQuant in cols), the first pass of
// every vector scan (quant.go).
func boundsI8(q *quantQuery, codes []int8, cols quantCols, out []float32) {
	boundsI8Generic(q, codes, cols, out)
}
