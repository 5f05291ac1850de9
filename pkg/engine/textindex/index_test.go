package textindex

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

var testPrefix = []byte("xT")

// id returns a test document id whose last two bytes are n.
func id(n int) memory.ID {
	var d memory.ID
	d[0] = 0x01
	d[14] = byte(n >> 8)
	d[15] = byte(n)
	return d
}

func newMem(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.OpenInMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// open opens the index under testPrefix, building an empty one when there
// is none yet.
func open(t *testing.T, db *store.DB) *Index {
	t.Helper()
	ix, err := Open(db, testPrefix)
	if errors.Is(err, ErrStale) {
		ix, err = Rebuild(db, testPrefix, func(AddFunc) error { return nil })
	}
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func TestOpenEmptyPrefixIsStale(t *testing.T) {
	db := newMem(t)
	if ix, err := Open(db, testPrefix); !errors.Is(err, ErrStale) || ix != nil {
		t.Fatalf("Open = %v, %v; want nil, ErrStale", ix, err)
	}
	checkDump(t, db)
	open(t, db)
	checkDump(t, db, "v 1")
	if _, err := Open(db, testPrefix); err != nil {
		t.Fatalf("Open after Rebuild = %v", err)
	}
}

// put indexes one document in its own batch and applies the change.
func put(t *testing.T, ix *Index, doc memory.ID, attrs string, texts ...string) {
	t.Helper()
	b := ix.db.NewBatch()
	defer b.Close()
	c, err := ix.Put(b, doc, []byte(attrs), texts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	ix.Apply(c)
}

func del(t *testing.T, ix *Index, doc memory.ID) {
	t.Helper()
	b := ix.db.NewBatch()
	defer b.Close()
	c, err := ix.Delete(b, doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	ix.Apply(c)
}

// dump renders every entry under the test prefix, decoded.
func dump(t *testing.T, db *store.DB) []string {
	t.Helper()
	var out []string
	docName := func(d []byte) string {
		if len(d) != 16 {
			t.Fatalf("doc id %x", d)
		}
		return fmt.Sprintf("d%d", int(d[14])<<8|int(d[15]))
	}
	err := db.ScanPrefix(testPrefix, false, func(k, v []byte) (bool, error) {
		k = k[len(testPrefix):]
		switch k[0] {
		case kindVersion:
			ver, _ := binary.Uvarint(v)
			out = append(out, fmt.Sprintf("v %d", ver))
		case kindPosting:
			term, doc, ok := bytes.Cut(k[1:], []byte{0})
			if !ok {
				t.Fatalf("posting key %q", k)
			}
			tf, n1 := binary.Uvarint(v)
			dl, n2 := binary.Uvarint(v[n1:])
			out = append(out, fmt.Sprintf("p %s %s tf=%d dl=%d attrs=%q", term, docName(doc), tf, dl, v[n1+n2:]))
		case kindForward:
			f, err := decodeForward(v)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("f %s dl=%d terms=%s attrs=%q", docName(k[1:]), f.length, strings.Join(f.terms, ","), f.attrs))
		default:
			t.Fatalf("unexpected key %q", k)
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func checkDump(t *testing.T, db *store.DB, want ...string) {
	t.Helper()
	if got := dump(t, db); !slices.Equal(got, want) {
		t.Errorf("entries:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func checkStats(t *testing.T, ix *Index, docs, length int64) {
	t.Helper()
	if got := ix.Stats(); got != (Stats{Docs: docs, Length: length}) {
		t.Errorf("stats = %+v, want docs %d length %d", got, docs, length)
	}
}

func TestPutReplaceDelete(t *testing.T) {
	db := newMem(t)
	ix := open(t, db)
	checkDump(t, db, "v 1")
	checkStats(t, ix, 0, 0)

	put(t, ix, id(1), "A", "Rotating keys", "key summary")
	put(t, ix, id(2), "B", "cat")
	checkDump(t, db,
		"f d1 dl=4 terms=key,rotat,summari attrs=\"A\"",
		"f d2 dl=1 terms=cat attrs=\"B\"",
		"p cat d2 tf=1 dl=1 attrs=\"B\"",
		"p key d1 tf=2 dl=4 attrs=\"A\"",
		"p rotat d1 tf=1 dl=4 attrs=\"A\"",
		"p summari d1 tf=1 dl=4 attrs=\"A\"",
		"v 1",
	)
	checkStats(t, ix, 2, 5)

	// Replace: "summari" goes, "dog" comes, key and rotat are rewritten
	// with the new length and attrs.
	put(t, ix, id(1), "AA", "rotation of the key", "dog")
	checkDump(t, db,
		"f d1 dl=3 terms=dog,key,rotat attrs=\"AA\"",
		"f d2 dl=1 terms=cat attrs=\"B\"",
		"p cat d2 tf=1 dl=1 attrs=\"B\"",
		"p dog d1 tf=1 dl=3 attrs=\"AA\"",
		"p key d1 tf=1 dl=3 attrs=\"AA\"",
		"p rotat d1 tf=1 dl=3 attrs=\"AA\"",
		"v 1",
	)
	checkStats(t, ix, 2, 4)

	// A document without terms is removed.
	put(t, ix, id(2), "B", "the and of", "🎉")
	checkDump(t, db,
		"f d1 dl=3 terms=dog,key,rotat attrs=\"AA\"",
		"p dog d1 tf=1 dl=3 attrs=\"AA\"",
		"p key d1 tf=1 dl=3 attrs=\"AA\"",
		"p rotat d1 tf=1 dl=3 attrs=\"AA\"",
		"v 1",
	)
	checkStats(t, ix, 1, 3)

	// Deleting an unknown document changes nothing.
	del(t, ix, id(9))
	checkStats(t, ix, 1, 3)

	del(t, ix, id(1))
	checkDump(t, db, "v 1")
	checkStats(t, ix, 0, 0)
}

func TestChangeDroppedWithoutCommit(t *testing.T) {
	db := newMem(t)
	ix := open(t, db)
	b := db.NewBatch()
	if _, err := ix.Put(b, id(1), nil, "never committed"); err != nil {
		t.Fatal(err)
	}
	b.Close()
	checkDump(t, db, "v 1")
	checkStats(t, ix, 0, 0)
}

func TestSeveralDocumentsInOneBatch(t *testing.T) {
	db := newMem(t)
	ix := open(t, db)
	put(t, ix, id(3), "", "old text here")
	b := db.NewBatch()
	defer b.Close()
	var c Change
	for i, text := range []string{"alpha beta", "gamma", "delta epsilon zeta"} {
		ci, err := ix.Put(b, id(i), nil, text)
		if err != nil {
			t.Fatal(err)
		}
		c = c.Merge(ci)
	}
	cd, err := ix.Delete(b, id(3))
	if err != nil {
		t.Fatal(err)
	}
	c = c.Merge(cd)
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	ix.Apply(c)
	checkStats(t, ix, 3, 6)
	reopened := open(t, db)
	checkStats(t, reopened, 3, 6)
}

func TestOpenRecomputesStats(t *testing.T) {
	dir := t.TempDir()
	db, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ix := open(t, db)
	put(t, ix, id(1), "a", "one two three")
	put(t, ix, id(2), "b", "four five")
	put(t, ix, id(3), "c", "six")
	del(t, ix, id(3))
	want := ix.Stats()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	ix = open(t, db)
	if got := ix.Stats(); got != want || got.Docs != 2 {
		t.Errorf("stats after reopen = %+v, want %+v", got, want)
	}
	res, err := ix.Search(Query{Text: "five", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 1 || res.Hits[0].Doc != id(2) || string(res.Hits[0].Attrs) != "b" {
		t.Errorf("search after reopen = %+v", res)
	}
}

func TestOpenStale(t *testing.T) {
	tests := []struct {
		name  string
		setup func(b *store.Batch)
	}{
		{"other version", func(b *store.Batch) {
			b.Set(append(bytes.Clone(testPrefix), kindVersion), binary.AppendUvarint(nil, formatVersion+1))
		}},
		{"garbage version", func(b *store.Batch) {
			b.Set(append(bytes.Clone(testPrefix), kindVersion), []byte{0xff})
		}},
		{"missing version on a non-empty prefix", func(b *store.Batch) {
			b.Delete(append(bytes.Clone(testPrefix), kindVersion))
		}},
		{"corrupt forward entry", func(b *store.Batch) {
			d := id(7)
			b.Set(append(append(bytes.Clone(testPrefix), kindForward), d[:]...), []byte{0x80})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := newMem(t)
			ix := open(t, db)
			put(t, ix, id(1), "", "some text")
			b := db.NewBatch()
			tt.setup(b)
			if err := b.Commit(); err != nil {
				t.Fatal(err)
			}
			b.Close()
			got, err := Open(db, testPrefix)
			if !errors.Is(err, ErrStale) || got != nil {
				t.Fatalf("Open = %v, %v; want nil, ErrStale", got, err)
			}
			ix, err = Rebuild(db, testPrefix, func(add AddFunc) error {
				return add(id(2), []byte("r"), "rebuilt text")
			})
			if err != nil {
				t.Fatal(err)
			}
			checkDump(t, db,
				"f d2 dl=2 terms=rebuilt,text attrs=\"r\"",
				"p rebuilt d2 tf=1 dl=2 attrs=\"r\"",
				"p text d2 tf=1 dl=2 attrs=\"r\"",
				"v 1",
			)
			checkStats(t, ix, 1, 2)
			checkStats(t, open(t, db), 1, 2)
		})
	}
}

func TestOpenCorruptMatchesBothErrors(t *testing.T) {
	db := newMem(t)
	open(t, db)
	b := db.NewBatch()
	b.Set(append(append(bytes.Clone(testPrefix), kindForward), make([]byte, 16)...), nil)
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	_, err := Open(db, testPrefix)
	if !errors.Is(err, ErrStale) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open = %v, want ErrStale and ErrCorrupt", err)
	}
}

func TestRebuildInterrupted(t *testing.T) {
	for _, runPostings := range []int{maxRunPostings, 500} {
		t.Run(fmt.Sprint("run=", runPostings), func(t *testing.T) {
			db := newMem(t)
			ix := open(t, db)
			put(t, ix, id(1), "", "old")
			boom := errors.New("boom")
			_, err := rebuild(db, testPrefix, func(add AddFunc) error {
				g := NewCorpusGen(1)
				for i := range 2000 {
					if err := add(benchID(i), nil, g.Document()); err != nil {
						return err
					}
				}
				return boom
			}, runPostings)
			if !errors.Is(err, boom) {
				t.Fatalf("rebuild = %v, want boom", err)
			}
			if _, err := Open(db, testPrefix); !errors.Is(err, ErrStale) {
				t.Fatalf("Open after interrupted rebuild = %v, want ErrStale", err)
			}
			got := dump(t, db)
			if slices.Contains(got, "v 1") || slices.Contains(got, "p old d1 tf=1 dl=1 attrs=\"\"") {
				t.Fatalf("old entries or a version survived: %d entries", len(got))
			}
			if runPostings < maxRunPostings && len(got) < 500 {
				t.Fatalf("expected earlier runs on disk, got %d entries", len(got))
			}
		})
	}
}

// TestRebuildRuns checks that a rebuild written in many runs produces
// exactly the entries of one written in a single run and of Put.
func TestRebuildRuns(t *testing.T) {
	g := NewCorpusGen(5)
	docs := make([]string, 300)
	for i := range docs {
		docs[i] = g.Document()
	}
	docs[17] = "the of and" // no terms
	extra := func(j int) string {
		if j == 17 {
			return "🎉"
		}
		return "extra"
	}
	// Fill in an order that is not id order.
	fill := func(add AddFunc) error {
		for i := range docs {
			j := (i * 7) % len(docs)
			if err := add(id(j), []byte{byte(j), 'x'}, docs[j], extra(j)); err != nil {
				return err
			}
		}
		return nil
	}
	var want []string
	var wantStats Stats
	for _, runPostings := range []int{maxRunPostings, 1000, 1} {
		db := newMem(t)
		ix, err := rebuild(db, testPrefix, fill, runPostings)
		if err != nil {
			t.Fatal(err)
		}
		got := dump(t, db)
		if want == nil {
			want, wantStats = got, ix.Stats()
			continue
		}
		if !slices.Equal(got, want) || ix.Stats() != wantStats {
			t.Errorf("run size %d: %d entries, stats %+v; want %d, %+v", runPostings, len(got), ix.Stats(), len(want), wantStats)
		}
	}
	db := newMem(t)
	ix := open(t, db)
	for i := range docs {
		put(t, ix, id(i), string([]byte{byte(i), 'x'}), docs[i], extra(i))
	}
	if got := dump(t, db); !slices.Equal(got, want) || ix.Stats() != wantStats {
		t.Errorf("Put: %d entries, stats %+v; want %d, %+v", len(got), ix.Stats(), len(want), wantStats)
	}
	if wantStats.Docs != 299 {
		t.Errorf("docs = %d, want 299", wantStats.Docs)
	}
}

func TestRebuildDuplicate(t *testing.T) {
	for _, runPostings := range []int{maxRunPostings, 3} {
		db := newMem(t)
		_, err := rebuild(db, testPrefix, func(add AddFunc) error {
			for _, n := range []int{1, 2, 3, 2} {
				if err := add(id(n), nil, "some words here"); err != nil {
					return err
				}
			}
			return nil
		}, runPostings)
		if !errors.Is(err, ErrDuplicate) {
			t.Errorf("run size %d: rebuild = %v, want ErrDuplicate", runPostings, err)
		}
		if _, err := Open(db, testPrefix); !errors.Is(err, ErrStale) {
			t.Errorf("Open after failed rebuild = %v, want ErrStale", err)
		}
	}
}

func TestRebuildKeepsNoReferenceToCallerSlices(t *testing.T) {
	db := newMem(t)
	texts := make([]string, 1)
	attrs := make([]byte, 1)
	_, err := Rebuild(db, testPrefix, func(add AddFunc) error {
		for i, w := range []string{"alpha", "beta", "gamma"} {
			texts[0], attrs[0] = w, byte('a'+i)
			if err := add(id(i), attrs, texts...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkDump(t, db,
		"f d0 dl=1 terms=alpha attrs=\"a\"",
		"f d1 dl=1 terms=beta attrs=\"b\"",
		"f d2 dl=1 terms=gamma attrs=\"c\"",
		"p alpha d0 tf=1 dl=1 attrs=\"a\"",
		"p beta d1 tf=1 dl=1 attrs=\"b\"",
		"p gamma d2 tf=1 dl=1 attrs=\"c\"",
		"v 1",
	)
}

func TestRebuildSkipsEmptyDocuments(t *testing.T) {
	db := newMem(t)
	ix, err := Rebuild(db, testPrefix, func(add AddFunc) error {
		for i, text := range []string{"first doc", "", "the of", "last"} {
			if err := add(id(i), nil, text); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkStats(t, ix, 2, 3)
	checkDump(t, db,
		"f d0 dl=2 terms=doc,first attrs=\"\"",
		"f d3 dl=1 terms=last attrs=\"\"",
		"p doc d0 tf=1 dl=2 attrs=\"\"",
		"p first d0 tf=1 dl=2 attrs=\"\"",
		"p last d3 tf=1 dl=1 attrs=\"\"",
		"v 1",
	)
}

func TestClear(t *testing.T) {
	db := newMem(t)
	ix := open(t, db)
	put(t, ix, id(1), "", "alpha")
	put(t, ix, id(2), "", "beta")
	// An unrelated key right after the prefix range survives.
	other := store.PrefixEnd(testPrefix)
	b := db.NewBatch()
	b.Set(other, []byte("keep"))
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Close()

	b = db.NewBatch()
	c := ix.Clear(b)
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	ix.Apply(c)
	checkDump(t, db, "v 1")
	checkStats(t, ix, 0, 0)
	if v, err := db.Get(other); err != nil || string(v) != "keep" {
		t.Errorf("neighbour key = %q, %v", v, err)
	}
	put(t, ix, id(3), "", "gamma")
	checkStats(t, open(t, db), 1, 1)
}

func TestPrefixesAreIndependent(t *testing.T) {
	db := newMem(t)
	empty := func(AddFunc) error { return nil }
	a, err := Rebuild(db, []byte("xA"), empty)
	if err != nil {
		t.Fatal(err)
	}
	bIx, err := Rebuild(db, []byte("xB"), empty)
	if err != nil {
		t.Fatal(err)
	}
	put(t, a, id(1), "", "shared word")
	put(t, bIx, id(2), "", "shared other")
	for _, tc := range []struct {
		ix   *Index
		want memory.ID
	}{{a, id(1)}, {bIx, id(2)}} {
		res, err := tc.ix.Search(Query{Text: "shared", Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		if res.Total != 1 || res.Hits[0].Doc != tc.want {
			t.Errorf("search = %+v, want only %v", res, tc.want)
		}
	}
}

func TestApplyIsSafeForConcurrentUse(t *testing.T) {
	db := newMem(t)
	ix := open(t, db)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				ix.Apply(Change{docs: 1, length: 10})
				_ = ix.Stats()
			}
		})
	}
	wg.Wait()
	checkStats(t, ix, 400, 4000)
}

func TestChangeMerge(t *testing.T) {
	a := Change{docs: 1, length: 5}
	b := Change{docs: -1, length: -2}
	if got := a.Merge(b); got != (Change{docs: 0, length: 3}) {
		t.Errorf("merge = %+v", got)
	}
	r := Change{reset: true}
	if got := a.Merge(r).Merge(a); got != (Change{reset: true, docs: 1, length: 5}) {
		t.Errorf("merge with reset = %+v", got)
	}
}

// TestPutNew: for documents that are not indexed, PutNew writes exactly
// what Put writes and changes the statistics the same way, and a document
// without terms writes nothing.
func TestPutNew(t *testing.T) {
	viaPut, viaPutNew := newMem(t), newMem(t)
	a, b := open(t, viaPut), open(t, viaPutNew)
	docs := []struct {
		doc   memory.ID
		texts []string
	}{
		{id(1), []string{"the deploy key rotates on Fridays", "rotation policy"}},
		{id(2), []string{"東京都庁 opens at nine"}},
		{id(3), []string{"the and of"}}, // stop words only: no terms
	}
	for _, d := range docs {
		put(t, a, d.doc, "x", d.texts...)
		batch := b.db.NewBatch()
		c, err := b.PutNew(batch, d.doc, []byte("x"), d.texts...)
		if err != nil {
			t.Fatal(err)
		}
		if err := batch.Commit(); err != nil {
			t.Fatal(err)
		}
		batch.Close()
		b.Apply(c)
	}
	if got, want := dump(t, viaPutNew), dump(t, viaPut); !slices.Equal(got, want) {
		t.Fatalf("PutNew wrote\n%q\nPut wrote\n%q", got, want)
	}
	if sb, sa := b.Stats(), a.Stats(); sb != sa || sa.Docs != 2 {
		t.Fatalf("statistics: PutNew %+v, Put %+v (want 2 documents)", sb, sa)
	}
}
