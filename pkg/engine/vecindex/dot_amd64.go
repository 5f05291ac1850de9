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

// dotsI8 sets out[r] to the dot product of q with row r of codes (rows
// of len(q) codes), the first pass of every vector scan (quant.go).
// len(q) must be a multiple of 16.
func dotsI8(q []int16, codes []int8, out []int32) {
	if len(q)%16 != 0 || len(codes) < len(out)*len(q) {
		panic("vecindex: dotsI8: codes do not fit the query")
	}
	if haveFMA {
		dotsI8AVX2(q, codes, out)
		return
	}
	dotsI8Generic(q, codes, out)
}

// dotsI8AVX2 is dotsI8 with AVX2.
//
//go:noescape
func dotsI8AVX2(q []int16, codes []int8, out []int32)
