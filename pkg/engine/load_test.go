package engine

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"memsvc.dev/memsvc/pkg/engine/searchindex"
	"memsvc.dev/memsvc/pkg/engine/vecindex"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// TestStartLoadsWhatARecordByRecordReadGives: the start decodes the
// curated records in batches on several workers and puts them together in
// scan order (loadRecords); the state it
// leaves — entries, incoming links, sessions, creation order, counts,
// vectors, raw counters — is the one a read of every record in store
// order, put one at a time, gives. Checked with the indexes from a
// snapshot and rebuilt, and with store encryption.
func TestStartLoadsWhatARecordByRecordReadGives(t *testing.T) {
	for _, c := range []struct {
		name    string
		sopts   store.Options
		persist bool
	}{
		{"snapshot", store.Options{}, true},
		{"rebuilt", store.Options{}, false},
		{"encrypted", store.Options{Passphrase: []byte("correct horse battery staple")}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSnapEnv(t, c.sopts, c.persist)
			s.open()
			fillVaried(t, s.e)
			s.close()
			loaded := s.open()
			if want := c.persist || c.sopts.Passphrase != nil; loaded != want {
				t.Fatalf("indexes loaded from a snapshot: %v, want %v", loaded, want)
			}
			checkLoadedState(t, s.e)
			s.checkIndexes(snapQueries...)
		})
	}
}

