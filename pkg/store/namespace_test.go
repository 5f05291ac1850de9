package store

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

func createNS(t *testing.T, db *DB, name string) NS {
	t.Helper()
	ns, err := db.CreateNamespace(name)
	if err != nil {
		t.Fatalf("CreateNamespace(%s): %v", name, err)
	}
	return ns
}

func names(db *DB) []string {
	var out []string
	for _, n := range db.Namespaces() {
		out = append(out, n.Name)
	}
	return out
}

func TestNamespaceRegistry(t *testing.T) {
	db, dir := openTempNoClose(t)
	if got := db.Namespaces(); !reflect.DeepEqual(got, []Namespace{{DefaultNS, memory.DefaultNamespace}}) {
		t.Fatalf("a new directory has namespaces %v, want only the default one", got)
	}
	if ns, err := db.CreateNamespace(memory.DefaultNamespace); err != nil || ns != DefaultNS {
		t.Errorf("CreateNamespace(default) = %d, %v", ns, err)
	}
	a := createNS(t, db, "proj-a")
	b := createNS(t, db, "proj-b")
	if a == DefaultNS || b == DefaultNS || a == b {
		t.Fatalf("numbers %d and %d", a, b)
	}
	if again := createNS(t, db, "proj-a"); again != a {
		t.Errorf("creating proj-a again gave %d, want %d", again, a)
	}
	for _, bad := range []string{"", "Proj", "-x", "a b", string(bytes.Repeat([]byte("a"), 65))} {
		if _, err := db.CreateNamespace(bad); !errors.Is(err, memory.ErrValidation) {
			t.Errorf("CreateNamespace(%q) = %v, want an invalid-request error", bad, err)
		}
	}
	if got, want := names(db), []string{"default", "proj-a", "proj-b"}; !slices.Equal(got, want) {
		t.Errorf("namespaces %v, want %v", got, want)
	}
	commit(t, db, func(bt *Batch) { bt.DropNamespace(a) })
	if _, ok := db.LookupNamespace("proj-a"); ok {
		t.Error("a dropped namespace is still live")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// The registry survives a restart, and a dropped number stays used.
	db = openPlain(t, dir)
	if got, want := names(db), []string{"default", "proj-b"}; !slices.Equal(got, want) {
		t.Errorf("after reopening: namespaces %v, want %v", got, want)
	}
	if ns, ok := db.LookupNamespace("proj-b"); !ok || ns != b {
		t.Errorf("proj-b is %d, %v after reopening, want %d", ns, ok, b)
	}
	a2 := createNS(t, db, "proj-a")
	if a2 == a || a2 == b || a2 == DefaultNS {
		t.Errorf("proj-a came back as %d: numbers %d (dropped) and %d are taken", a2, a, b)
	}
	c := createNS(t, db, "proj-c")
	if c == a || c == a2 || c == b {
		t.Errorf("proj-c got %d, a number already used", c)
	}

	// The default namespace is emptied by a drop, never removed.
	commit(t, db, func(bt *Batch) { bt.PutRecord(DefaultNS, minimalRecord()) })
	commit(t, db, func(bt *Batch) { bt.DropNamespace(DefaultNS) })
	if ns, ok := db.LookupNamespace(memory.DefaultNamespace); !ok || ns != DefaultNS {
		t.Errorf("default namespace after a drop: %d, %v", ns, ok)
	}
	if n := countPrefix(t, db, []byte{kindCurated}); n != 0 {
		t.Errorf("%d default records left after a drop", n)
	}
}

// otherText gives the sample's records and entries other text, so a
// read tells which copy of an id it found.
func (s sample) otherText() {
	for _, r := range s.recs {
		r.Content = memory.TextContent("the other namespace's copy of " + r.ID.String())
	}
	for _, r := range s.raws {
		r.Content = memory.TextContent("the other namespace's entry " + r.ID.String())
	}
}

// TestNamespacesKeepApart stores records and raw entries with the same ids
// in two namespaces, in every way a database can hold them: each
// namespace reads, scans and indexes its own, and deleting one
// namespace's records or dropping it leaves the other as it was.
func TestNamespacesKeepApart(t *testing.T) {
	for _, mode := range dbModes() {
		t.Run(mode.name, func(t *testing.T) {
			def, other := newSample(), newSample()
			other.otherText()
			var ns NS
			db := mode.setup(t, func(b *Batch) {
				ns = createNS(t, b.db, "other")
				def.put(b)
				other.putIn(b, ns)
				b.PutMeta("mode", []byte("default's"))
				b.PutNSMeta(ns, "mode", []byte("other's"))
				b.Set(append(DerivedPrefix(ns), 'k'), []byte("derived"))
			}, func(*Batch) {})
			def.checkIn(t, db, DefaultNS)
			other.checkIn(t, db, ns)
			if v, err := db.GetNSMeta(ns, "mode"); err != nil || string(v) != "other's" {
				t.Errorf("setting of the other namespace: %q, %v", v, err)
			}
			if v, err := db.GetNSMeta(DefaultNS, "mode"); err != nil || string(v) != "default's" {
				t.Errorf("setting of the default namespace: %q, %v", v, err)
			}

			commit(t, db, func(b *Batch) { b.DeleteAllRecords(ns) })
			def.checkIn(t, db, DefaultNS)
			if got := newestIn(t, db, ns, RawRange{}); len(got) != 0 {
				t.Errorf("%d raw entries left in the other namespace", len(got))
			}
			other.renumber()
			commit(t, db, other.filler(ns))
			commit(t, db, func(b *Batch) { b.DropNamespace(ns) })
			def.checkIn(t, db, DefaultNS)
			if n := countPrefix(t, db, ns.appendPrefix(nil)); n != 0 {
				t.Errorf("%d keys of the dropped namespace left", n)
			}
			if v, err := db.GetMeta("mode"); err != nil || string(v) != "default's" {
				t.Errorf("default's setting after the drop: %q, %v", v, err)
			}

			// A new namespace of the same name starts empty.
			again := createNS(t, db, "other")
			if again == ns {
				t.Fatalf("the dropped number %d was reused", ns)
			}
			for _, st := range memory.PersistentStores() {
				if err := db.ScanRecords(again, st, func(*memory.MemoryRecord) error {
					t.Errorf("record in the new namespace")
					return nil
				}); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// filler returns a fill function that stores the sample in ns.
func (s sample) filler(ns NS) func(*Batch) { return func(b *Batch) { s.putIn(b, ns) } }

func TestMigrateEncryptionCoversNamespaces(t *testing.T) {
	dir := t.TempDir()
	db := openPlain(t, dir)
	def, other := newSample(), newSample()
	other.otherText()
	ns := createNS(t, db, "other")
	commit(t, db, func(b *Batch) {
		def.put(b)
		other.putIn(b, ns)
		b.Set(append(DerivedPrefix(ns), 'k'), []byte("term"))
	})
	closeDB(t, db)
	db = openEnc(t, dir, "pw")
	rep, err := db.MigrateEncryption(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := uint64(len(def.raws) + len(other.raws)); rep.RawJournal.Migrated != want {
		t.Errorf("migrated %d raw entries, want %d", rep.RawJournal.Migrated, want)
	}
	var recs uint64
	for _, l := range rep.Lines()[1:5] {
		recs += l.Migrated
	}
	if want := uint64(len(def.recs) + len(other.recs)); recs != want {
		t.Errorf("migrated %d records, want %d", recs, want)
	}
	if _, plain := sealedValues(t, db); plain != 0 {
		t.Errorf("%d plaintext values left", plain)
	}
	for _, p := range [][]byte{ns.key(kindSession, 0), DerivedPrefix(ns)} {
		if n := countPrefix(t, db, p); n != 0 {
			t.Errorf("%d keys left under %q", n, p)
		}
	}
	def.checkIn(t, db, DefaultNS)
	other.checkIn(t, db, ns)
}

// TestLayoutOneOpensAsDefault writes a directory as memsvc did before
// namespaces existed (layout 1, its keys spelled out byte by byte here) and
// opens it: everything is in the default namespace, nothing was moved,
// and the layout byte now says 2.
func TestLayoutOneOpensAsDefault(t *testing.T) {
	dir := t.TempDir()
	db := openPlain(t, dir)
	rec, raw := fullRecord(), fullRaw()
	commit(t, db, func(b *Batch) {
		b.Set([]byte{'F'}, []byte{1})
		b.Set(append([]byte{'c', byte(rec.Store)}, rec.ID[:]...), EncodeRecord(rec))
		b.Set(append([]byte{'j'}, raw.ID[:]...), EncodeRaw(raw))
		ts := appendTime(nil, raw.CreatedAt)
		flags := []byte{byte(FlagsOf(raw))}
		session := append([]byte{'s', byte(len(raw.SessionID))}, raw.SessionID...)
		b.Set(append(append(session, ts...), raw.ID[:]...), flags)
		b.Set(append(append([]byte{'t'}, ts...), raw.ID[:]...), flags)
		b.Set([]byte("mrecall_mode"), []byte{1, 2, 1, 1, 1, 1})
	})
	closeDB(t, db)

	for range 2 { // opening again changes nothing more
		db = openPlain(t, dir)
		if v, err := db.Get([]byte{'F'}); err != nil || !bytes.Equal(v, []byte{2}) {
			t.Errorf("layout after opening: %v, %v", v, err)
		}
		if got := names(db); !slices.Equal(got, []string{memory.DefaultNamespace}) {
			t.Errorf("namespaces %v", got)
		}
		if got, err := db.GetRecord(DefaultNS, rec.Store, rec.ID); err != nil || !reflect.DeepEqual(got, normaliseRecord(rec)) {
			t.Errorf("record: %v, %v", got, err)
		}
		if got, err := db.GetRaw(DefaultNS, raw.ID); err != nil || !reflect.DeepEqual(got, normaliseRaw(raw)) {
			t.Errorf("raw entry: %v, %v", got, err)
		}
		if got := newestIn(t, db, DefaultNS, RawRange{Session: &raw.SessionID}); !slices.Equal(got, []memory.ID{raw.ID}) {
			t.Errorf("session index: %v", got)
		}
		if got := newestIn(t, db, DefaultNS, RawRange{}); !slices.Equal(got, []memory.ID{raw.ID}) {
			t.Errorf("time index: %v", got)
		}
		if v, err := db.GetNSMeta(DefaultNS, "recall_mode"); err != nil || len(v) != 6 {
			t.Errorf("setting: %v, %v", v, err)
		}
		closeDB(t, db)
	}
}

func TestQuarantineByNamespace(t *testing.T) {
	db := openMem(t)
	ns := createNS(t, db, "other")
	rec := minimalRecord()
	commit(t, db, func(b *Batch) {
		b.PutRecord(DefaultNS, rec)
		b.Set(recordKey(ns, rec.Store, rec.ID), []byte{0x7f}) // not a record
	})
	if _, err := db.GetRecord(ns, rec.Store, rec.ID); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged record read as %v", err)
	}
	if got := db.Quarantined(); len(got) != 1 || got[0].NS != ns || got[0].ID != rec.ID {
		t.Fatalf("quarantined %v", got)
	}
	if db.QuarantinedIn(DefaultNS) != 0 || db.QuarantinedIn(ns) != 1 {
		t.Errorf("quarantined per namespace: default %d, other %d", db.QuarantinedIn(DefaultNS), db.QuarantinedIn(ns))
	}
	if _, err := db.GetRecord(DefaultNS, rec.Store, rec.ID); err != nil {
		t.Errorf("the default namespace's record of the same id: %v", err)
	}
	commit(t, db, func(b *Batch) { b.DropNamespace(ns) })
	if n := db.QuarantinedCount(); n != 0 {
		t.Errorf("%d values still quarantined after their namespace was dropped", n)
	}
}

func TestCompactKeepsData(t *testing.T) {
	db, _ := openTemp(t)
	s := newSample()
	ns := createNS(t, db, "other")
	commit(t, db, func(b *Batch) { s.put(b); s.putIn(b, ns) })
	commit(t, db, func(b *Batch) { b.DropNamespace(ns) })
	if err := db.Compact(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.check(t, db)
	if n := countPrefix(t, db, ns.appendPrefix(nil)); n != 0 {
		t.Errorf("%d keys of the dropped namespace after compacting", n)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	commit(t, db, func(b *Batch) { b.PutMeta("k", []byte("v")) })
	if err := db.Compact(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("compacting with a cancelled context: %v", err)
	}
}
