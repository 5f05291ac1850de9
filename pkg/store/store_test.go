package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

func openTemp(t *testing.T) (*DB, string) {
	t.Helper()
	db, dir := openTempNoClose(t)
	t.Cleanup(func() { _ = db.Close() })
	return db, dir
}

// openTempNoClose leaves closing to the test (pebble panics on a second
// Close).
func openTempNoClose(t *testing.T) (*DB, string) {
	t.Helper()
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return db, dir
}

func openMem(t *testing.T) *DB {
	t.Helper()
	db, err := OpenInMemory()
	if err != nil {
		t.Fatalf("OpenInMemory: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func commit(t *testing.T, db *DB, fill func(b *Batch)) {
	t.Helper()
	b := db.NewBatch()
	defer b.Close()
	fill(b)
	if err := b.Commit(); err != nil {
		t.Fatalf("Commit: %v", err)
	}
}

// recID makes a distinct id per (store, n) that sorts by n.
func recID(n int) memory.ID {
	var id memory.ID
	id[0], id[1] = 0x01, 0x96
	id[6] = 0x70
	id[8] = 0x80
	id[14], id[15] = byte(n>>8), byte(n)
	return id
}

func TestOpenAndLayout(t *testing.T) {
	db, dir := openTemp(t)
	abs, _ := filepath.Abs(dir)
	if db.Dir() != abs {
		t.Errorf("Dir() = %q, want %q", db.Dir(), abs)
	}
	v, err := db.Get([]byte{'F'})
	if err != nil || !bytes.Equal(v, []byte{2}) {
		t.Errorf("layout key = %v, %v; want [2]", v, err)
	}

	mem := openMem(t)
	if mem.Dir() != "" {
		t.Errorf("in-memory Dir() = %q", mem.Dir())
	}
	if v, err := mem.Get([]byte{'F'}); err != nil || !bytes.Equal(v, []byte{2}) {
		t.Errorf("in-memory layout key = %v, %v", v, err)
	}
	// Two in-memory databases are independent.
	mem2 := openMem(t)
	commit(t, mem, func(b *Batch) { b.PutMeta("k", []byte("v")) })
	if _, err := mem2.GetMeta("k"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second in-memory database sees the first one's data: %v", err)
	}
}

func TestOpenCreatesNestedDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b", "data")
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("data directory: %v, %v", fi, err)
	}
}

func TestNewerLayoutRefused(t *testing.T) {
	db, dir := openTempNoClose(t)
	commit(t, db, func(b *Batch) { b.Set([]byte{'F'}, []byte{layoutVersion + 1}) })
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for attempt := range 2 { // the failed open must release the lock
		db2, err := Open(dir, Options{})
		if err == nil {
			db2.Close()
			t.Fatalf("attempt %d: directory with layout %d opened", attempt, layoutVersion+1)
		}
		if errors.Is(err, ErrLocked) {
			t.Fatalf("attempt %d: failed open left the directory locked: %v", attempt, err)
		}
		abs, _ := filepath.Abs(dir)
		if !strings.Contains(err.Error(), "newer memsvc") || !strings.Contains(err.Error(), abs) {
			t.Errorf("error %q does not say the directory is from a newer version", err)
		}
	}

	// A malformed layout value is refused as well.
	db3, dir3 := openTempNoClose(t)
	commit(t, db3, func(b *Batch) { b.Set([]byte{'F'}, []byte{1, 0}) })
	db3.Close()
	if db4, err := Open(dir3, Options{}); err == nil {
		db4.Close()
		t.Error("two-byte layout value accepted")
	}
}

