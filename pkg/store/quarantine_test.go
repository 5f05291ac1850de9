package store

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

// TestQuarantine: values that do not decode are quarantined, not fatal.
// Reads of them fail with ErrCorrupt and name them, scans (also over a
// snapshot) skip them and return every other record, they are listed and
// logged once, and their bytes stay on disk. A rewrite of the key or a
// delete of every record releases them.
func TestQuarantine(t *testing.T) {
	var logs bytes.Buffer // the store logs from the calling goroutine
	db, err := Open(t.TempDir(), Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	good := fullRecord()
	goodRaw := fullRaw()
	badRec := []byte{formatRecordV2, 1, 2}
	badRaw := []byte{9}
	commit(t, db, func(b *Batch) {
		b.PutRecord(DefaultNS, good)
		b.PutRaw(DefaultNS, goodRaw, nil)
		b.Set(recordKey(DefaultNS, good.Store, idC), badRec)
		b.Set(rawKey(DefaultNS, idB), badRaw)
	})

	var recs []memory.ID
	if err := db.ScanRecords(DefaultNS, good.Store, func(r *memory.MemoryRecord) error { recs = append(recs, r.ID); return nil }); err != nil {
		t.Fatalf("ScanRecords over a damaged value: %v", err)
	}
	var raws []memory.ID
	if err := db.ScanRaw(DefaultNS, func(r *memory.RawJournalRecord) error { raws = append(raws, r.ID); return nil }); err != nil {
		t.Fatalf("ScanRaw over a damaged value: %v", err)
	}
	if len(recs) != 1 || recs[0] != good.ID || len(raws) != 1 || raws[0] != goodRaw.ID {
		t.Fatalf("scans gave %v and %v, want only the good record and entry", recs, raws)
	}
	if _, err := db.GetRecord(DefaultNS, good.Store, idC); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), idC.String()) {
		t.Errorf("GetRecord of a damaged value: %v", err)
	}
	if _, err := db.GetRaw(DefaultNS, idB); !errors.Is(err, ErrCorrupt) {
		t.Errorf("GetRaw of a damaged value: %v", err)
	}
	snap := db.NewSnapshot()
	n := 0
	if err := snap.ScanRecords(DefaultNS, good.Store, func(*memory.MemoryRecord) error { n++; return nil }); err != nil || n != 1 {
		t.Errorf("snapshot scan: %d records, %v", n, err)
	}
	_ = snap.Close()

	q := db.Quarantined()
	if len(q) != 2 || q[0].Store != good.Store || q[0].ID != idC || q[1].Store != 0 || q[1].ID != idB ||
		!errors.Is(q[0].Err, ErrCorrupt) || !errors.Is(q[1].Err, ErrCorrupt) {
		t.Fatalf("Quarantined = %v", q)
	}
	if c := strings.Count(logs.String(), "record quarantined"); c != 2 {
		t.Errorf("%d quarantine log lines for two values read several times, want 2:\n%s", c, logs.String())
	}
	for key, want := range map[string][]byte{string(recordKey(DefaultNS, good.Store, idC)): badRec, string(rawKey(DefaultNS, idB)): badRaw} {
		if v, err := db.Get([]byte(key)); err != nil || !bytes.Equal(v, want) {
			t.Errorf("the damaged value under %x changed: %x %v", key, v, err)
		}
	}

	// A restored copy of the record releases it.
	restored := fullRecord()
	restored.ID = idC
	commit(t, db, func(b *Batch) { b.PutRecord(DefaultNS, restored) })
	if q := db.Quarantined(); len(q) != 1 || q[0].ID != idB {
		t.Fatalf("after restoring the record: %v", q)
	}
	if _, err := db.GetRecord(DefaultNS, good.Store, idC); err != nil {
		t.Fatal(err)
	}
	commit(t, db, func(b *Batch) { b.DeleteAllRecords(DefaultNS) })
	if q := db.Quarantined(); len(q) != 0 {
		t.Fatalf("after deleting every record: %v", q)
	}
}

// TestQuarantineEncrypted: an encrypted value whose ciphertext was damaged
// on disk is quarantined like any other; a value that is merely encrypted
// in a database opened without its passphrase is not damaged, and scans
// still refuse it with ErrEncrypted.
func TestQuarantineEncrypted(t *testing.T) {
	dir := t.TempDir()
	db := openEnc(t, dir, "pw")
	a, b := fullRecord(), fullRecord()
	b.ID = idC
	commit(t, db, func(bt *Batch) { bt.PutRecord(DefaultNS, a); bt.PutRecord(DefaultNS, b) })
	key := recordKey(DefaultNS, b.Store, b.ID)
	v, err := db.Get(key)
	if err != nil {
		t.Fatal(err)
	}
	v[len(v)-1] ^= 0x40
	commit(t, db, func(bt *Batch) { bt.Set(key, v) })
	n := 0
	if err := db.ScanRecords(DefaultNS, a.Store, func(*memory.MemoryRecord) error { n++; return nil }); err != nil || n != 1 {
		t.Fatalf("scan over a damaged ciphertext: %d records, %v", n, err)
	}
	if q := db.Quarantined(); len(q) != 1 || q[0].ID != idC || !errors.Is(q[0].Err, ErrDecrypt) {
		t.Fatalf("Quarantined = %v", q)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	plain := openPlain(t, dir)
	err = plain.ScanRecords(DefaultNS, a.Store, func(*memory.MemoryRecord) error { return nil })
	if !errors.Is(err, ErrEncrypted) || len(plain.Quarantined()) != 0 {
		t.Fatalf("without the passphrase: %v, quarantined %v", err, plain.Quarantined())
	}
}
