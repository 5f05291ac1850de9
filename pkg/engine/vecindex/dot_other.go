//go:build !amd64

package vecindex

// dot is the inner product of a and b[:len(a)], the hot loop of every
// vector scan.
func dot(a, b []float32) float32 { return dotGeneric(a, b) }

// dotsI8 sets out[r] to the dot product of q with row r of codes (rows
// of len(q) codes), the first pass of every vector scan (quant.go).
func dotsI8(q []int16, codes []int8, out []int32) { dotsI8Generic(q, codes, out) }
