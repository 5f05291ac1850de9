package store

import (
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// TestOpenOnFS: with Options.FS the database lives in that file system
// and nowhere else, survives a reopen there, and is locked against a
// second open of the same directory.
func TestOpenOnFS(t *testing.T) {
	mem := vfs.NewMem()
	cwd := t.TempDir()
	t.Chdir(cwd)
	const dir = "data/inner"

	db, err := Open(dir, Options{FS: mem})
	if err != nil {
		t.Fatal(err)
	}
	commit(t, db, func(b *Batch) { b.PutMeta("k", []byte("v")) })
	if _, err := Open(dir, Options{FS: mem}); err == nil {
		t.Error("a second Open of the same directory in FS succeeded")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(cwd); err != nil || len(entries) != 0 {
		t.Fatalf("the operating system's file system was touched: %v %v", entries, err)
	}
	names, err := mem.List(dir)
	if err != nil || len(names) == 0 {
		t.Fatalf("nothing written under %s in FS: %v %v", dir, names, err)
	}

	db, err = Open(dir, Options{FS: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, err := db.GetMeta("k"); err != nil || string(v) != "v" {
		t.Fatalf("after reopen: %q %v", v, err)
	}
	if db.Dir() != dir {
		t.Errorf("Dir = %q, want %q", db.Dir(), dir)
	}
	if _, err := os.Stat(filepath.Join(cwd, "data")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a directory appeared on disk: %v", err)
	}
}

// TestFatalHook: a write-ahead log sync that fails is an error pebble does
// not continue from; with Options.Fatal set it is reported there instead
// of ending the process.
func TestFatalHook(t *testing.T) {
	var failSyncs atomic.Bool
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		sync := op.Kind == errorfs.OpFileSync || op.Kind == errorfs.OpFileSyncData || op.Kind == errorfs.OpFileSyncTo
		if failSyncs.Load() && sync {
			return errorfs.ErrInjected
		}
		return nil
	})
	var fatal atomic.Value
	db, err := Open("d", Options{
		FS:    errorfs.Wrap(vfs.NewMem(), inj),
		Fatal: func(msg string) { fatal.CompareAndSwap(nil, msg) },
	})
	if err != nil {
		t.Fatal(err)
	}
	failSyncs.Store(true)
	b := db.NewBatch()
	b.PutMeta("k", []byte("v"))
	_ = b.Commit() // pebble returns from a fatal error as if it had not happened
	b.Close()
	msg, _ := fatal.Load().(string)
	if msg == "" {
		t.Fatal("the failed sync did not reach Options.Fatal")
	}
	t.Logf("fatal: %s", msg)
	failSyncs.Store(false)
	_ = db.Close()
}
