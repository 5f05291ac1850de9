package engine

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

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
// must find it, which shows the check can fail.
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
			derived := 0
			if err := db.ScanPrefix([]byte{store.KindDerived}, false, func(_, _ []byte) (bool, error) {
				derived++
				return true, nil
			}); err != nil {
				t.Fatal(err)
			}
			db.Close()
			if (derived > 0) != persist {
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
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd, out := startChild(t, ctx, "TestIndexSurvivesCrash", "MEMSVC_CRASH_CHILD="+dir)
	// Wait for 20 acknowledged batches, then kill while it writes more.
	sc := bufio.NewScanner(out)
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
	forward := append(curatedIndexPrefix(store.DefaultNS), 'f')
	indexed := map[memory.ID]bool{}
	if err := db.ScanPrefix(forward, false, func(k, _ []byte) (bool, error) {
		var id memory.ID
		copy(id[:], k[len(forward):])
		indexed[id] = true
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	for id := range records {
		if !indexed[id] {
			t.Fatalf("record %s is not indexed", id)
		}
	}
	for id := range indexed {
		if !records[id] {
			t.Fatalf("index document %s has no record", id)
		}
	}
	// And the index answers: every batch wrote the word "batchword".
	ix, err := textindex.Open(db, curatedIndexPrefix(store.DefaultNS))
	if err != nil {
		t.Fatal(err)
	}
	res, err := ix.Search(textindex.Query{Text: "batchword"})
	if err != nil || res.Total != len(records) {
		t.Fatalf("search found %d of %d records (%v)", res.Total, len(records), err)
	}
}

// crashChild writes batches of 50 records forever, printing a line after
// each acknowledged batch.
func crashChild(dir string) {
	db, err := store.Open(dir, store.Options{})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	e, err := Open(context.Background(), db, Options{PersistIndexes: true})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	for i := 0; ; i++ {
		recs := make([]memory.EncodeStoreRequest, 50)
		for j := range recs {
			recs[j] = memory.EncodeStoreRequest{Content: memory.TextContent("batchword " + strconv.Itoa(i) + " item " + strconv.Itoa(j) + " " + strings.Repeat("filler ", j))}
		}
		if _, err := e.EncodeBatch(context.Background(), &memory.EncodeBatchRequest{Records: recs}); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("batch", i)
	}
}
