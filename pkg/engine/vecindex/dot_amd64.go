package vecindex

import "golang.org/x/sys/cpu"

// haveFMA: the processor has AVX2 and FMA, so dot can use dotFMA. It is a
// property of the machine, fixed for the life of the process.
var haveFMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// dot is the inner product of a and b[:len(a)], the hot loop of every
// vector scan. The scalar loop reads about 4 GB/s per core; with AVX2 the
// scan is bound by memory bandwidth instead.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	if haveFMA {
		return dotFMA(a, b)
	}
	return dotGeneric(a, b)
}

// dotFMA sums eight-lane fused multiply-adds in four accumulators, then
// the tail one element at a time. len(b) must be at least len(a).
//
//go:noescape
func dotFMA(a, b []float32) float32

// boundsI8 sets out[r] to the bound on the exact score of row r of codes
// (rows of len(q.codes) codes, their rowQuant in cols), the first pass of
// every vector scan (quant.go): with AVX2 eight rows at a time, the rows
// that do not fill a group of eight in plain Go. Both compute the same
// float32 values. len(q.codes) must be a multiple of 16.
func boundsI8(q *quantQuery, codes []int8, cols quantCols, out []float32) {
	stride := len(q.codes)
	n := len(out)
	if stride == 0 || stride%16 != 0 || len(codes) < n*stride || len(cols.scale) < n || len(cols.err) < n || len(cols.norm) < n {
		panic("vecindex: boundsI8: codes do not fit the query")
	}
	g := 0
	if haveFMA {
		g = n &^ 7
		if g > 0 {
			boundsI8AVX2(q.codes, codes, cols.scale, cols.err, cols.norm, &q.params, out[:g])
		}
	}
	boundsI8Generic(q, codes[g*stride:], cols.slice(g, n), out[g:])
}

// boundsI8AVX2 is boundsI8 for a multiple of eight rows, with AVX2: the
// codes of a row widened to int16, multiplied pairwise with the query's
// and summed to int32 lanes (VPMADDWD), eight rows in eight
// accumulators, whose lanes are then summed into one vector of eight
// dot products, turned into bounds as boundOf does.
//
//go:noescape
func boundsI8AVX2(q []int16, codes []int8, scale, err, norm []float32, p *boundParams, out []float32)