func TestReopenKeepsData(t *testing.T) {
	db, dir := openTempNoClose(t)
	rec, raw := fullRecord(), fullRaw()
	commit(t, db, func(b *Batch) {
		b.PutRecord(DefaultNS, rec)
		b.PutRaw(DefaultNS, raw, nil)
		b.PutMeta("mode", []byte("perfect"))
	})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	if got, err := db2.GetRecord(DefaultNS, rec.Store, rec.ID); err != nil || !reflect.DeepEqual(got, normaliseRecord(rec)) {
		t.Errorf("record after reopen: %v %+v", err, got)
	}
	if got, err := db2.GetRaw(DefaultNS, raw.ID); err != nil || !reflect.DeepEqual(got, normaliseRaw(raw)) {
		t.Errorf("raw after reopen: %v %+v", err, got)
	}
	if v, err := db2.GetMeta("mode"); err != nil || string(v) != "perfect" {
		t.Errorf("setting after reopen: %q %v", v, err)
	}
}

func TestCuratedRecords(t *testing.T) {
	db := openMem(t)
	// Records in every persistent store, with ids interleaved across stores.
	want := map[memory.StoreType][]memory.ID{}
	commit(t, db, func(b *Batch) {
		for i := 20; i > 0; i-- { // insert out of order
			st := memory.PersistentStores()[i%4]
			r := realisticRecord(i, recID(i))
			r.Store = st
			b.PutRecord(DefaultNS, r)
		}
	})
	for i := 1; i <= 20; i++ {
		st := memory.PersistentStores()[i%4]
		want[st] = append(want[st], recID(i))
	}
	for _, st := range memory.PersistentStores() {
		var got []memory.ID
		err := db.ScanRecords(DefaultNS, st, func(r *memory.MemoryRecord) error {
			if r.Store != st {
				t.Errorf("scan of %s returned a %s record", st, r.Store)
			}
			got = append(got, r.ID)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want[st]) {
			t.Errorf("%s: scanned %v, want %v", st, got, want[st])
		}
	}

	// Get: right store finds it, another store does not.
	r := realisticRecord(4, recID(4))
	got, err := db.GetRecord(DefaultNS, memory.PersistentStores()[0], recID(4))
	if err != nil {
		t.Fatal(err)
	}
	r.Store = memory.PersistentStores()[0]
	if !reflect.DeepEqual(got, normaliseRecord(r)) {
		t.Errorf("GetRecord = %+v", got)
	}
	if _, err := db.GetRecord(DefaultNS, memory.StoreSemantic, recID(4)); !errors.Is(err, ErrNotFound) {
		t.Errorf("record found in the wrong store: %v", err)
	}
	if _, err := db.GetRecord(DefaultNS, memory.StoreEpisodic, recID(999)); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}

	// Overwrite, then delete.
	r.Version = 2
	commit(t, db, func(b *Batch) { b.PutRecord(DefaultNS, r) })
	if got, _ := db.GetRecord(DefaultNS, r.Store, r.ID); got == nil || got.Version != 2 {
		t.Errorf("overwrite not visible: %+v", got)
	}
	commit(t, db, func(b *Batch) { b.DeleteRecord(DefaultNS, r.Store, r.ID) })
	if _, err := db.GetRecord(DefaultNS, r.Store, r.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted record: %v", err)
	}
	n := 0
	_ = db.ScanRecords(DefaultNS, r.Store, func(*memory.MemoryRecord) error { n++; return nil })
	if n != len(want[r.Store])-1 {
		t.Errorf("%d records left in %s, want %d", n, r.Store, len(want[r.Store])-1)
	}

	// A callback error stops the scan and comes back unchanged.
	stop := errors.New("stop")
	calls := 0
	err = db.ScanRecords(DefaultNS, memory.StoreSemantic, func(*memory.MemoryRecord) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("scan with failing callback: %v after %d calls", err, calls)
	}
}

