package idtable

import (
	"math/rand/v2"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

// testID is an id with few varying bits, as tests elsewhere make them.
func testID(i int) memory.ID {
	var id memory.ID
	id[0], id[1], id[2], id[15] = byte(i>>16), byte(i>>8), byte(i), 1
	return id
}

// TestTable checks the table against a map through random inserts and
// removals, across rehashes and with many deleted slots, from the zero
// Table and from one made with New.
func TestTable(t *testing.T) {
	for _, start := range []Table{{}, New(100)} {
		rng := rand.New(rand.NewPCG(3, 4))
		var ids []memory.ID
		want := map[memory.ID]int{}
		tab := start
		for step := range 20000 {
			if len(want) > 0 && rng.IntN(3) == 0 {
				// Remove a live id.
				r := rng.IntN(len(ids))
				for ids[r].IsNil() {
					r = (r + 1) % len(ids)
				}
				id := ids[r]
				got, ok := tab.Remove(ids, id)
				if !ok || got != r {
					t.Fatalf("step %d: remove %v = %d, %v; want %d", step, id, got, ok, r)
				}
				ids[r] = memory.ID{}
				delete(want, id)
				continue
			}
			id := testID(rng.IntN(1 << 24))
			if _, ok := want[id]; ok {
				continue
			}
			ids = append(ids, id)
			tab.Insert(ids, len(ids)-1)
			want[id] = len(ids) - 1
		}
		if tab.Len() != len(want) {
			t.Fatalf("Len %d, want %d", tab.Len(), len(want))
		}
		for id, r := range want {
			if got, ok := tab.Find(ids, id); !ok || got != r {
				t.Fatalf("find %v = %d, %v; want %d", id, got, ok, r)
			}
		}
		for range 1000 {
			id := testID(rng.IntN(1 << 24))
			id[15] = 2 // testID's ids end in 1
			if _, ok := tab.Find(ids, id); ok {
				t.Fatalf("find %v: found an id never inserted", id)
			}
			if _, ok := tab.Remove(ids, id); ok {
				t.Fatalf("remove %v: removed an id never inserted", id)
			}
		}
		if tab.used*4 > len(tab.slots)*3 {
			t.Fatalf("%d of %d slots used, want at most 3/4", tab.used, len(tab.slots))
		}
	}
}
