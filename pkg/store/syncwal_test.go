package store

import (
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestSyncWALMakesEarlierCommitsDurable: batches committed without a sync
// survive a crash once SyncWAL has run, and a batch committed after it,
// never synced, does not (which shows the crash drops what is unsynced).
func TestSyncWALMakesEarlierCommitsDurable(t *testing.T) {
	mem := vfs.NewCrashableMem()
	db, err := Open("data", Options{FS: mem, CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	put := func(name string) {
		t.Helper()
		b := db.NewBatch()
		defer b.Close()
		b.PutNSMeta(DefaultNS, name, []byte("v"))
		if err := b.CommitNoSync(); err != nil {
			t.Fatal(err)
		}
	}
	put("first")
	put("second")
	if err := db.SyncWAL(); err != nil {
		t.Fatal(err)
	}
	put("after")
	crashed := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	_ = db.Close()

	db2, err := Open("data", Options{FS: crashed, CacheBytes: 1 << 20})
	if err != nil {
		t.Fatalf("reopen after the crash: %v", err)
	}
	defer db2.Close()
	for _, name := range []string{"first", "second"} {
		if v, err := db2.GetNSMeta(DefaultNS, name); err != nil || string(v) != "v" {
			t.Errorf("%s, committed before SyncWAL: %q, %v after the crash", name, v, err)
		}
	}
	if _, err := db2.GetNSMeta(DefaultNS, "after"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the batch committed after SyncWAL, never synced, survived the crash (%v)", err)
	}
}
