package vecindex

import (
	"math/rand/v2"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

// TestRowTable checks the row table against a map through random
// inserts and removals, across rehashes and with many deleted slots.
func TestRowTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var ids []memory.ID
	want := map[memory.ID]int{}
	tab := newRowTable(0)
	for step := range 20000 {
		if len(want) > 0 && rng.IntN(3) == 0 {
			// Remove a live id.
			r := rng.IntN(len(ids))
			for ids[r].IsNil() {
				r = (r + 1) % len(ids)
			}
			id := ids[r]
			got, ok := tab.remove(ids, id)
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
		tab.insert(ids, len(ids)-1)
		want[id] = len(ids) - 1
	}
	if tab.live != len(want) {
		t.Fatalf("live %d, want %d", tab.live, len(want))
	}
	for id, r := range want {
		if got, ok := tab.find(ids, id); !ok || got != r {
			t.Fatalf("find %v = %d, %v; want %d", id, got, ok, r)
		}
	}
	for range 1000 {
		id := testID(rng.IntN(1 << 24))
		id[15] = 2 // testID's ids end in 1
		if _, ok := tab.find(ids, id); ok {
			t.Fatalf("find %v: found an id never inserted", id)
		}
		if _, ok := tab.remove(ids, id); ok {
			t.Fatalf("remove %v: removed an id never inserted", id)
		}
	}
	if tab.used*4 > len(tab.slots)*3 {
		t.Fatalf("%d of %d slots used, want at most 3/4", tab.used, len(tab.slots))
	}
}
