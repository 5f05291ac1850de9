package vecindex

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"memsvc.dev/memsvc/internal/cputime"
)

// BenchmarkVectorSearch measures a search for the 50 best of 20,000
// Gaussian vectors (what a recall with the default limit asks for), at
// common embedding sizes, on one core and on all. Besides wall time it
// reports the process CPU time per search, which other work on a shared
// machine does not inflate.
func BenchmarkVectorSearch(b *testing.B) {
	for _, dim := range []int{64, 384, 1536} {
		x := New(nil)
		rng := rand.New(rand.NewPCG(31, 32))
		const n = 20_000
		for i := range n {
			x.Put(testID(i), normalVec(rng, dim))
		}
		queries := make([][]float32, 64)
		for i := range queries {
			queries[i] = normalVec(rng, dim)
		}
		for _, serial := range []bool{true, false} {
			name := fmt.Sprintf("dim=%d/parallel", dim)
			if serial {
				name = fmt.Sprintf("dim=%d/serial", dim)
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(n * dim * 4))
				cpu := cputime.Process()
				i := 0
				for b.Loop() {
					if hits := x.Search(Query{Vector: queries[i%len(queries)], K: 50, Serial: serial}); len(hits) != 50 {
						b.Fatalf("%d hits", len(hits))
					}
					i++
				}
				b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N)/1e3, "cpu-µs/op")
			})
		}
	}
}
