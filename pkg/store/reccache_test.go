package store

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

// cacheRec is a record of the coherence tests: id n of store st at
// version v, with content of a size that depends on v.
func cacheRec(st memory.StoreType, n int, v uint32) *memory.MemoryRecord {
	rec := fullRecord()
	rec.ID = recID(n)
	rec.Store = st
	rec.Version = v
	rec.Content.Blocks[0].Data = memory.Bytes(fmt.Sprintf("record %d version %d %*s", n, v, int(v%7)*40, ""))
	rec.Associations = rec.Associations[:v%3]
	return rec
}

// uncached reads a record past the cache: what GetRecord returned before
// there was one.
func uncached(db *DB, ns NS, st memory.StoreType, id memory.ID) (*memory.MemoryRecord, error) {
	key := recordKey(ns, st, id)
	v, err := db.Get(key)
	if err != nil {
		return nil, err
	}
	return decodeAt(db.keys, key, v, true, DecodeRecord)
}

// TestRecordCacheCoherent interleaves every kind of record write a batch
// can make (put, delete, a namespace's records deleted, a namespace
// dropped, batches appended to one another, a batch closed uncommitted)
// with reads, in random order over a cache small enough to evict, and
// checks after every step that each record reads through the cache as it
// reads from pebble, and that changing a record GetRecord returned
// changes nothing the next read sees.
func TestRecordCacheCoherent(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			dir := t.TempDir()
			db, err := Open(dir, Options{RecordCacheBytes: 64 << 10})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			rng := rand.New(rand.NewPCG(seed, 77))
			other, err := db.CreateNamespace("other")
			if err != nil {
				t.Fatal(err)
			}
			spaces := []NS{DefaultNS, other}
			stores := []memory.StoreType{memory.StoreEpisodic, memory.StoreSemantic}
			const ids = 12
			version := uint32(0)
			most := 0 // the most records the cache held after a step
			check := func(step int, what string) {
				t.Helper()
				for _, ns := range spaces {
					for _, st := range stores {
						for n := range ids {
							want, werr := uncached(db, ns, st, recID(n))
							got, gerr := db.GetRecord(ns, st, recID(n))
							if errors.Is(werr, ErrNotFound) != errors.Is(gerr, ErrNotFound) || !reflect.DeepEqual(want, got) {
								t.Fatalf("step %d (%s): ns %d %s record %d: cached %v %v, pebble %v %v", step, what, ns, st, n, got, gerr, want, werr)
							}
							if got != nil {
								// The caller's to change.
								got.Version = 1 << 30
								got.Content.Blocks[0].Data[0] = 'X'
								got.Content.Blocks[0].Embedding[0] = 99
								*got.Meta.Intent = "changed"
							}
						}
					}
				}
			}
			put := func(b *Batch) {
				version++
				ns, st := spaces[rng.IntN(len(spaces))], stores[rng.IntN(len(stores))]
				b.PutRecord(ns, cacheRec(st, rng.IntN(ids), version))
			}
			for step := range 300 {
				var what string
				switch r := rng.IntN(20); {
				case r < 9:
					what = "put"
					commit(t, db, put)
				case r < 13:
					what = "delete"
					commit(t, db, func(b *Batch) {
						b.DeleteRecord(spaces[rng.IntN(len(spaces))], stores[rng.IntN(len(stores))], recID(rng.IntN(ids)))
					})
				case r < 15:
					what = "appended batches"
					commit(t, db, func(b *Batch) {
						for range 1 + rng.IntN(3) {
							o := db.NewBatch()
							put(o)
							o.DeleteRecord(spaces[rng.IntN(len(spaces))], stores[rng.IntN(len(stores))], recID(rng.IntN(ids)))
							if err := b.Append(o); err != nil {
								t.Fatal(err)
							}
							o.Close()
						}
					})
				case r < 16:
					what = "uncommitted"
					b := db.NewBatch()
					put(b)
					b.Close()
				case r < 17:
					what = "delete all records"
					commit(t, db, func(b *Batch) { b.DeleteAllRecords(spaces[rng.IntN(len(spaces))]) })
				case r < 18:
					what = "drop namespace"
					commit(t, db, func(b *Batch) { b.DropNamespace(spaces[1]) })
					ns, err := db.CreateNamespace("other")
					if err != nil {
						t.Fatal(err)
					}
					spaces[1] = ns
				default:
					what = "reads"
				}
				check(step, what)
				most = max(most, db.recs.len())
			}
			if most < 10 {
				t.Fatalf("the cache held at most %d records: the test does not exercise it", most)
			}
		})
	}
}

// TestRecordCacheConcurrent reads records while they are rewritten: a
// read that starts after a commit returned sees that commit's version or
// a later one, and one reader never sees a version go back.
func TestRecordCacheConcurrent(t *testing.T) {
	db, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const ids = 4
	var committed [ids]atomic.Uint32
	for n := range ids {
		commit(t, db, func(b *Batch) { b.PutRecord(DefaultNS, cacheRec(memory.StoreEpisodic, n, 1)) })
		committed[n].Store(1)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for r := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last [ids]uint32
			for i := 0; !stop.Load() && i < 200_000; i++ {
				n := (i + r) % ids
				floor := committed[n].Load()
				rec, err := db.GetRecord(DefaultNS, memory.StoreEpisodic, recID(n))
				if err != nil {
					errs <- err
					return
				}
				if rec.Version < floor || rec.Version < last[n] {
					errs <- fmt.Errorf("record %d read at version %d after version %d committed and %d was read", n, rec.Version, floor, last[n])
					return
				}
				last[n] = rec.Version
			}
		}()
	}
	for v := uint32(2); v < 300; v++ {
		n := int(v) % ids
		commit(t, db, func(b *Batch) { b.PutRecord(DefaultNS, cacheRec(memory.StoreEpisodic, n, v)) })
		committed[n].Store(v)
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
