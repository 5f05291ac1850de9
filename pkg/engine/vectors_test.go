package engine

import (
	"container/heap"
	"math/rand/v2"
	"slices"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

// TestVectorSearchParallelMatchesSequential: the parallel scan of a large
// matrix returns exactly what one sequential scan does, ties included.
func TestVectorSearchParallelMatchesSequential(t *testing.T) {
	x := newVectorIndex()
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < parallelRows*2+17; i++ {
		var id memory.ID
		id[0], id[1], id[2] = byte(i>>16), byte(i>>8), byte(i)
		v := make([]float32, 16)
		for j := range v {
			v[j] = float32(rng.IntN(3)) // few distinct values: many exact ties
		}
		x.put(id, v)
	}
	x.put(memory.ID{0xff}, []float32{1, 2}) // other dimension: skipped
	q := make([]float32, 16)
	for j := range q {
		q[j] = float32(rng.IntN(3))
	}
	odd := func(id memory.ID) bool { return id[2]%2 == 1 }
	for _, k := range []int{1, 10, 500} {
		got := x.search(q, k, 0, odd)
		m := x.byDim[16]
		seq := scanRows(m, normalize(q), 0, len(m.ids), k, 0, odd)
		want := make([]vecHit, len(seq))
		for i := len(seq) - 1; i >= 0; i-- {
			want[i] = heap.Pop(&seq).(vecHit)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("k=%d: parallel %v\nsequential %v", k, got[:min(5, len(got))], want[:min(5, len(want))])
		}
		for i := 1; i < len(got); i++ {
			if better(got[i], got[i-1]) {
				t.Fatalf("k=%d: results out of order at %d", k, i)
			}
		}
	}
	if got := x.search([]float32{1, 0, 0}, 5, 0, nil); len(got) != 0 {
		t.Fatalf("a query of another dimension matched %d vectors", len(got))
	}
}
