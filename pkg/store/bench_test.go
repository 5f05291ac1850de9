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
func BenchmarkPutRecordSynced(b *testing.B) { benchPutRecordSynced(b, Options{}) }

func benchPutRecordSynced(b *testing.B, o Options) {
	db, err := Open(b.TempDir(), o)
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
		batch.PutRecord(DefaultNS, rec)
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
				batch.PutRecord(DefaultNS, rec)
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

func benchKeys(b *testing.B) *keyring {
	b.Helper()
	_, k, err := newHeader([]byte("bench"), fastKDF())
	if err != nil {
		b.Fatal(err)
	}
	return k
}

// BenchmarkSealRecord is the encrypted write path of one value:
// EncodeRecord, then the envelope. Compare with BenchmarkEncodeRecord.
func BenchmarkSealRecord(b *testing.B) {
	rec := realisticRecord(1, idA)
	benchSeal(b, recordKey(DefaultNS, rec.Store, rec.ID), func() []byte { return EncodeRecord(rec) })
}

// BenchmarkOpenRecord is the encrypted read path of one value: open the
// envelope, then DecodeRecord. Compare with BenchmarkDecodeRecord.
func BenchmarkOpenRecord(b *testing.B) {
	rec := realisticRecord(1, idA)
	benchOpen(b, recordKey(DefaultNS, rec.Store, rec.ID), EncodeRecord(rec), DecodeRecord)
}

func BenchmarkSealRaw(b *testing.B) {
	rec := realisticRaw(49, idA)
	benchSeal(b, rawKey(DefaultNS, rec.ID), func() []byte { return EncodeRaw(rec) })
}

func BenchmarkOpenRaw(b *testing.B) {
	rec := realisticRaw(49, idA)
	benchOpen(b, rawKey(DefaultNS, rec.ID), EncodeRaw(rec), DecodeRaw)
}

// benchSeal measures encoding a value with encode and sealing it under key.
func benchSeal(b *testing.B, key []byte, encode func() []byte) {
	k := benchKeys(b)
	b.SetBytes(int64(len(encode())))
	b.ReportAllocs()
	for b.Loop() {
		_ = k.seal(key, encode())
	}
}

// benchOpen measures opening the sealed plain under key and decoding it.
func benchOpen[T any](b *testing.B, key, plain []byte, decode func([]byte) (T, error)) {
	k := benchKeys(b)
	b.SetBytes(int64(len(plain)))
	sealed := k.seal(key, plain)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeAt(k, key, sealed, false, decode); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetRecord reads one record through pebble (block cache warm),
// without and with encryption.
func BenchmarkGetRecord(b *testing.B) {
	for _, mode := range []struct {
		name string
		opts Options
	}{
		{"plaintext", Options{}},
		{"encrypted", Options{Passphrase: []byte("bench"), KDF: fastKDF()}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			db, err := Open(b.TempDir(), mode.opts)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			rec := realisticRecord(1, idA)
			batch := db.NewBatch()
			batch.PutRecord(DefaultNS, rec)
			if err := batch.Commit(); err != nil {
				b.Fatal(err)
			}
			batch.Close()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := db.GetRecord(DefaultNS, rec.Store, rec.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPutRecordSyncedEncrypted is BenchmarkPutRecordSynced with a
// passphrase.
func BenchmarkPutRecordSyncedEncrypted(b *testing.B) {
	benchPutRecordSynced(b, Options{Passphrase: []byte("bench"), KDF: fastKDF()})
}

// BenchmarkDeriveKeys is the cost a passphrase adds to Open: with the
// default Argon2id parameters, and with the 64 MiB, 3 passes, 4 lanes of
// directories created before they were the default.
func BenchmarkDeriveKeys(b *testing.B) {
	for _, k := range []struct {
		name string
		p    KDFParams
	}{
		{"default", DefaultKDF()},
		{"m=64MiB-t=3-p=4", KDFParams{MemoryKiB: 64 << 10, Iterations: 3, Parallelism: 4}},
	} {
		b.Run(k.name, func(b *testing.B) {
			h, _, err := newHeader([]byte("bench"), fastKDF())
			if err != nil {
				b.Fatal(err)
			}
			h.kdf = k.p
			master := h.masterKey([]byte("bench"))
			h.check = h.keyCheck(master)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := h.unlock([]byte("bench")); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkPutRecordNoSync(b *testing.B) {
	db, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	rec := realisticRecord(1, idA)
	b.ReportAllocs()
	for b.Loop() {
		batch := db.NewBatch()
		batch.PutRecord(DefaultNS, rec)
		if err := batch.CommitNoSync(); err != nil {
			b.Fatal(err)
		}
		batch.Close()
	}
}
