package engine

import (
	"cmp"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// TestRecencyOrder puts, changes and deletes entries at random (mostly
// in time order, some out of order, some creation times changed, some
// records deleted and put back) and checks after every step that the
// recency order lists exactly the live entries, newest first, each once,
// as sorting every entry would; and that stopping early stops.
func TestRecencyOrder(t *testing.T) {
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 17))
		s := newState()
		base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		clock := 0
		var ids []memory.ID
		put := func(id memory.ID, created time.Time) {
			s.put(&memory.MemoryRecord{ID: id, Store: memory.StoreEpisodic, CreatedAt: created})
		}
		for step := range 4000 {
			switch r := rng.IntN(100); {
			case r < 60 || len(ids) == 0: // a new record, now
				var id memory.ID
				binary.BigEndian.PutUint64(id[:8], rng.Uint64())
				binary.BigEndian.PutUint64(id[8:], uint64(step))
				ids = append(ids, id)
				clock += rng.IntN(3) // ties happen
				put(id, base.Add(time.Duration(clock)*time.Second))
			case r < 70: // a new record from the past (an import)
				var id memory.ID
				binary.BigEndian.PutUint64(id[:8], rng.Uint64())
				binary.BigEndian.PutUint64(id[8:], uint64(step))
				ids = append(ids, id)
				put(id, base.Add(time.Duration(rng.IntN(clock+1))*time.Second))
			case r < 80: // an update that keeps the creation time
				id := ids[rng.IntN(len(ids))]
				if e, ok := s.entries[id]; ok {
					put(id, e.created)
				}
			case r < 85: // a creation time changed
				put(ids[rng.IntN(len(ids))], base.Add(time.Duration(rng.IntN(clock+1))*time.Second))
			case r < 95: // deleted
				s.delete(ids[rng.IntN(len(ids))])
			default: // deleted and put back as it was
				id := ids[rng.IntN(len(ids))]
				if e, ok := s.entries[id]; ok {
					created := e.created
					s.delete(id)
					put(id, created)
				}
			}
			if step%97 != 0 && step != 3999 {
				continue
			}
			type item struct {
				id      memory.ID
				created int64
			}
			var want []memory.ID
			var all []item
			for id, e := range s.entries {
				all = append(all, item{id, e.created.UnixNano()})
			}
			slices.SortFunc(all, func(a, b item) int { return cmp.Or(cmp.Compare(b.created, a.created), compareIDs(b.id, a.id)) })
			for _, it := range all {
				want = append(want, it.id)
			}
			var got []memory.ID
			s.recent.newest(s, func(id memory.ID) bool { got = append(got, id); return true })
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d step %d: listed %d entries, want %d (first difference at %d)", seed, step, len(got), len(want), firstDiff(got, want))
			}
			k := min(len(want), 1+rng.IntN(20))
			got = got[:0]
			s.recent.newest(s, func(id memory.ID) bool { got = append(got, id); return len(got) < k })
			if !slices.Equal(got, want[:k]) {
				t.Fatalf("seed %d step %d: the newest %d differ", seed, step, k)
			}
		}
		if n := len(s.recent.main) + len(s.recent.side); n > 2*len(s.entries)+recencySideMax+64 {
			t.Errorf("seed %d: %d items kept for %d entries", seed, n, len(s.entries))
		}
	}
}

func firstDiff(a, b []memory.ID) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