func TestRawEntries(t *testing.T) {
	db := openMem(t)
	full, minimal := fullRaw(), minimalRaw()
	minimal.Source, minimal.Speaker, minimal.Visibility, minimal.SecrecyLevel = memory.SourceSummary, memory.SpeakerSystem, memory.VisibilityNormal, memory.SecrecyPublic
	commit(t, db, func(b *Batch) { b.PutRaw(DefaultNS, full, nil); b.PutRaw(DefaultNS, minimal, nil) })

	for _, r := range []*memory.RawJournalRecord{full, minimal} {
		got, err := db.GetRaw(DefaultNS, r.ID)
		if err != nil || !reflect.DeepEqual(got, normaliseRaw(r)) {
			t.Errorf("GetRaw(%s) = %+v, %v", r.ID, got, err)
		}
		if ok, err := db.HasRaw(DefaultNS, r.ID); !ok || err != nil {
			t.Errorf("HasRaw(%s) = %v, %v", r.ID, ok, err)
		}
	}
	if _, err := db.GetRaw(DefaultNS, idB); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetRaw unknown: %v", err)
	}
	if ok, err := db.HasRaw(DefaultNS, idB); ok || err != nil {
		t.Errorf("HasRaw unknown = %v, %v", ok, err)
	}
	// A curated record with the same id is not a raw entry.
	commit(t, db, func(b *Batch) { r := minimalRecord(); r.ID = idB; b.PutRecord(DefaultNS, r) })
	if ok, _ := db.HasRaw(DefaultNS, idB); ok {
		t.Error("HasRaw sees a curated record")
	}

	var ids []memory.ID
	if err := db.ScanRaw(DefaultNS, func(r *memory.RawJournalRecord) error { ids = append(ids, r.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ids, []memory.ID{idA, idC}) {
		t.Errorf("ScanRaw ids = %v", ids)
	}

	commit(t, db, func(b *Batch) { b.DeleteRaw(DefaultNS, full) })
	if ok, _ := db.HasRaw(DefaultNS, full.ID); ok {
		t.Error("deleted entry still present")
	}
	if got := newest(t, db, RawRange{}); !reflect.DeepEqual(got, []memory.ID{minimal.ID}) {
		t.Errorf("index after delete = %v", got)
	}
	if got := newest(t, db, RawRange{Session: &full.SessionID}); len(got) != 0 {
		t.Errorf("session index after delete = %v", got)
	}
}

// newest lists ScanRawNewest ids.
func newest(t *testing.T, db *DB, rng RawRange) []memory.ID {
	t.Helper()
	return newestIn(t, db, DefaultNS, rng)
}

func newestIn(t *testing.T, db *DB, ns NS, rng RawRange) []memory.ID {
	t.Helper()
	var ids []memory.ID
	err := db.ScanRawNewest(ns, rng, func(id memory.ID, _ RawFlags) (bool, error) {
		ids = append(ids, id)
		return true, nil
	})
	if err != nil {
		t.Fatalf("ScanRawNewest: %v", err)
	}
	return ids
}

func TestScanRawNewest(t *testing.T) {
	for _, mode := range dbModes() {
		t.Run(mode.name, func(t *testing.T) { testScanRawNewest(t, mode) })
	}
}

func testScanRawNewest(t *testing.T, mode dbMode) {
	type entry struct {
		n       int
		session string
		at      time.Time
	}
	base := tBase
	entries := []entry{
		{1, "a", base},
		{2, "ab", base.Add(time.Second)},
		{3, "a", base.Add(2 * time.Second)},
		{4, "a", base.Add(2 * time.Second)}, // same instant as 3: id breaks the tie
		{5, "b", base.Add(3 * time.Second)},
		{6, "ab", base.Add(4 * time.Second)},
		{7, "a", base.Add(5*time.Second + time.Nanosecond)},
		{8, "", base.Add(6 * time.Second)},
		{9, "a", time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC)}, // before the epoch
		{10, "a\x00", base.Add(7 * time.Second)},
		{11, "a", base.Add(2 * time.Second).In(time.FixedZone("E", 3600))}, // same instant as 3, other zone
	}
	// Modes that turn encryption on write the odd entries before and the
	// even ones after, so scans must merge both session index forms.
	put := func(odd bool) func(b *Batch) {
		return func(b *Batch) {
			for _, e := range entries {
				if e.n%2 == 1 != odd {
					continue
				}
				r := minimalRaw()
				r.ID, r.SessionID, r.CreatedAt = recID(e.n), e.session, e.at
				r.Visibility, r.SecrecyLevel = memory.VisibilityNormal, memory.SecrecyPublic
				b.PutRaw(DefaultNS, r, nil)
			}
		}
	}
	db := mode.setup(t, put(true), put(false))
	ids := func(ns ...int) []memory.ID {
		out := []memory.ID{}
		for _, n := range ns {
			out = append(out, recID(n))
		}
		return out
	}
	sess := func(s string) *string { return &s }
	at := func(d time.Duration) time.Time { return base.Add(d) }
	tests := []struct {
		name string
		rng  RawRange
		want []memory.ID
	}{
		{"all", RawRange{}, ids(10, 8, 7, 6, 5, 11, 4, 3, 2, 1, 9)},
		{"session a", RawRange{Session: sess("a")}, ids(7, 11, 4, 3, 1, 9)},
		{"session ab", RawRange{Session: sess("ab")}, ids(6, 2)},
		{"session b", RawRange{Session: sess("b")}, ids(5)},
		{"session empty", RawRange{Session: sess("")}, ids(8)},
		{"session a NUL", RawRange{Session: sess("a\x00")}, ids(10)},
		{"unknown session", RawRange{Session: sess("c")}, ids()},
		{"inclusive bounds", RawRange{Start: at(time.Second), End: at(3 * time.Second)}, ids(5, 11, 4, 3, 2)},
		{"start only", RawRange{Start: at(4 * time.Second)}, ids(10, 8, 7, 6)},
		{"end only", RawRange{End: at(time.Second)}, ids(2, 1, 9)},
		{"end one ns early", RawRange{End: at(time.Second - 1)}, ids(1, 9)},
		{"start one ns late", RawRange{Start: at(5 * time.Second)}, ids(10, 8, 7)},
		{"start at nanosecond", RawRange{Start: at(5*time.Second + 1), End: at(5*time.Second + 1)}, ids(7)},
		{"session and range", RawRange{Session: sess("a"), Start: at(2 * time.Second), End: at(5 * time.Second)}, ids(11, 4, 3)},
		{"range in other zone", RawRange{Session: sess("a"), Start: at(2 * time.Second).In(time.FixedZone("W", -3600)), End: at(2 * time.Second).In(time.FixedZone("W", -3600))}, ids(11, 4, 3)},
		{"before epoch", RawRange{End: time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC)}, ids(9)},
		{"empty range", RawRange{Start: at(10 * time.Second), End: at(20 * time.Second)}, ids()},
		{"inverted range", RawRange{Start: at(3 * time.Second), End: at(time.Second)}, ids()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := newest(t, db, tc.rng)
			if len(got) == 0 {
				got = []memory.ID{}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %v\nwant %v", short(got), short(tc.want))
			}
		})
	}

	// Early stop and callback errors.
	n := 0
	err := db.ScanRawNewest(DefaultNS, RawRange{}, func(memory.ID, RawFlags) (bool, error) { n++; return n < 3, nil })
	if err != nil || n != 3 {
		t.Errorf("early stop: %d calls, %v", n, err)
	}
	boom := errors.New("boom")
	if err := db.ScanRawNewest(DefaultNS, RawRange{}, func(memory.ID, RawFlags) (bool, error) { return true, boom }); !errors.Is(err, boom) {
		t.Errorf("callback error = %v", err)
	}
}

