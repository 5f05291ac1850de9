package fsutil

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestTryLock: a second open file cannot take a held lock; closing the
// holder frees it. Without locks (CanLock false) every TryLock succeeds.
func TestTryLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	open := func() *os.File {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	holder, other := open(), open()
	defer other.Close()
	if err := TryLock(holder); err != nil {
		t.Fatal(err)
	}
	if err := TryLock(other); CanLock && !errors.Is(err, ErrLocked) || !CanLock && err != nil {
		t.Fatalf("second lock: %v (locks supported: %v)", err, CanLock)
	}
	if err := holder.Close(); err != nil {
		t.Fatal(err)
	}
	if err := TryLock(other); err != nil {
		t.Fatalf("lock after the holder closed: %v", err)
	}
}

// TestSyncDir syncs an existing directory and reports a missing one.
func TestSyncDir(t *testing.T) {
	dir := t.TempDir()
	if err := SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	if err := SyncDir(filepath.Join(dir, "missing")); CanSyncDir && !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing directory: %v", err)
	}
}
