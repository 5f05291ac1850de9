package store

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

// TestScanRecordsParallel: the batches of ScanRecordsParallel, put in Seq
// order, are the records ScanRecords gives store after store, damaged
// values left out and quarantined, plaintext and encrypted; each worker
// sees its batches in increasing Seq, and batches are bounded.
func TestScanRecordsParallel(t *testing.T) {
	for _, enc := range []bool{false, true} {
		t.Run(fmt.Sprintf("encrypted=%v", enc), func(t *testing.T) {
			dir := t.TempDir()
			db := openPlain(t, dir)
			if enc {
				closeDB(t, db)
				db = openEnc(t, dir, "pw")
			}
			const n = 1500 // several batches per store, each record about 2.6 KB
			stores := memory.PersistentStores()
			commit(t, db, func(b *Batch) {
				for i := range n {
					b.PutRecord(DefaultNS, realisticRecord(i, recID(i+1)))
				}
				// Damaged values in two stores, the first at a batch's start.
				b.Set(recordKey(DefaultNS, stores[1], recID(0)), []byte{formatRecordV2, 1, 2})
				b.Set(recordKey(DefaultNS, stores[3], recID(n+7)), []byte{formatRecordV2})
			})
			var want []*memory.MemoryRecord
			for _, st := range stores {
				if err := db.ScanRecords(DefaultNS, st, func(r *memory.MemoryRecord) error { want = append(want, r); return nil }); err != nil {
					t.Fatal(err)
				}
			}
			if len(want) != n {
				t.Fatalf("sequential scan gave %d records, want %d", len(want), n)
			}
			for _, workers := range []int{1, 3} {
				var mu sync.Mutex
				got := map[int]*RecordBatch{}
				last := make([]int, workers)
				for i := range last {
					last[i] = -1
				}
				err := db.ScanRecordsParallel(DefaultNS, stores, workers, func(w int, b *RecordBatch) error {
					mu.Lock()
					defer mu.Unlock()
					if b.Seq <= last[w] {
						t.Errorf("worker %d: batch %d after %d", w, b.Seq, last[w])
					}
					last[w] = b.Seq
					if _, dup := got[b.Seq]; dup || len(b.Records) > parBatchRecords {
						t.Errorf("batch %d: seen before %v, %d records", b.Seq, dup, len(b.Records))
					}
					got[b.Seq] = b
					return nil
				})
				if err != nil {
					t.Fatalf("%d workers: %v", workers, err)
				}
				var all []*memory.MemoryRecord
				for seq := range len(got) {
					b, ok := got[seq]
					if !ok {
						t.Fatalf("%d workers: batch %d missing of %d", workers, seq, len(got))
					}
					for _, r := range b.Records {
						if r.Store != b.Store {
							t.Errorf("batch %d of store %v holds a record of %v", seq, b.Store, r.Store)
						}
					}
					all = append(all, b.Records...)
				}
				if len(got) < 2*len(stores) || !reflect.DeepEqual(all, want) {
					t.Errorf("%d workers: %d batches, %d records; want the %d of a sequential scan, in order", workers, len(got), len(all), len(want))
				}
			}
			if q := db.Quarantined(); len(q) != 2 {
				t.Errorf("quarantined %v, want the two damaged values", q)
			}
		})
	}
}

// TestScanRecordsParallelStops: an error of fn stops the scan and is
// returned; batches stop coming soon after.
func TestScanRecordsParallelStops(t *testing.T) {
	db := openPlain(t, t.TempDir())
	commit(t, db, func(b *Batch) {
		for i := range 3000 {
			b.PutRecord(DefaultNS, realisticRecord(i, recID(i+1)))
		}
	})
	stop := errors.New("enough")
	var mu sync.Mutex
	calls := 0
	err := db.ScanRecordsParallel(DefaultNS, memory.PersistentStores(), 2, func(int, *RecordBatch) error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		return stop
	})
	if !errors.Is(err, stop) {
		t.Fatalf("ScanRecordsParallel: %v, want the error of fn", err)
	}
	// At most the batches already handed to the two workers besides the
	// failing one.
	if calls > 4 {
		t.Errorf("fn called %d times after it failed the first time", calls)
	}
}
