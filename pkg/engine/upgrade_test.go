package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// The fixture testdata/layout1 was written by memsvc before namespaces
// (see its README): data/ is its data directory (layout 1) after it
// stored five records (one with an embedding, one linking to another), a
// raw session that a dream tick summarised, a private entry, set semantic
// recall to perfect, ticked the decay clock by a day and ran one recall;
// layout1.cma is the archive it exported right after.

// copyFixture copies the fixture's data directory into a fresh one.
func copyFixture(t *testing.T) string {
	t.Helper()
	src := filepath.Join("testdata", "layout1", "data")
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, ent := range entries {
		b, err := os.ReadFile(filepath.Join(src, ent.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, ent.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// fixtureArchive reads the fixture's archive, entry by entry as JSON.
func fixtureArchive(t *testing.T) ([]byte, map[string]string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "layout1", "layout1.cma"))
	if err != nil {
		t.Fatal(err)
	}
	return data, entryJSON(t, data)
}

// entryJSON maps each entry's id to its JSON, checking that no entry
// names a namespace.
func entryJSON(t *testing.T, data []byte) map[string]string {
	t.Helper()
	entries, _ := readArchive(t, data)
	out := map[string]string{}
	for _, ent := range entries {
		if ent.Namespace != "" {
			t.Errorf("entry of namespace %s", ent.Namespace)
		}
		if ent.Record != nil {
			out[ent.Record.ID.String()] = string(must(json.Marshal(ent.Record))(t))
		} else {
			out[ent.Raw.ID.String()] = string(must(json.Marshal(ent.Raw))(t))
		}
	}
	return out
}

// TestUpgradeFromLayoutOne opens a data directory written before
// namespaces existed: it opens without any manual step, everything it
// holds is in the default namespace with its settings and counters, it
// exports exactly what the old release exported, and it opens again.
func TestUpgradeFromLayoutOne(t *testing.T) {
	for _, persist := range []bool{true, false} {
		t.Run(map[bool]string{true: "indexes on disk", false: "indexes in memory"}[persist], func(t *testing.T) {
			dir := copyFixture(t)
			_, want := fixtureArchive(t)
			for round := range 2 {
				db, err := store.Open(dir, store.Options{})
				if err != nil {
					t.Fatalf("round %d: open: %v", round, err)
				}
				e, err := Open(context.Background(), db, Options{PersistIndexes: persist, SimilarLinks: -1,
					Now: func() time.Time { return time.Date(2026, 3, 2, 9, 5, 0, 0, time.UTC) }})
				if err != nil {
					t.Fatalf("round %d: engine: %v", round, err)
				}
				checkUpgraded(t, e, db, want, uint64(1+2*round))
				if err := e.Close(); err != nil {
					t.Fatal(err)
				}
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// checkUpgraded checks the upgraded directory; recalls is the recall
// count it should show (the old release ran one, each check runs two).
func checkUpgraded(t *testing.T, e *Engine, db *store.DB, want map[string]string, recalls uint64) {
	t.Helper()
	ctx := context.Background()
	if v, err := db.Get([]byte{'F'}); err != nil || !bytes.Equal(v, []byte{2}) {
		t.Errorf("layout %v, %v; want 2", v, err)
	}
	spaces := must(e.Namespaces(ctx))(t).Namespaces
	if len(spaces) != 1 || spaces[0].Name != memory.DefaultNamespace || spaces[0].TotalRecords != 7 || spaces[0].RawJournalRecords != 4 {
		t.Fatalf("namespaces %+v, want the default one with 7 records and 4 raw entries", spaces)
	}
	s := must(e.Stats(ctx))(t)
	if s.RecordsByStore[memory.StoreEpisodic] != 3 || s.RecordsByStore[memory.StoreSemantic] != 2 ||
		s.RecordsByStore[memory.StoreProcedural] != 1 || s.RecordsByStore[memory.StoreEmotional] != 1 ||
		s.RawJournalPendingDream != 0 || s.DreamEpisodicSummaries != 1 || s.TotalRecallCount != recalls ||
		s.LastDreamTickAt == nil || s.VectorIndexRecords != 2 || s.AvgFidelity >= 1 {
		t.Errorf("stats of the default namespace: %+v", s)
	}
	modes := e.modes(e.defaultSpace())
	if modes[memory.StoreSemantic] != memory.ModePerfect || modes[memory.StoreEpisodic] != memory.ModeHuman {
		t.Errorf("modes %v, want semantic perfect and the rest human", modes)
	}

	// The same records and entries, as the old release exported them.
	exported, _, _ := exportOf(t, e, ctx, exportEverything())
	got := entryJSON(t, exported)
	if len(got) != len(want) {
		t.Errorf("export holds %d entries, the old release's %d", len(got), len(want))
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("entry %s:\nold %s\nnow %s", id, w, got[id])
		}
	}

	// Search, the session index and activation work on the old data.
	req := memory.DefaultRecallQueryRequest()
	req.Cue.Text, req.Reconsolidate = ptr("staging smoke test"), false
	if r := must(e.RecallQuery(ctx, &req))(t); len(r.Memories) == 0 {
		t.Error("text recall finds nothing")
	}
	vreq := memory.DefaultRecallQueryRequest()
	vreq.Cue.Embedding, vreq.Reconsolidate = []float32{0.9, 0.1, 0.2}, false
	if r := must(e.RecallQuery(ctx, &vreq))(t); len(r.Memories) == 0 {
		t.Error("vector recall finds nothing")
	}
	raw := must(e.RecallRaw(ctx, &memory.RecallRawQueryRequest{SessionID: ptr("session-1"), Limit: 10}))(t)
	if len(raw.Records) != 3 {
		t.Errorf("session-1 has %d entries, want 3", len(raw.Records))
	}
	if r := must(e.RecallRaw(ctx, &memory.RecallRawQueryRequest{Query: ptr("billing"), Limit: 10}))(t); len(r.Records) != 3 {
		t.Errorf("raw search for billing: %d entries, want 3", len(r.Records))
	}
	// Nothing of it is anywhere else.
	if s := must(e.Stats(memory.WithNamespace(ctx, "other")))(t); s.TotalRecords != 0 || s.RawJournalRecords != 0 {
		t.Errorf("another namespace counts %+v", s)
	}
}

// TestOldArchiveImports: the archive the old release exported imports into
// a fresh engine's default namespace, into a chosen namespace of the
// upgraded directory (next to the same records in the default one), and,
// naming no namespace, into the default namespace when namespaces are
// preserved.
func TestOldArchiveImports(t *testing.T) {
	data, want := fixtureArchive(t)
	ctx := context.Background()
	fresh := newHarness(t, Options{SimilarLinks: -1})
	req := memory.DefaultImportRequest()
	if r := must(fresh.e.Import(ctx, &req, bytes.NewReader(data)))(t); int(r.RecordsImported) != len(want) {
		t.Fatalf("imported %+v, the archive holds %d entries", r, len(want))
	}
	exported, _, _ := exportOf(t, fresh.e, ctx, exportEverything())
	if got := entryJSON(t, exported); !sameKeys(got, want) {
		t.Errorf("a fresh engine holds %d entries after the import, the archive %d", len(got), len(want))
	}

	dir := copyFixture(t)
	db := must(store.Open(dir, store.Options{}))(t)
	t.Cleanup(func() { _ = db.Close() })
	e := must(Open(ctx, db, Options{SimilarLinks: -1}))(t)
	t.Cleanup(func() { _ = e.Close() })
	restored := memory.WithNamespace(ctx, "restored")
	if r := must(e.Import(restored, &req, bytes.NewReader(data)))(t); int(r.RecordsImported) != len(want) {
		t.Fatalf("imported %+v into a new namespace, the archive holds %d entries", r, len(want))
	}
	_, entries, _ := exportOf(t, e, restored, exportEverything())
	for _, ent := range entries {
		id := ""
		if ent.Record != nil {
			id = ent.Record.ID.String()
		} else {
			id = ent.Raw.ID.String()
		}
		if _, ok := want[id]; !ok || ent.Namespace != "restored" {
			t.Errorf("entry %s of namespace %q in the export of restored", id, ent.Namespace)
		}
	}
	if n := len(entries); n != len(want) {
		t.Errorf("restored holds %d entries, want %d", n, len(want))
	}
	// As archived: the entries name no namespace, so they are the default
	// namespace's, which already holds them all.
	req.PreserveNamespaces = true
	r := must(e.Import(memory.WithNamespace(ctx, "elsewhere"), &req, bytes.NewReader(data)))(t)
	if r.RecordsImported != 0 || int(r.RecordsSkipped) != len(want) {
		t.Errorf("importing as archived: %+v, want every entry skipped as present in default", r)
	}
	names := []string{}
	for _, n := range must(e.Namespaces(ctx))(t).Namespaces {
		names = append(names, n.Name)
	}
	if !slices.Equal(names, []string{memory.DefaultNamespace, "restored"}) {
		t.Errorf("namespaces %v", names)
	}
}

func sameKeys(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}