func short(ids []memory.ID) string {
	var s []string
	for _, id := range ids {
		s = append(s, fmt.Sprint(int(id[14])<<8|int(id[15])))
	}
	return "[" + strings.Join(s, " ") + "]"
}

func TestRawFlags(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(r *memory.RawJournalRecord)
		vis   memory.Visibility
		sec   memory.SecrecyLevel
		supp  bool
		dream bool
	}{
		{"normal public", func(r *memory.RawJournalRecord) {}, memory.VisibilityNormal, memory.SecrecyPublic, false, false},
		{"private sensitive", func(r *memory.RawJournalRecord) {
			r.Visibility, r.SecrecyLevel = memory.VisibilityPrivateScratch, memory.SecrecySensitive
		}, memory.VisibilityPrivateScratch, memory.SecrecySensitive, false, false},
		{"sealed secret suppressed", func(r *memory.RawJournalRecord) {
			r.Visibility, r.SecrecyLevel, r.Suppressed = memory.VisibilitySealed, memory.SecrecySecret, true
		}, memory.VisibilitySealed, memory.SecrecySecret, true, false},
		{"dream processed", func(r *memory.RawJournalRecord) {
			r.Metadata = memory.JSON(`{"_dream":{"processed_at":"2025-03-01T12:00:00Z","kind":"x"},"other":1}`)
		}, memory.VisibilityNormal, memory.SecrecyPublic, false, true},
		{"processed_at not a string", func(r *memory.RawJournalRecord) {
			r.Metadata = memory.JSON(`{"_dream":{"processed_at":null}}`)
		}, memory.VisibilityNormal, memory.SecrecyPublic, false, false},
		{"processed_at elsewhere", func(r *memory.RawJournalRecord) {
			r.Metadata = memory.JSON(`{"processed_at":"2025-03-01T12:00:00Z","_dream":{}}`)
		}, memory.VisibilityNormal, memory.SecrecyPublic, false, false},
		{"processed_at in a string", func(r *memory.RawJournalRecord) {
			r.Metadata = memory.JSON(`{"note":"\"processed_at\""}`)
		}, memory.VisibilityNormal, memory.SecrecyPublic, false, false},
		{"metadata not an object", func(r *memory.RawJournalRecord) {
			r.Metadata = memory.JSON(`["processed_at"]`)
		}, memory.VisibilityNormal, memory.SecrecyPublic, false, false},
		{"all set", func(r *memory.RawJournalRecord) {
			r.Visibility, r.SecrecyLevel, r.Suppressed = memory.VisibilitySealed, memory.SecrecySensitive, true
			r.Metadata = memory.JSON(`{"_dream":{"processed_at":"x"}}`)
		}, memory.VisibilitySealed, memory.SecrecySensitive, true, true},
	}
	db := openMem(t)
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := minimalRaw()
			r.ID, r.SessionID = recID(i), fmt.Sprintf("flags-%d", i)
			r.Visibility, r.SecrecyLevel = memory.VisibilityNormal, memory.SecrecyPublic
			tc.edit(r)
			f := FlagsOf(r)
			if f.Visibility() != tc.vis || f.SecrecyLevel() != tc.sec || f.Suppressed() != tc.supp || f.DreamProcessed() != tc.dream {
				t.Errorf("FlagsOf = vis %v sec %v supp %v dream %v", f.Visibility(), f.SecrecyLevel(), f.Suppressed(), f.DreamProcessed())
			}
			if IsDreamProcessed(r) != tc.dream {
				t.Errorf("IsDreamProcessed = %v", !tc.dream)
			}
			commit(t, db, func(b *Batch) { b.PutRaw(DefaultNS, r, nil) })
			// Both indexes carry the same flags.
			for _, rng := range []RawRange{{Session: &r.SessionID}, {Start: r.CreatedAt, End: r.CreatedAt}} {
				var got []RawFlags
				_ = db.ScanRawNewest(DefaultNS, rng, func(id memory.ID, fl RawFlags) (bool, error) {
					if id == r.ID {
						got = append(got, fl)
					}
					return true, nil
				})
				if len(got) != 1 || got[0] != f {
					t.Errorf("index flags %v, want [%v]", got, f)
				}
			}
		})
	}
}

