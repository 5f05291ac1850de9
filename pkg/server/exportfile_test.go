package server

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestExportFile: the archive appears at its path only on Commit, with
// mode 0600; Abort leaves nothing; a second Commit returns the first
// result.
func TestExportFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "backup.cma")
	f, err := CreateExportFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("archive bytes")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the archive exists before Commit: %v", err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); err != nil {
		t.Fatalf("second Commit: %v", err)
	}
	f.Abort() // after Commit: nothing to do
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "archive bytes" {
		t.Fatalf("archive %q %v", b, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}

	g, err := CreateExportFile(filepath.Join(dir, "failed.cma"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Write([]byte("half")); err != nil {
		t.Fatal(err)
	}
	g.Abort()
	if err := g.Commit(); err == nil {
		t.Fatal("Commit after Abort succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("after a committed and an aborted export the directory holds %v", entries)
	}
}

// TestRemoveStaleExports: the temporary file of a killed export is
// removed, that of an export still running (locked) is kept, and files
// that merely look similar are left alone.
func TestRemoveStaleExports(t *testing.T) {
	dir := t.TempDir()
	running, err := CreateExportFile(filepath.Join(dir, "running.cma"))
	if err != nil {
		t.Fatal(err)
	}
	defer running.Abort()
	// A killed export: its file exists, nobody holds its lock.
	killed, err := CreateExportFile(filepath.Join(dir, "backup.cma"))
	if err != nil {
		t.Fatal(err)
	}
	stale := filepath.Base(killed.tmp.Name())
	if err := killed.tmp.Close(); err != nil { // what the kernel does for a killed process
		t.Fatal(err)
	}
	keep := []string{"notes.part-1", ".notes.part-x1", "download.zip.part", ".hidden", "backup.cma"}
	for _, name := range keep {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := RemoveStaleExports(dir)
	if err != nil || !slices.Equal(removed, []string{stale}) {
		t.Fatalf("removed %q (%v), want only %q", removed, err, stale)
	}
	for _, name := range append(keep, filepath.Base(running.tmp.Name())) {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s was removed: %v", name, err)
		}
	}
	if removed, err := RemoveStaleExports(filepath.Join(dir, "missing")); err != nil || len(removed) != 0 {
		t.Fatalf("missing directory: %v %v", removed, err)
	}
}

// TestServeRemovesStaleExports: serve deletes the temporary files killed
// exports left in the data directory and its exports directory.
func TestServeRemovesStaleExports(t *testing.T) {
	cfg := testConfig(t)
	_, _, stop := start(t, cfg)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	exports := filepath.Join(cfg.DataDir, "exports")
	if err := os.Mkdir(exports, 0o700); err != nil {
		t.Fatal(err)
	}
	var stale []string
	for _, dir := range []string{cfg.DataDir, exports} {
		p := filepath.Join(dir, ".backup.cma.part-123456")
		if err := os.WriteFile(p, []byte("a plaintext copy of every memory"), 0o600); err != nil {
			t.Fatal(err)
		}
		stale = append(stale, p)
	}
	_, _, stop = start(t, cfg)
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	for _, p := range stale {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s survived a serve start: %v", p, err)
		}
	}
}
