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