// PutRaw with the old version replaces the index entries instead of
// leaving stale ones behind.
func TestPutRawReplacesIndexEntries(t *testing.T) {
	for _, mode := range dbModes() {
		t.Run(mode.name, func(t *testing.T) { testPutRawReplacesIndexEntries(t, mode) })
	}
}

func testPutRawReplacesIndexEntries(t *testing.T, mode dbMode) {
	old := minimalRaw()
	old.Visibility, old.SecrecyLevel = memory.VisibilityNormal, memory.SecrecyPublic
	old.CreatedAt = tBase
	db := mode.setup(t, func(b *Batch) { b.PutRaw(DefaultNS, old, nil) }, func(*Batch) {})

	marked := *old
	marked.Metadata = memory.JSON(`{"_dream":{"processed_at":"2025-03-02T00:00:00Z"}}`)
	marked.UpdatedAt = tBase.Add(time.Hour)
	commit(t, db, func(b *Batch) { b.PutRaw(DefaultNS, &marked, old) })

	var flags []RawFlags
	_ = db.ScanRawNewest(DefaultNS, RawRange{}, func(_ memory.ID, f RawFlags) (bool, error) { flags = append(flags, f); return true, nil })
	if len(flags) != 1 || !flags[0].DreamProcessed() {
		t.Errorf("time index after update: %v", flags)
	}

	// Moving an entry to another session and time moves its index entries.
	moved := marked
	moved.SessionID, moved.CreatedAt = "other", tBase.Add(time.Minute)
	commit(t, db, func(b *Batch) { b.PutRaw(DefaultNS, &moved, &marked) })
	if got := newest(t, db, RawRange{Session: &old.SessionID}); len(got) != 0 {
		t.Errorf("old session still indexed: %v", got)
	}
	if got := newest(t, db, RawRange{Session: ptr("other")}); !reflect.DeepEqual(got, []memory.ID{old.ID}) {
		t.Errorf("new session index: %v", got)
	}
	if got := newest(t, db, RawRange{}); len(got) != 1 {
		t.Errorf("time index has %d entries, want 1", len(got))
	}

	// Deleting removes every index entry, in whichever form it was written.
	commit(t, db, func(b *Batch) { b.DeleteRaw(DefaultNS, &moved) })
	for _, rng := range []RawRange{{}, {Session: ptr("other")}, {Session: &old.SessionID}} {
		if got := newest(t, db, rng); len(got) != 0 {
			t.Errorf("%+v after delete: %v", rng, got)
		}
	}
	for _, ns := range []byte{kindSession, kindSealedSession, kindRawTime} {
		if n := countPrefix(t, db, []byte{ns}); n != 0 {
			t.Errorf("%d keys left under %q after delete", n, ns)
		}
	}
}

