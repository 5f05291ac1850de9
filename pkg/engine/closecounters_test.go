package engine

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

// A session that changes nothing writes nothing at Close: a write there
// leaves a log that the next open flushes into a table of its own, which
// costs every one-shot command (memsvc stats) a flush and every second one
// a compaction. A session that recalls still saves its count, also when
// its recalls changed no record.
func TestCloseWritesOnlyChangedCounters(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	session := func(work func(e *Engine)) {
		t.Helper()
		db := openDir(t, dir)
		e, err := Open(ctx, db, Options{SimilarLinks: -1})
		if err != nil {
			_ = db.Close()
			t.Fatal(err)
		}
		work(e)
		if err := e.Close(); err != nil {
			t.Error(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	recallWith := func(e *Engine, reconsolidate bool) {
		req := memory.DefaultRecallQueryRequest()
		req.Cue.Text = ptr("kiwi orchard")
		req.Reconsolidate = reconsolidate
		if _, err := e.RecallQuery(ctx, &req); err != nil {
			t.Fatal(err)
		}
	}
	recall := func(e *Engine) { recallWith(e, true) }
	count := func(e *Engine) uint64 {
		s, err := e.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s.TotalRecallCount
	}
	session(func(e *Engine) {
		if _, err := e.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: memory.TextContent("the kiwi orchard needs water")}); err != nil {
			t.Fatal(err)
		}
		recall(e)
	})
	// This open flushes the first session's log; the session itself only
	// reads.
	session(func(e *Engine) {
		if n := count(e); n != 1 {
			t.Errorf("total_recall_count %d after one recall, want 1", n)
		}
	})
	before := tables(t, dir)
	// Had the read-only session written, this open would flush its log
	// into a new table.
	if err := openDir(t, dir).Close(); err != nil {
		t.Fatal(err)
	}
	if after := tables(t, dir); !slices.Equal(before, after) {
		t.Errorf("a session that changed nothing left a write behind: tables %v before a bare open, %v after", before, after)
	}
	session(recall)
	session(func(e *Engine) {
		if n := count(e); n != 2 {
			t.Errorf("total_recall_count %d after two recalls in two sessions, want 2", n)
		}
	})
	// A recall without reconsolidation leaves the write-behind nothing to
	// write, and with it the count: Close saves it.
	session(func(e *Engine) { recallWith(e, false) })
	session(func(e *Engine) {
		if n := count(e); n != 3 {
			t.Errorf("total_recall_count %d after a third recall, one that changed no record, want 3", n)
		}
	})
}

// tables is the names of the store's table files in dir.
func tables(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.sst"))
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatalf("no tables in %s", dir)
	}
	for i, n := range names {
		names[i] = filepath.Base(n)
	}
	return names
}