// fillVaried stores records in every persistent store, with embeddings
// of two sizes, sessions, batches with sequential links, links between
// records, and raw entries, then forgets and updates some.
func fillVaried(t *testing.T, e *Engine) {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	vec := func(dim int) []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	words := []string{"alpha", "bravo", "charlie", "delta", "echo"}
	var ids []memory.ID
	for i := range 120 {
		st := memory.PersistentStores()[i%4]
		c := memory.TextContent(fmt.Sprintf("%s %s record %d", words[i%5], words[i/5%5], i))
		if i%7 != 0 {
			c.Blocks[0].Embedding = vec(8 + i%2*4)
		}
		req := memory.EncodeStoreRequest{Content: c, Store: &st}
		if i%4 == 1 {
			req.Associations = []memory.ManualAssociation{{TargetID: ids[i-1], AssociationType: memory.AssocSemantic, Weight: 0.5}}
		}
		if i%3 == 0 {
			req.Metadata = md("session_id", fmt.Sprintf(`"s%d"`, i%4))
		}
		resp, err := e.EncodeStore(ctx, &req)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, resp.RecordID)
	}
	for b := range 3 {
		req := memory.EncodeBatchRequest{InferAssociations: true}
		for i := range 5 {
			c := memory.TextContent(fmt.Sprintf("batch %d %s turn %d", b, words[i], i))
			c.Blocks[0].Embedding = vec(8)
			st := memory.PersistentStores()[(b+i)%4]
			req.Records = append(req.Records, memory.EncodeStoreRequest{Content: c, Store: &st})
		}
		if _, err := e.EncodeBatch(ctx, &req); err != nil {
			t.Fatal(err)
		}
	}
	for i := 5; i < len(ids); i += 11 {
		if _, err := e.Forget(ctx, &memory.ForgetRequest{RecordIDs: []memory.ID{ids[i]}, Confirm: ptr(true)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 30 {
		r := rawReq(fmt.Sprintf("s%d", i%3), fmt.Sprintf("session %s entry %d", words[i%5], i))
		if _, err := e.EncodeStoreRaw(ctx, &r); err != nil {
			t.Fatal(err)
		}
	}
}

// checkLoadedState compares the default namespace's state with the state
// a record-by-record read of its stores gives.
func checkLoadedState(t *testing.T, e *Engine) {
	t.Helper()
	ns := e.defaultSpace()
	want := newState()
	vectors := vecindex.New(nil)
	for _, st := range memory.PersistentStores() {
		err := e.db.ScanRecords(ns.id, st, func(rec *memory.MemoryRecord) error {
			want.put(rec)
			vectors.Put(rec.ID, rec.Content.Embedding())
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var raw rawState
	err := e.db.ScanRawNewest(ns.id, store.RawRange{}, func(_ memory.ID, f store.RawFlags) (bool, error) {
		raw.add(f)
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	got := ns.st
	if len(got.entries) == 0 || !reflect.DeepEqual(got.entries, want.entries) {
		t.Fatalf("entries: %d loaded, %d read", len(got.entries), len(want.entries))
	}
	if len(got.incoming) == 0 || !reflect.DeepEqual(got.incoming, want.incoming) {
		t.Errorf("incoming links: %v loaded, %v read", got.incoming, want.incoming)
	}
	if !reflect.DeepEqual(got.sessions, want.sessions) {
		t.Errorf("sessions: %v loaded, %v read", got.sessions, want.sessions)
	}
	if got.count != want.count || got.edges != want.edges || got.vectors != want.vectors || got.dreamt != want.dreamt {
		t.Errorf("counts: loaded %v %d %d %v, read %v %d %d %v", got.count, got.edges, got.vectors, got.dreamt,
			want.count, want.edges, want.vectors, want.dreamt)
	}
	if a, b := newestIDs(got), newestIDs(want); len(a) != len(want.entries) || !slices.Equal(a, b) {
		t.Errorf("creation order: loaded %d ids, read %d", len(a), len(b))
	}
	if ns.raw != raw || raw.total == 0 {
		t.Errorf("raw counters: loaded %+v, read %+v", ns.raw, raw)
	}
	if !slices.Equal(ns.vectors.Dims(), vectors.Dims()) || len(vectors.Dims()) != 2 {
		t.Fatalf("vector dimensions: loaded %v, read %v", ns.vectors.Dims(), vectors.Dims())
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, dim := range vectors.Dims() {
		if ns.vectors.Len(dim) != vectors.Len(dim) {
			t.Errorf("dimension %d: %d vectors loaded, %d read", dim, ns.vectors.Len(dim), vectors.Len(dim))
		}
		for range 5 {
			q := make([]float32, dim)
			for i := range q {
				q[i] = float32(rng.NormFloat64())
			}
			query := vecindex.Query{Vector: q, K: 1000}
			if a, b := ns.vectors.Search(query), vectors.Search(query); len(a) == 0 || !slices.Equal(a, b) {
				t.Fatalf("dimension %d: search gives %d hits loaded, %d read (or they differ)", dim, len(a), len(b))
			}
		}
	}
}

// newestIDs lists a state's entries newest first.
func newestIDs(s *state) []memory.ID {
	var out []memory.ID
	s.recent.newest(s, func(id memory.ID) bool {
		out = append(out, id)
		return true
	})
	return out
}

// TestRowSetChunks: the chunks of a rowSet, put together by putVectors,
// are the normalised vectors in the order added, across chunk boundaries
// and stores, zero vectors left out.
func TestRowSetChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const dim = 3
	var wantIDs []memory.ID
	var wantRows []float32
	loads := make([]storeLoad, 2)
	n := 0
	for i := range loads {
		loads[i].vectors = map[int]*rowSet{dim: {}}
		for range 2500 + i*700 {
			id := memory.ID{byte(n >> 16), byte(n >> 8), byte(n), 1}
			v := []float32{float32(rng.NormFloat64()), float32(rng.NormFloat64()), float32(rng.NormFloat64())}
			if n%97 == 0 {
				v = make([]float32, dim)
			}
			loads[i].vectors[dim].add(id, v)
			var ok bool
			if wantRows, ok = vecindex.AppendNormalized(wantRows, v); ok {
				wantIDs = append(wantIDs, id)
			}
			n++
		}
		if c := len(loads[i].vectors[dim].chunks); c < 3 {
			t.Fatalf("store %d: %d chunks, want several", i, c)
		}
	}
	x := vecindex.New(nil)
	putVectors(x, loads)
	if x.Len(dim) != len(wantIDs) {
		t.Fatalf("%d rows, want %d", x.Len(dim), len(wantIDs))
	}
	var gotIDs []memory.ID
	var gotRows []float32
	err := x.Rows(dim, func(ids []memory.ID, rows []float32) error {
		gotIDs = append(gotIDs, ids...)
		gotRows = append(gotRows, rows...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gotIDs, wantIDs) || !slices.Equal(gotRows, wantRows) {
		t.Fatal("rows differ from the vectors added, in order")
	}
}

// TestRebuiltIndexesAreTheBuildOfTheStoredRecords: a start without a
// usable snapshot builds the text index while loadRecords decodes the
// records, batch by batch on several workers, and the raw index from the
// journal; both must be exactly the indexes that adding the stored
// records one by one, in a sequential read, to an empty index gives (same
// documents, same numbering of documents and terms), which their
// snapshots' bytes show. Every store holds several batches of records.
func TestRebuiltIndexesAreTheBuildOfTheStoredRecords(t *testing.T) {
	s := newSnapEnv(t, store.Options{}, false)
	s.open()
	fillVaried(t, s.e)
	ctx := context.Background()
	stores := memory.PersistentStores()
	const perStore = 700
	var recs []memory.EncodeStoreRequest
	for i := range len(stores) * perStore {
		st := stores[i%len(stores)]
		c := memory.TextContent(fmt.Sprintf("extra record %d of store %s, word%d and term%d", i, st, i%37, i))
		recs = append(recs, memory.EncodeStoreRequest{Content: c, Store: &st})
	}
	for len(recs) > 0 {
		n := min(len(recs), 1000)
		if _, err := s.e.EncodeBatch(ctx, &memory.EncodeBatchRequest{Records: recs[:n]}); err != nil {
			t.Fatal(err)
		}
		recs = recs[n:]
	}
	s.close()
	if s.open() {
		t.Fatal("indexes loaded from a snapshot, want them rebuilt")
	}
	ns := s.e.defaultSpace()
	addAll := func(fill func(searchindex.AddFunc) error) *searchindex.Index {
		t.Helper()
		ix, err := searchindex.New(ns.indexConfig)
		if err != nil {
			t.Fatal(err)
		}
		if err := fill(ix.Add); err != nil {
			t.Fatal(err)
		}
		return ix
	}
	text := addAll(func(add searchindex.AddFunc) error { return s.e.fillCurated(ctx, ns, add) })
	raw := addAll(func(add searchindex.AddFunc) error { return s.e.fillRaw(ctx, ns, add) })
	if ns.text.Stats().Docs < len(stores)*perStore {
		t.Fatalf("text index holds %d documents, want at least %d", ns.text.Stats().Docs, len(stores)*perStore)
	}
	for _, p := range []struct {
		name      string
		got, want *searchindex.Index
	}{{"text", ns.text, text}, {"raw", ns.rawText, raw}} {
		got := p.got.Snapshot().AppendTo(nil, nil)
		want := p.want.Snapshot().AppendTo(nil, nil)
		if !bytes.Equal(got, want) {
			t.Errorf("%s index: snapshot of %d bytes differs from the %d bytes of the records added one by one", p.name, len(got), len(want))
		}
	}
}
