package vecindex

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDotFMA checks the assembly against the plain Go loop for every
// length up to 200 (all the block and tail paths) at unaligned offsets:
// exactly on small integers, where float32 sums are exact in any order,
// and within rounding on random values.
func TestDotFMA(t *testing.T) {
	if !haveFMA {
		t.Log("this processor lacks AVX2/FMA: dot runs dotGeneric, checked by the other tests")
		return
	}
	rng := rand.New(rand.NewPCG(13, 14))
	buf := make([]float32, 2*210)
	for n := 0; n <= 200; n++ {
		for _, off := range []int{0, 1, 3} {
			a, b := buf[off:off+n], buf[210+off:210+off+n+off]
			for i := range a {
				a[i] = float32(rng.IntN(21) - 10)
			}
			for i := range b {
				b[i] = float32(rng.IntN(21) - 10)
			}
			if got, want := dotFMA(a, b), dotGeneric(a, b); got != want {
				t.Fatalf("n=%d off=%d integers: dotFMA %v, dotGeneric %v", n, off, got, want)
			}
			var norm float64
			for i := range a {
				a[i] = rng.Float32()*2 - 1
				b[i] = rng.Float32()*2 - 1
				norm += math.Abs(float64(a[i] * b[i]))
			}
			got, want := float64(dotFMA(a, b)), float64(dotGeneric(a, b))
			if math.Abs(got-want) > 1e-5*(norm+1) {
				t.Fatalf("n=%d off=%d: dotFMA %v, dotGeneric %v", n, off, got, want)
			}
		}
	}
	// b longer than a: only len(a) elements count.
	a := []float32{1, 2, 3}
	b := []float32{4, 5, 6, 1000}
	if got := dot(a, b); got != 32 {
		t.Fatalf("dot(%v, %v) = %v, want 32", a, b, got)
	}
}

// TestBoundsI8Kernels checks each vector instruction version of boundsI8
// this processor has against the exact sums (checkBounds), whichever
// boundsI8 picks.
func TestBoundsI8Kernels(t *testing.T) {
	if !haveFMA {
		t.Log("this processor lacks AVX2/FMA: boundsI8 runs boundsI8Generic, checked by TestBoundsI8")
		return
	}
	groups := func(kernel boundsKernel) boundsKernel {
		return func(q *quantQuery, codes []int8, cols quantCols, out []float32) {
			g := len(out) &^ 7
			if g > 0 {
				kernel(q, codes, cols, out[:g])
			}
			boundsI8Generic(q, codes[g*len(q.codes):], cols.slice(g, len(out)), out[g:])
		}
	}
	checkBounds(t, groups(func(q *quantQuery, codes []int8, cols quantCols, out []float32) {
		boundsI8AVX2(q.codes, codes, cols.scale, cols.err, cols.norm, &q.params, out)
	}))
	if !haveVNNI {
		t.Log("this processor lacks AVX-512 VNNI: only the AVX2 kernel was checked")
		return
	}
	checkBounds(t, groups(func(q *quantQuery, codes []int8, cols quantCols, out []float32) {
		q.splitBytes()
		boundsI8VNNI(q.bytes, codes, cols.scale, cols.err, cols.norm, cols.sum, &q.params, out)
	}))
}

// BenchmarkVectorDotGeneric is BenchmarkVectorDot with the plain Go loop,
// for comparison.
func BenchmarkVectorDotGeneric(b *testing.B) {
	benchDot(b, dotGeneric)
}