func TestPrefixEnd(t *testing.T) {
	for _, tc := range []struct {
		in, want []byte
	}{
		{nil, nil},
		{[]byte{}, nil},
		{[]byte{0x00}, []byte{0x01}},
		{[]byte{'c', 1}, []byte{'c', 2}},
		{[]byte{'a', 0xfe}, []byte{'a', 0xff}},
		{[]byte{'a', 0xff}, []byte{'b'}},
		{[]byte{'a', 0xff, 0xff}, []byte{'b'}},
		{[]byte{0x00, 0xff}, []byte{0x01}},
		{[]byte{0xff}, nil},
		{[]byte{0xff, 0xff, 0xff}, nil},
		{[]byte{0xfe, 0xff}, []byte{0xff}},
	} {
		in := bytes.Clone(tc.in)
		got := PrefixEnd(in)
		if !bytes.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
			t.Errorf("PrefixEnd(% x) = % x, want % x", tc.in, got, tc.want)
		}
		if !bytes.Equal(in, tc.in) {
			t.Errorf("PrefixEnd modified its input: % x", in)
		}
	}

	// ScanPrefix over a prefix ending in 0xff sees exactly its keys.
	db := openMem(t)
	keys := [][]byte{{'x', 0xfe, 0xff}, {'x', 0xff}, {'x', 0xff, 0x00}, {'x', 0xff, 0xff, 0xff}, {'y'}}
	commit(t, db, func(b *Batch) {
		for _, k := range keys {
			b.Set(k, []byte{1})
		}
	})
	var got [][]byte
	err := db.ScanPrefix([]byte{'x', 0xff}, false, func(k, _ []byte) (bool, error) { got = append(got, bytes.Clone(k)); return true, nil })
	if err != nil || !reflect.DeepEqual(got, keys[1:4]) {
		t.Errorf("ScanPrefix(x ff) = % x, %v", got, err)
	}
	got = nil
	_ = db.ScanPrefix([]byte{'x'}, true, func(k, _ []byte) (bool, error) { got = append(got, bytes.Clone(k)); return true, nil })
	if want := [][]byte{keys[3], keys[2], keys[1], keys[0]}; !reflect.DeepEqual(got, want) {
		t.Errorf("reverse ScanPrefix(x) = % x", got)
	}
}

