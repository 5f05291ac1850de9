package store

import (
	"bytes"
	"errors"
	"testing"
)

// TestOutboxKeys pins the audit outbox's place in the key space: "o" and
// the sequence as 8 big-endian bytes, the layout data directories already
// hold, so events written before the store owned the namespace are still
// found, in sequence order, and deleted.
func TestOutboxKeys(t *testing.T) {
	db := openMem(t)
	// As an older engine wrote them, with raw keys.
	commit(t, db, func(b *Batch) {
		b.Set([]byte{'o', 0, 0, 0, 0, 0, 0, 1, 0}, []byte(`{"n":256}`))
		b.Set([]byte{'o', 0, 0, 0, 0, 0, 0, 0, 7}, []byte(`{"n":7}`))
	})
	commit(t, db, func(b *Batch) { b.PutOutbox(300, []byte(`{"n":300}`)) })
	if _, err := db.Get([]byte{'o', 0, 0, 0, 0, 0, 0, 1, 44}); err != nil {
		t.Fatalf("PutOutbox(300) is not under o + big-endian 300: %v", err)
	}
	type ev struct {
		seq  uint64
		body string
	}
	scan := func() []ev {
		var out []ev
		if err := db.ScanOutbox(func(seq uint64, v []byte) (bool, error) {
			out = append(out, ev{seq, string(v)})
			return true, nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	got := scan()
	want := []ev{{7, `{"n":7}`}, {256, `{"n":256}`}, {300, `{"n":300}`}}
	if len(got) != len(want) {
		t.Fatalf("outbox %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("outbox %v, want %v", got, want)
		}
	}
	var from []uint64
	if err := db.ScanOutboxFrom(8, func(seq uint64, _ []byte) (bool, error) {
		from = append(from, seq)
		return true, nil
	}); err != nil || len(from) != 2 || from[0] != 256 || from[1] != 300 {
		t.Fatalf("outbox from 8: %v, %v; want [256 300]", from, err)
	}
	commit(t, db, func(b *Batch) { b.DeleteOutbox(7); b.DeleteOutbox(256) })
	if got := scan(); len(got) != 1 || got[0].seq != 300 {
		t.Fatalf("after deletes: %v", got)
	}
	// Records, settings and the outbox do not share keys.
	commit(t, db, func(b *Batch) { b.PutMeta("o", []byte("x")) })
	if got := scan(); len(got) != 1 {
		t.Fatalf("a setting showed up in the outbox: %v", got)
	}

	commit(t, db, func(b *Batch) { b.Set([]byte{'o', 1, 2}, []byte("{}")) })
	err := db.ScanOutbox(func(uint64, []byte) (bool, error) { return true, nil })
	if !errors.Is(err, ErrCorrupt) || !bytes.Contains([]byte(err.Error()), []byte("6f0102")) {
		t.Fatalf("malformed outbox key: %v, want ErrCorrupt naming the key", err)
	}
}
