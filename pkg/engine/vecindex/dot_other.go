//go:build !amd64

package vecindex

// dot is the inner product of a and b[:len(a)], the hot loop of every
// vector scan.
func dot(a, b []float32) float32 { return dotGeneric(a, b) }