func TestGetCopiesAndBatches(t *testing.T) {
	db := openMem(t)
	commit(t, db, func(b *Batch) {
		b.Set([]byte("k1"), []byte("value"))
		b.Set([]byte("k2"), nil)
		b.PutMeta("empty", []byte{})
	})
	v, err := db.Get([]byte("k1"))
	if err != nil {
		t.Fatal(err)
	}
	v[0] = 'X'
	if again, _ := db.Get([]byte("k1")); string(again) != "value" {
		t.Errorf("Get returned a shared buffer: %q", again)
	}
	for _, k := range []string{"k2", "mempty"} {
		v, err := db.Get([]byte(k))
		if err != nil || v == nil || len(v) != 0 {
			t.Errorf("empty value %s = %#v, %v (want a non-nil empty slice)", k, v, err)
		}
	}
	if _, err := db.Get([]byte("nope")); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing key: %v", err)
	}

	// An uncommitted batch changes nothing; Empty reports writes.
	b := db.NewBatch()
	if !b.Empty() {
		t.Error("new batch not empty")
	}
	b.Set([]byte("k3"), []byte("x"))
	b.Delete([]byte("k1"))
	if b.Empty() {
		t.Error("batch with writes is empty")
	}
	b.Close()
	if _, err := db.Get([]byte("k3")); !errors.Is(err, ErrNotFound) {
		t.Errorf("closed batch applied: %v", err)
	}

	// DeleteRange and CommitNoSync.
	b = db.NewBatch()
	b.DeleteRange([]byte("k"), []byte("l"))
	if err := b.CommitNoSync(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	n := 0
	_ = db.ScanPrefix([]byte("k"), false, func(_, _ []byte) (bool, error) { n++; return true, nil })
	if n != 0 {
		t.Errorf("%d keys left after DeleteRange", n)
	}
	if _, err := db.GetMeta("empty"); err != nil {
		t.Errorf("DeleteRange removed a key outside its range: %v", err)
	}
	if !bytes.Equal(MetaKey("mode"), []byte("mmode")) {
		t.Errorf("MetaKey = %q", MetaKey("mode"))
	}
}

