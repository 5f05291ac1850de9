package engine

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/engine/searchindex"
	"memsvc.dev/memsvc/pkg/engine/textindex"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// filesContain reports whether any file under dir contains needle.
func filesContain(t *testing.T, dir string, needle []byte) bool {
	t.Helper()
	found := false
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, needle) {
			found = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestNoIndexedTermsOnDisk: with persistence of search indexes off, no
// index term reaches the data directory. The record says "Zyxquuxing"; only
// the index holds its lower-case stem "zyxquux", so finding that stem in a
// file means derived text was written. The same run with persistence on
// must find it (in the index snapshot written at close), which shows the
// check can fail; the database itself holds no index keys either way.
func TestNoIndexedTermsOnDisk(t *testing.T) {
	stem := textindex.Tokenize("Zyxquuxing")
	if len(stem) != 1 || stem[0] != "zyxquux" {
		t.Fatalf("tokenizer changed: %v", stem)
	}
	for _, persist := range []bool{true, false} {
		t.Run(fmt.Sprintf("persist=%v", persist), func(t *testing.T) {
			h := newHarness(t, Options{PersistIndexes: persist})
			ctx := context.Background()
			h.store("Zyxquuxing in the curated store", memory.StoreEpisodic)
			r := rawReq("s", "Zyxquuxing in the raw journal")
			if _, err := h.e.EncodeStoreRaw(ctx, &r); err != nil {
				t.Fatal(err)
			}
			// Searching works either way.
			resp, err := h.e.RecallQuery(ctx, ptr(textQuery("zyxquuxed")))
			if err != nil || len(resp.Memories) != 1 {
				t.Fatalf("recall %+v %v", resp, err)
			}
			h.close()
			if got := filesContain(t, h.dir, []byte("zyxquux")); got != persist {
				t.Fatalf("index term on disk: %v, want %v", got, persist)
			}
			// Derived keys are absent from the database too.
			db, err := store.Open(h.dir, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			derived := countKeys(t, db, []byte{store.KindDerived})
			db.Close()
			if derived > 0 {
				t.Fatalf("%d derived keys with persist=%v", derived, persist)
			}
			// Reopening rebuilds the in-memory index from the records.
			h.open()
			resp, err = h.e.RecallQuery(ctx, ptr(textQuery("zyxquux")))
			if err != nil || len(resp.Memories) != 1 {
				t.Fatalf("recall after reopen %+v %v", resp, err)
			}
		})
	}
}

// TestIndexSurvivesCrash kills a process that is writing batches of
// records (SIGKILL, mid-write) and checks that afterwards every record is
// indexed and every index document is a record. The child is this test
// binary re-executed.
func TestIndexSurvivesCrash(t *testing.T) {
	if os.Getenv("MEMSVC_CRASH_CHILD") != "" {
		crashChild(os.Getenv("MEMSVC_CRASH_CHILD"))
		return
	}
	dir := t.TempDir()
	cmd, sc := startChild(t, 60*time.Second, "TestIndexSurvivesCrash", "MEMSVC_CRASH_CHILD="+dir)
	// Wait for 20 acknowledged batches, then kill while it writes more.
	acked := 0
	for acked < 20 && sc.Scan() {
		if strings.HasPrefix(sc.Text(), "batch ") {
			acked++
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if acked < 20 {
		t.Fatalf("child acknowledged only %d batches", acked)
	}

	db, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	records := map[memory.ID]bool{}
	for _, st := range memory.PersistentStores() {
		if err := db.ScanRecords(store.DefaultNS, st, func(rec *memory.MemoryRecord) error {
			records[rec.ID] = true
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if len(records) < 20*50 {
		t.Fatalf("only %d records after %d acknowledged batches", len(records), acked)
	}
	// Nothing of the index is kept with the records any more: the index
	// built at start agrees with them by construction.
	if derived := countKeys(t, db, store.DerivedPrefix(store.DefaultNS)); derived != 0 {
		t.Fatalf("%d index keys in the database", derived)
	}
	e, err := Open(context.Background(), db, Options{PersistIndexes: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ix := e.defaultSpace().text
	if docs := ix.Stats().Docs; docs != len(records) {
		t.Fatalf("index holds %d documents, the store %d records", docs, len(records))
	}
	// And the index answers: every batch wrote the word "batchword".
	err = ix.Match(searchindex.Query{Terms: ix.QueryTerms("batchword")}, func(id memory.ID, _ searchindex.Attrs) bool {
		if !records[id] {
			t.Fatalf("index document %s has no record", id)
		}
		delete(records, id)
		return true
	})
	if err != nil || len(records) != 0 {
		t.Fatalf("%d records not found by the index (%v)", len(records), err)
	}
}

// crashChild writes batches of 50 records forever, printing a line after
// each acknowledged batch.
func crashChild(dir string) {
	e := childEngine(dir, Options{PersistIndexes: true})
	for i := 0; ; i++ {
		recs := make([]memory.EncodeStoreRequest, 50)
		for j := range recs {
			recs[j] = memory.EncodeStoreRequest{Content: memory.TextContent("batchword " + strconv.Itoa(i) + " item " + strconv.Itoa(j) + " " + strings.Repeat("filler ", j))}
		}
		if _, err := e.EncodeBatch(context.Background(), &memory.EncodeBatchRequest{Records: recs}); err != nil {
			childFail(err)
		}
		fmt.Println("batch", i)
	}
}

// TestOldPostingsRemoved: postings an older version kept in the data
// directory are deleted at the first start, in every namespace, and the
// records they indexed are still found (through the index built from
// the records).
func TestOldPostingsRemoved(t *testing.T) {
	w := newNSWorld(t, "alpha")
	ctx := context.Background()
	id := w.h.store("Zyxquuxing kept across the upgrade", memory.StoreEpisodic)
	w.h.close()
	db, err := store.Open(w.h.dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	spaces := db.Namespaces()
	if len(spaces) < 2 {
		t.Fatalf("namespaces %v: want the default one and alpha", spaces)
	}
	b := db.NewBatch()
	for _, ns := range spaces {
		b.Set(append(store.DerivedPrefix(ns.ID), "cfold posting"...), []byte("zyxquux"))
		b.Set(append(store.DerivedPrefix(ns.ID), "rfold posting"...), []byte("zyxquux"))
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	w.h.open()
	for _, ns := range spaces {
		if n := countKeys(t, w.h.db, store.DerivedPrefix(ns.ID)); n != 0 {
			t.Errorf("namespace %s: %d old index keys left", ns.Name, n)
		}
	}
	resp, err := w.h.e.RecallQuery(ctx, ptr(textQuery("zyxquux")))
	if err != nil || len(resp.Memories) != 1 || resp.Memories[0].Record.ID != id {
		t.Fatalf("recall after the upgrade: %+v, %v", resp, err)
	}
}

// TestSimilarLinksUseBoundedCandidates: a record with an embedding is
// compared with the text matches of its distinctive terms and the newest
// records only. An old record that shares its terms is linked; an old
// record whose embedding is as close but shares no term is not (a scan
// of every vector would have linked it); a recent one is.
func TestSimilarLinksUseBoundedCandidates(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: 3})
	ctx := context.Background()
	v := []float32{1, 0.1, 0}
	sharesTerms := vecRecord(h, "zebra crossing protocol review", v)
	noTerms := vecRecord(h, "lunch plans for friday", v)
	fillers := make([]memory.EncodeStoreRequest, similarRecent+20)
	for i := range fillers {
		fillers[i] = memory.EncodeStoreRequest{Content: memory.TextContent(fmt.Sprintf("filler note number %d", i)), Store: ptr(memory.StoreEpisodic)}
	}
	if _, err := h.e.EncodeBatch(ctx, &memory.EncodeBatchRequest{Records: fillers}); err != nil {
		t.Fatal(err)
	}
	recent := vecRecord(h, "gardening schedule", v)
	// Linking runs in the background: let the earlier records link
	// before the new one exists, or they would link to it themselves.
	if err := h.e.syncLinks(ctx); err != nil {
		t.Fatal(err)
	}
	id := vecRecord(h, "zebra crossing protocol notes", []float32{1, 0.12, 0})
	if err := h.e.syncLinks(ctx); err != nil {
		t.Fatal(err)
	}
	linked := map[memory.ID]bool{}
	for _, a := range h.record(id).Associations {
		linked[a.TargetID] = true
	}
	if !linked[sharesTerms] || !linked[recent] || linked[noTerms] {
		t.Fatalf("links %v: want the old record sharing terms (%v) and the recent one (%v), not the old one sharing none (%v)",
			linked, linked[sharesTerms], linked[recent], linked[noTerms])
	}
}

// TestSimilarityQueryPrefersRareTerms: the linker searches with the terms
// fewest other records hold, so its search walks short posting lists at
// any store size; length only breaks ties, and a term no other record
// holds (df 1: the record itself) comes last.
func TestSimilarityQueryPrefersRareTerms(t *testing.T) {
	df := map[string]int{"extraordinarily": 5000, "considerations": 900, "kite": 3, "ox": 3, "ab": 2, "unique": 1, "lonely": 0}
	terms := map[string]bool{}
	for term := range df {
		terms[term] = true
	}
	query := func() string {
		var words []string
		for _, q := range similarityQuery(slices.Collect(maps.Keys(terms)), func(term string) int { return df[term] }) {
			words = append(words, q.Term)
		}
		return strings.Join(words, " ")
	}
	got := query()
	// Seven terms fit in similarQueryTerms: all come, rarest first.
	if want := "ab kite ox considerations extraordinarily lonely unique"; got != want {
		t.Fatalf("query %q, want %q", got, want)
	}
	// Past similarQueryTerms the most common terms are left out, however
	// long they are.
	for i := range similarQueryTerms {
		term := fmt.Sprintf("r%02d", i)
		terms[term], df[term] = true, 2
	}
	got = query()
	if strings.Contains(got, "extraordinarily") || strings.Contains(got, "considerations") || strings.Count(got, " ")+1 != similarQueryTerms {
		t.Fatalf("query %q: want the %d rarest terms only", got, similarQueryTerms)
	}
}

// countKeys returns how many keys of db begin with prefix.
func countKeys(t *testing.T, db *store.DB, prefix []byte) int {
	t.Helper()
	n := 0
	if err := db.ScanPrefix(prefix, false, func(_, _ []byte) (bool, error) {
		n++
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCuratedDocTimeTermsMemo: documents built with a time-terms memo,
// as a start builds them, equal those built one by one, whatever order
// of days, zones, metadata times and speakers the records come in, and
// a speaker's terms appended to one document never reach another's.
func TestCuratedDocTimeTermsMemo(t *testing.T) {
	east := time.FixedZone("", 9*3600)
	base := time.Date(2026, 3, 1, 23, 30, 0, 0, time.UTC)
	var recs []*memory.MemoryRecord
	for i := range 40 {
		rec := &memory.MemoryRecord{ID: memory.ID{byte(i + 1)}, Store: memory.StoreEpisodic,
			CreatedAt: base.Add(time.Duration(i%5) * 7 * time.Hour), Content: memory.TextContent(fmt.Sprintf("record %d", i))}
		if i%3 == 0 {
			rec.CreatedAt = rec.CreatedAt.In(east) // same instant, another day on its clock
		}
		switch i % 4 {
		case 1:
			rec.Metadata = memory.JSON(fmt.Sprintf(`{"speaker":%q}`, []string{"Ada Lovelace", "Alan Turing"}[i/4%2]))
		case 2:
			rec.Metadata = memory.JSON(`{"event_time":"2025-12-31T23:00:00-05:00"}`)
		case 3:
			rec.Metadata = memory.JSON(`{"session_date":"2024-02-29","speaker":"Grace"}`)
		}
		recs = append(recs, rec)
	}
	memo := timeTermsMemo{}
	var got []*searchindex.Document
	for _, rec := range recs {
		got = append(got, curatedDocWith(rec, memo))
	}
	for i, rec := range recs {
		if want := curatedDoc(rec); !reflect.DeepEqual(got[i], want) {
			t.Errorf("record %d: %+v with the memo, want %+v", i, got[i].Fields, want.Fields)
		}
	}
	if len(memo) == 0 || len(memo) >= len(recs) {
		t.Errorf("%d memo entries for %d records", len(memo), len(recs))
	}
}
