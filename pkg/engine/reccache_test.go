package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// TestRecordCacheCoherentWithEngine runs every operation that writes
// records (store, batch, update, forget, consolidation, dream, decay
// ticks that prune, import, namespace drop, similarity linking, and
// recalls whose effects the write-behind writes later) in random order
// on two namespaces, with reads in between that fill the store's record
// cache, and checks after every step that every record ever seen reads
// through the cache exactly as an uncached read of the same moment (a
// store snapshot) finds it, or is missing from both.
func TestRecordCacheCoherentWithEngine(t *testing.T) {
	for seed := uint64(1); seed <= 2; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { testRecordCacheCoherent(t, seed) })
	}
}

func testRecordCacheCoherent(t *testing.T, seed uint64) {
	// The write-behind flushes only when the test says so, so nothing
	// writes between the snapshot and the reads of a check.
	h := newHarness(t, Options{ArchiveKDF: testKDF, recallFlushEvery: time.Hour, recallPendingMax: 1 << 20})
	rng := rand.New(rand.NewPCG(seed, 1717))
	words := []string{"deploy", "kettle", "garden", "river", "lamp", "budget", "violin", "tunnel", "pepper", "orbit"}
	text := func() string {
		s := ""
		for range 3 + rng.IntN(5) {
			s += words[rng.IntN(len(words))] + " "
		}
		return s
	}
	spaces := []string{"", "other"}
	ctxOf := func(name string) context.Context {
		if name == "" {
			return context.Background()
		}
		return memory.WithNamespace(context.Background(), name)
	}
	stores := memory.PersistentStores()
	seen := map[memory.ID]bool{}
	// live lists the records of namespace name that exist now.
	live := func(name string) []memory.ID {
		var ids []memory.ID
		ns, ok := h.db.LookupNamespace(name)
		if name == "" {
			ns, ok = store.DefaultNS, true
		}
		if !ok {
			return nil
		}
		for _, st := range stores {
			if err := h.db.ScanRecords(ns, st, func(rec *memory.MemoryRecord) error {
				ids = append(ids, rec.ID)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		return ids
	}
	pick := func(name string) (memory.ID, bool) {
		ids := live(name)
		if len(ids) == 0 {
			return memory.ID{}, false
		}
		return ids[rng.IntN(len(ids))], true
	}
	ignoreMissing := func(err error) {
		t.Helper()
		if err != nil && memory.CodeOf(err) != memory.CodeNotFound {
			t.Fatal(err)
		}
	}
	check := func(step int, what string) {
		t.Helper()
		if err := h.e.syncLinks(context.Background()); err != nil {
			t.Fatal(err)
		}
		snap := h.db.NewSnapshot()
		defer snap.Close()
		for _, name := range spaces {
			ns, ok := h.db.LookupNamespace(name)
			if name == "" {
				ns, ok = store.DefaultNS, true
			}
			if !ok {
				continue
			}
			for _, st := range stores {
				want := map[memory.ID]*memory.MemoryRecord{}
				if err := snap.ScanRecords(ns, st, func(rec *memory.MemoryRecord) error {
					want[rec.ID] = rec
					seen[rec.ID] = true
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				for id := range seen {
					got, err := h.db.GetRecord(ns, st, id)
					if err != nil && !errors.Is(err, store.ErrNotFound) {
						t.Fatal(err)
					}
					if w := want[id]; !reflect.DeepEqual(got, w) {
						t.Fatalf("step %d (%s): namespace %q %s record %s: through the cache %+v, on disk %+v", step, what, name, st, id, got, w)
					}
				}
			}
		}
	}
	recall := func(ctx context.Context, reconsolidate bool) {
		q := text()
		req := &memory.RecallQueryRequest{Cue: memory.RecallCue{Text: &q}, Stores: stores, Limit: 5,
			IncludeDecayed: true, Reconsolidate: reconsolidate}
		if _, err := h.e.RecallQuery(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	for step := range 120 {
		name := spaces[rng.IntN(len(spaces))]
		ctx := ctxOf(name)
		var what string
		switch r := rng.IntN(24); {
		case r < 5:
			what = "store"
			st := stores[rng.IntN(len(stores))]
			if _, err := h.e.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: memory.TextContent(text()), Store: &st}); err != nil {
				t.Fatal(err)
			}
		case r < 7:
			what = "batch"
			var recs []memory.EncodeStoreRequest
			for range 3 {
				st := stores[rng.IntN(len(stores))]
				recs = append(recs, memory.EncodeStoreRequest{Content: memory.TextContent(text()), Store: &st})
			}
			if _, err := h.e.EncodeBatch(ctx, &memory.EncodeBatchRequest{Records: recs}); err != nil {
				t.Fatal(err)
			}
		case r < 10:
			what = "update"
			if id, ok := pick(name); ok {
				c := memory.TextContent(text())
				ignoreMissing(h.e.EncodeUpdate(ctx, &memory.EncodeUpdateRequest{RecordID: id, Content: &c}))
			}
		case r < 12:
			what = "forget"
			if id, ok := pick(name); ok {
				_, err := h.e.Forget(ctx, &memory.ForgetRequest{RecordIDs: []memory.ID{id}, Confirm: ptr(true)})
				ignoreMissing(err)
			}
		case r < 15:
			what = "recall with reconsolidation"
			recall(ctx, true)
		case r < 16:
			what = "write-behind flush"
			h.flushRecalls()
		case r < 17:
			what = "consolidation"
			if _, err := h.e.Consolidate(ctx, &memory.ConsolidateRequest{Strategy: memory.ConsolidateFull}); err != nil {
				t.Fatal(err)
			}
		case r < 18:
			what = "dream"
			for range 4 {
				raw := rawReq(fmt.Sprintf("s%d", step), text())
				if _, err := h.e.EncodeStoreRaw(ctx, &raw); err != nil {
					t.Fatal(err)
				}
			}
			h.clock.Advance(3 * time.Hour)
			if _, err := h.e.DreamTick(ctx, dreamReq()); err != nil {
				t.Fatal(err)
			}
		case r < 20:
			what = "decay tick"
			secs := uint32(rng.IntN(60 * 86400))
			h.clock.Advance(time.Duration(secs) * time.Second)
			if _, err := h.e.DecayTick(ctx, &memory.DecayTickRequest{TickDurationSeconds: &secs, AllowLong: true}); err != nil {
				t.Fatal(err)
			}
		case r < 22:
			what = "import"
			var buf bytes.Buffer
			if _, err := h.e.Export(ctx, &memory.ExportRequest{Format: "cma"}, &buf); err != nil {
				t.Fatal(err)
			}
			req := memory.DefaultImportRequest()
			req.ArchiveID = fmt.Sprint("import ", step)
			if rng.IntN(2) == 0 {
				req.Strategy = memory.ImportReplace
			}
			if _, err := h.e.Import(ctxOf(spaces[rng.IntN(len(spaces))]), &req, &buf); err != nil {
				t.Fatal(err)
			}
		case r < 23:
			what = "namespace drop"
			if _, err := h.e.DropNamespace(context.Background(), &memory.DropNamespaceRequest{Name: "other", Confirm: true}); err != nil {
				ignoreMissing(err)
			}
		default:
			what = "reads"
		}
		// Reads that fill the cache before the next write.
		recall(ctx, false)
		if id, ok := pick(name); ok {
			if _, err := h.e.Record(ctx, &memory.IntrospectRecordRequest{RecordID: id}); err != nil {
				t.Fatal(err)
			}
		}
		check(step, what)
	}
}