func TestIsLockErr(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{syscall.EAGAIN, true},
		{syscall.EACCES, true}, // what fcntl reports on some systems for a held lock
		{fmt.Errorf("wrapped: %w", syscall.EAGAIN), true},
		{errors.New("lock held by current process"), true},
		// Failing to create the LOCK file is a permission problem, not
		// another process.
		{&os.PathError{Op: "open", Path: "/data/LOCK", Err: syscall.EACCES}, false},
		{&os.PathError{Op: "open", Path: "/data/LOCK", Err: syscall.EROFS}, false},
		{syscall.ENOSPC, false},
	} {
		if got := isLockErr(tc.err); got != tc.want {
			t.Errorf("isLockErr(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestLockedErrorShape(t *testing.T) {
	err := error(&LockedError{Dir: "/srv/memsvc/data", Err: syscall.EAGAIN})
	if !errors.Is(err, ErrLocked) || !errors.Is(err, syscall.EAGAIN) {
		t.Errorf("errors.Is: locked %v, cause %v", errors.Is(err, ErrLocked), errors.Is(err, syscall.EAGAIN))
	}
	msg := err.Error()
	for _, want := range []string{"/srv/memsvc/data", "--server-url", "--data-dir"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
}

// The same process opening a directory twice fails fast too.
func TestOpenTwiceInProcess(t *testing.T) {
	db, dir := openTemp(t)
	_ = db
	start := time.Now()
	db2, err := Open(dir, Options{})
	if err == nil {
		db2.Close()
		t.Fatal("second Open succeeded")
	}
	if !errors.Is(err, ErrLocked) {
		t.Errorf("second Open: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("second Open took %v", d)
	}
}

func TestCloseTwice(t *testing.T) {
	db, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
}

func TestSnapshot(t *testing.T) {
	db, err := OpenInMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	put := func(rec *memory.MemoryRecord) {
		b := db.NewBatch()
		defer b.Close()
		b.PutRecord(DefaultNS, rec)
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	first := minimalRecord()
	put(first)
	snap := db.NewSnapshot()
	defer snap.Close()
	second := minimalRecord()
	second.ID[15]++
	put(second)
	count := func(scan func(NS, memory.StoreType, func(*memory.MemoryRecord) error) error) int {
		n := 0
		if err := scan(DefaultNS, first.Store, func(*memory.MemoryRecord) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if got := count(snap.ScanRecords); got != 1 {
		t.Fatalf("snapshot sees %d records, want 1", got)
	}
	if got := count(db.ScanRecords); got != 2 {
		t.Fatalf("db sees %d records, want 2", got)
	}
}

// TestAppendCommitsTogether: batches appended to another commit with it,
// their bookkeeping included (a namespace dropped in an appended batch is
// forgotten when the group commits), and a batch Commit would refuse is
// refused by Append without changing the group.
func TestAppendCommitsTogether(t *testing.T) {
	db := openMem(t)
	ns, err := db.CreateNamespace("gone")
	if err != nil {
		t.Fatal(err)
	}
	group := db.NewBatch()
	defer group.Close()
	a, b := db.NewBatch(), db.NewBatch()
	defer a.Close()
	defer b.Close()
	a.Set([]byte("ka"), []byte("1"))
	b.Set([]byte("kb"), []byte("2"))
	b.DropNamespace(ns)
	for _, o := range []*Batch{a, b} {
		if err := group.Append(o); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Get([]byte("ka")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("appended write visible before the group committed: %v", err)
	}
	if err := group.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ka", "kb"} {
		if _, err := db.Get([]byte(k)); err != nil {
			t.Errorf("%s after the group commit: %v", k, err)
		}
	}
	if _, ok := db.LookupNamespace("gone"); ok {
		t.Error("the namespace dropped in an appended batch is still live")
	}
	// An appended batch may be committed again on its own: Append left it as it was.
	if a.Empty() {
		t.Error("Append emptied the appended batch")
	}
}

func TestAppendRefusesPlaintextRecords(t *testing.T) {
	dir := t.TempDir()
	closeDB(t, openEnc(t, dir, "pw")) // header only
	db := openPlain(t, dir)
	group := db.NewBatch()
	defer group.Close()
	group.PutMeta("k", []byte("v"))
	rec := db.NewBatch()
	defer rec.Close()
	rec.PutRecord(DefaultNS, minimalRecord())
	if err := group.Append(rec); !errors.Is(err, ErrEncrypted) {
		t.Fatalf("Append of a plaintext record in a locked directory: %v", err)
	}
	if err := group.Commit(); err != nil {
		t.Fatalf("the group after a refused Append: %v", err)
	}
	if sealed, plain := sealedValues(t, db); sealed+plain != 0 {
		t.Errorf("%d record values written", sealed+plain)
	}
}
