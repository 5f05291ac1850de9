package vecindex

import "golang.org/x/sys/cpu"

// haveFMA: the processor has AVX2 and FMA, so dot can use dotFMA. It is a
// property of the machine, fixed for the life of the process.
var haveFMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// haveVNNI: the processor also has AVX-512 VNNI on 256-bit vectors, so
// boundsI8 can use boundsI8VNNI. Fixed for the life of the process.
var haveVNNI = haveFMA && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VNNI

// dot is the inner product of a and b[:len(a)]: the exact score of the
// rows a search's bounds leave (about k of them), of Rank's candidates
// and of Dot. The scalar loop reads about 4 GB/s per core; with AVX2 it
// is bound by memory bandwidth instead.
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

// prepareQuery readies q for boundsI8: the VNNI kernel reads the codes
// split into bytes.
func prepareQuery(q *quantQuery) {
	if haveVNNI {
		q.splitBytes()
	}
}

// boundsI8 sets out[r] to the bound on the exact score of row r of codes
// (rows of len(q.codes) codes, their rowQuant in cols), the first pass of
// every vector scan (quant.go): with AVX-512 VNNI or AVX2 eight rows at a
// time, the rows that do not fill a group of eight in plain Go. All three
// compute the same float32 values. len(q.codes) must be a multiple of 16,
// and q prepared by prepareQuery.
func boundsI8(q *quantQuery, codes []int8, cols quantCols, out []float32) {
	stride := len(q.codes)
	n := len(out)
	if stride == 0 || stride%16 != 0 || len(codes) < n*stride ||
		len(cols.scale) < n || len(cols.err) < n || len(cols.norm) < n || len(cols.sum) < n {
		panic("vecindex: boundsI8: codes do not fit the query")
	}
	g := 0
	switch {
	case haveVNNI:
		if len(q.bytes) != 2*stride {
			panic("vecindex: boundsI8: query not prepared")
		}
		g = n &^ 7
		if g > 0 {
			boundsI8VNNI(q.bytes, codes, cols.scale, cols.err, cols.norm, cols.sum, &q.params, out[:g])
		}
	case haveFMA:
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

// boundsI8VNNI is boundsI8AVX2 with AVX-512 VNNI (VPDPBUSD): no widening
// of the codes, one instruction per 32 codes and half of the query. q is
// quantQuery.bytes, sum the sums of the rows' codes.
//
//go:noescape
func boundsI8VNNI(q []uint8, codes []int8, scale, err, norm []float32, sum []int32, p *boundParams, out []float32)
