package searchindex

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"slices"
	"testing"
)

// smallIndex builds an index of n random documents with nf fields and
// deletes some of them.
func smallIndex(t testing.TB, seed uint64, nf, n int) *Index {
	t.Helper()
	g := newRandCorpus(seed, nf, 30)
	ix, err := New(testConfig(nf))
	if err != nil {
		t.Fatal(err)
	}
	ix.SetAutoCompact(false)
	for i := range n {
		if err := ix.Add(g.doc(testID(i))); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i += 7 {
		ix.Delete(testID(i))
	}
	return ix
}

func sameSearches(t *testing.T, a, b *Index, nf int) {
	t.Helper()
	g := newRandCorpus(99, nf, 30)
	for range 50 {
		q := g.query(a)
		x, err1 := a.Search(q)
		y, err2 := b.Search(q)
		if err1 != nil || err2 != nil || !slices.Equal(x, y) {
			t.Fatalf("query %+v: %v, %v\n%v\n%v", q.Terms, err1, err2, x, y)
		}
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	for nf := 1; nf <= MaxFields; nf++ {
		ix := smallIndex(t, uint64(nf), nf, 400)
		snap := ix.Snapshot()
		// Changes after the snapshot are not in it.
		ix2 := smallIndex(t, uint64(nf), nf, 400)
		if err := ix.Add(newRandCorpus(5, nf, 30).doc(testID(10_000))); err != nil {
			t.Fatal(err)
		}
		data := snap.AppendTo([]byte("prefix"), []byte("label"))
		if !bytes.HasPrefix(data, []byte("prefix")) {
			t.Fatal("AppendTo dropped dst")
		}
		data = data[len("prefix"):]
		loaded, label, err := LoadSnapshot(testConfig(nf), data)
		if err != nil {
			t.Fatal(err)
		}
		if string(label) != "label" {
			t.Errorf("label %q", label)
		}
		if got, want := loaded.Stats(), ix2.Stats(); got.Docs != want.Docs || got.FieldLengths != want.FieldLengths || got.Deleted != 0 {
			t.Errorf("loaded stats %+v, want %+v without deletions", got, want)
		}
		if snap.Docs() != ix2.Stats().Docs {
			t.Errorf("snapshot has %d documents, want %d", snap.Docs(), ix2.Stats().Docs)
		}
		sameSearches(t, ix2, loaded, nf)
		// A loaded index writes the same bytes, and so does the
		// compacted original.
		again := loaded.Snapshot().AppendTo(nil, []byte("label"))
		ix2.Compact()
		compacted := ix2.Snapshot().AppendTo(nil, []byte("label"))
		if !bytes.Equal(again, data) || !bytes.Equal(compacted, data) {
			t.Errorf("fields %d: snapshots of the same documents differ", nf)
		}
	}
}

func TestSnapshotOfEmptyIndex(t *testing.T) {
	ix, err := New(testConfig(2))
	if err != nil {
		t.Fatal(err)
	}
	loaded, _, err := LoadSnapshot(testConfig(2), ix.Snapshot().AppendTo(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	if st := loaded.Stats(); st.Docs != 0 {
		t.Errorf("stats %+v", st)
	}
	if err := loaded.Add(&Document{ID: testID(1), Fields: [MaxFields][]string{{"a b"}}}); err != nil {
		t.Fatal(err)
	}
	if hits, err := loaded.Search(Query{Terms: loaded.QueryTerms("b"), Limit: 5}); err != nil || len(hits) != 1 {
		t.Errorf("search after load: %v, %v", hits, err)
	}
}

// withCRC replaces the checksum of a snapshot body.
func withCRC(body []byte) []byte {
	return binary.LittleEndian.AppendUint32(slices.Clone(body), crc32.Checksum(body, castagnoli))
}

func TestSnapshotRefusesDamage(t *testing.T) {
	ix := smallIndex(t, 1, 2, 60)
	data := ix.Snapshot().AppendTo(nil, []byte("x"))
	cfg := testConfig(2)
	for i := range data {
		for _, flip := range []byte{0x01, 0x80, 0xff} {
			bad := slices.Clone(data)
			bad[i] ^= flip
			if _, _, err := LoadSnapshot(cfg, bad); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("byte %d ^ %#x: %v, want ErrCorrupt", i, flip, err)
			}
		}
	}
	for n := range len(data) {
		if _, _, err := LoadSnapshot(cfg, data[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("cut to %d bytes: %v, want ErrCorrupt", n, err)
		}
	}
	if _, _, err := LoadSnapshot(cfg, append(slices.Clone(data), 0)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("trailing byte: %v", err)
	}
	if _, _, err := LoadSnapshot(cfg, []byte("{\"not\": \"a snapshot\"}")); !errors.Is(err, ErrCorrupt) {
		t.Errorf("foreign data: %v", err)
	}
	// Structural damage behind a valid checksum.
	body := data[:len(data)-4]
	for _, cut := range []int{1, 5, 20} {
		if _, _, err := LoadSnapshot(cfg, withCRC(body[:len(body)-cut])); !errors.Is(err, ErrCorrupt) {
			t.Errorf("body cut by %d with a valid checksum: %v", cut, err)
		}
	}
}

func TestSnapshotRefusesStale(t *testing.T) {
	ix := smallIndex(t, 2, 2, 30)
	data := ix.Snapshot().AppendTo(nil, nil)
	cfg := testConfig(2)

	other := cfg
	other.AnalyzerVersion = "words/2"
	if _, _, err := LoadSnapshot(other, data); !errors.Is(err, ErrStale) {
		t.Errorf("other analyzer: %v", err)
	}
	other = testConfig(2)
	other.Fields[1].Weight = 0.7
	if _, _, err := LoadSnapshot(other, data); !errors.Is(err, ErrStale) {
		t.Errorf("other field weight: %v", err)
	}
	other = testConfig(2)
	other.K1 = 2
	if _, _, err := LoadSnapshot(other, data); !errors.Is(err, ErrStale) {
		t.Errorf("other k1: %v", err)
	}
	if _, _, err := LoadSnapshot(testConfig(3), data); !errors.Is(err, ErrStale) {
		t.Errorf("other field count: %v", err)
	}
	// A future format version.
	body := slices.Clone(data[:len(data)-4])
	body[len(snapshotMagic)] = snapshotVersion + 1
	if _, _, err := LoadSnapshot(cfg, withCRC(body)); !errors.Is(err, ErrStale) {
		t.Errorf("format version %d: %v", snapshotVersion+1, err)
	}
}

// checkLoaded checks that an index LoadSnapshot accepted is usable.
func checkLoaded(t *testing.T, ix *Index, nf int) {
	st := ix.Stats()
	data := ix.Snapshot().AppendTo(nil, nil)
	again, _, err := LoadSnapshot(ix.Config(), data)
	if err != nil {
		t.Fatalf("a loaded snapshot does not load again: %v", err)
	}
	if st2 := again.Stats(); st2.Docs != st.Docs || st2.FieldLengths != st.FieldLengths {
		t.Fatalf("stats %+v, then %+v", st, st2)
	}
	g := newRandCorpus(3, nf, 30)
	for range 5 {
		q := g.query(ix)
		if _, err := ix.Search(q); err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Count(q); err != nil {
			t.Fatal(err)
		}
	}
}

func snapshotSeeds(f *testing.F) {
	for nf := 1; nf <= 3; nf++ {
		ix := smallIndex(f, uint64(nf), nf, 12)
		f.Add(uint8(nf), ix.Snapshot().AppendTo(nil, []byte("seed")))
	}
}

// FuzzLoadSnapshot feeds arbitrary bytes to LoadSnapshot: it never
// panics, and what it accepts is a usable index.
func FuzzLoadSnapshot(f *testing.F) {
	snapshotSeeds(f)
	f.Fuzz(loadAny)
}

// loadAny loads data as the snapshot of an index of one to three fields
// (by nf): it fails the test unless LoadSnapshot refuses it with ErrCorrupt
// or ErrStale or returns a usable index.
func loadAny(t *testing.T, nf uint8, data []byte) {
	t.Helper()
	n := 1 + int(nf)%3
	ix, _, err := LoadSnapshot(testConfig(n), data)
	if err != nil {
		if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrStale) {
			t.Fatalf("error %v is neither ErrCorrupt nor ErrStale", err)
		}
		return
	}
	checkLoaded(t, ix, n)
}

// FuzzLoadSnapshotBody is FuzzLoadSnapshot with a valid checksum, so the
// structure behind it is what gets exercised.
func FuzzLoadSnapshotBody(f *testing.F) {
	snapshotSeeds(f)
	f.Fuzz(func(t *testing.T, nf uint8, data []byte) {
		if len(data) >= 4 {
			data = withCRC(data[:len(data)-4])
		}
		loadAny(t, nf, data)
	})
}
