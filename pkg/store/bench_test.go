package store

import (
	"sync"
	"sync/atomic"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

func BenchmarkEncodeRecord(b *testing.B) {
	rec := realisticRecord(1, idA)
	b.SetBytes(int64(len(EncodeRecord(rec))))
	b.ReportAllocs()
	for b.Loop() {
		_ = EncodeRecord(rec)
	}
}

func BenchmarkDecodeRecord(b *testing.B) {
	enc := EncodeRecord(realisticRecord(1, idA))
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeRecord(enc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeRaw(b *testing.B) {
	rec := realisticRaw(49, idA)
	b.ReportAllocs()
	for b.Loop() {
		_ = EncodeRaw(rec)
	}
}

func BenchmarkDecodeRaw(b *testing.B) {
	enc := EncodeRaw(realisticRaw(49, idA))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeRaw(enc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPutRecordSynced is one writer doing PutRecord + Commit (synced)
// per record: the latency of an acknowledged encode.store.
func BenchmarkPutRecordSynced(b *testing.B) {
	db, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ids := memory.NewIDSource(nil, nil)
	rec := realisticRecord(1, idA)
	b.ReportAllocs()
	for b.Loop() {
		rec.ID = ids.New()
		batch := db.NewBatch()
		batch.PutRecord(rec)
		if err := batch.Commit(); err != nil {
			b.Fatal(err)
		}
		batch.Close()
	}
}

// BenchmarkPutRecordSynced8Writers runs 8 concurrent writers; pebble's
// group commit shares one WAL sync between them, so ns/op (per record)
// should drop well below the single-writer figure.
func BenchmarkPutRecordSynced8Writers(b *testing.B) {
	const writers = 8
	db, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ids := memory.NewIDSource(nil, nil)
	b.ReportAllocs()
	b.ResetTimer()
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for range writers {
		wg.Go(func() {
			rec := realisticRecord(1, idA)
			for next.Add(1) <= int64(b.N) {
				rec.ID = ids.New()
				batch := db.NewBatch()
				batch.PutRecord(rec)
				if err := batch.Commit(); err != nil {
					failed.Store(err)
					return
				}
				batch.Close()
			}
		})
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		b.Fatal(err)
	}
}
