package store

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// fakeDisk reports a free space the test sets.
type fakeDisk struct{ free atomic.Uint64 }

func (d *fakeDisk) DiskFree(string) (uint64, error) { return d.free.Load(), nil }

// TestCommitKeepsReserve: a commit that would leave less than the reserve
// is refused before pebble writes anything, the refusal matches
// ErrNoSpace, and writes go through again once space returns.
func TestCommitKeepsReserve(t *testing.T) {
	disk := &fakeDisk{}
	disk.free.Store(100 << 20)
	dir := t.TempDir()
	db, err := Open(dir, Options{MinFreeBytes: 10 << 20, DiskFree: disk.DiskFree})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rec := realisticRecord(1, recID(1))
	put := func() error {
		b := db.NewBatch()
		defer b.Close()
		b.PutRecord(DefaultNS, rec)
		return b.Commit()
	}

	disk.free.Store(10<<20 + 10) // above the reserve, but not by a record
	err = put()
	var nse *NoSpaceError
	if !errors.Is(err, ErrNoSpace) || !errors.As(err, &nse) || nse.Opening || nse.Free != 10<<20+10 || nse.Need <= 10<<20 {
		t.Fatalf("commit into the reserve: %v", err)
	}
	if !strings.Contains(err.Error(), db.Dir()) || !strings.Contains(err.Error(), "10.0 MiB free") {
		t.Errorf("message %q does not name the directory and the free space", err)
	}
	if _, err := db.GetRecord(DefaultNS, rec.Store, rec.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a refused commit was applied: %v", err)
	}

	disk.free.Store(50 << 20)
	if err := put(); err != nil {
		t.Fatalf("commit after space returned: %v", err)
	}
	if _, err := db.GetRecord(DefaultNS, rec.Store, rec.ID); err != nil {
		t.Fatal(err)
	}
}

// TestOpenRefusesFullDisk: a directory on a file system below the reserve
// is not opened, and the refusal leaves nothing in it that would make it
// look like something other than an empty directory.
func TestOpenRefusesFullDisk(t *testing.T) {
	disk := &fakeDisk{}
	disk.free.Store(1 << 20)
	dir := filepath.Join(t.TempDir(), "data")
	_, err := Open(dir, Options{MinFreeBytes: 8 << 20, DiskFree: disk.DiskFree})
	var nse *NoSpaceError
	if !errors.As(err, &nse) || !nse.Opening || !strings.HasPrefix(err.Error(), "not opening data directory") {
		t.Fatalf("open on a full disk: %v", err)
	}
	if st, _, err := Probe(dir); err != nil || st != DirEmpty {
		t.Fatalf("after the refusal the directory is %v (%v), want empty", st, err)
	}
	disk.free.Store(9 << 20)
	db, err := Open(dir, Options{MinFreeBytes: 8 << 20, DiskFree: disk.DiskFree})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestMigrationKeepsReserve: a migration chunk is refused like any commit.
func TestMigrationKeepsReserve(t *testing.T) {
	disk := &fakeDisk{}
	disk.free.Store(100 << 20)
	dir := t.TempDir()
	db := openPlain(t, dir)
	commit(t, db, newSample().put)
	closeDB(t, db)
	db, err := Open(dir, Options{Passphrase: []byte("pass"), KDF: fastKDF(), MinFreeBytes: 10 << 20, DiskFree: disk.DiskFree})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	disk.free.Store(10<<20 + 1)
	rep, err := db.MigrateEncryption(t.Context())
	if !errors.Is(err, ErrNoSpace) || rep.RawJournal.Migrated != 0 {
		t.Fatalf("migration into the reserve: %+v %v", rep, err)
	}
}

func TestProbe(t *testing.T) {
	root := t.TempDir()
	mk := func(name string, files ...string) string {
		d := filepath.Join(root, name)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(d, f), []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	db, data := openTemp(t)
	_ = db
	notDir := filepath.Join(mk("file"), "plain")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	fresh := mk("fresh")
	if err := os.Mkdir(filepath.Join(fresh, "lost+found"), 0o700); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		dir   string
		want  DirState
		names []string
	}{
		{filepath.Join(root, "nowhere"), DirMissing, nil},
		{mk("empty"), DirEmpty, nil},
		{fresh, DirEmpty, nil},
		{mk("stale-lock", "LOCK"), DirEmpty, nil},
		{data, DirDatabase, nil},
		{mk("project", "go.mod", "main.go", "README.md", "notes.txt"), DirForeign, []string{"README.md", "go.mod", "main.go"}},
		{notDir, DirForeign, []string{"plain is not a directory"}},
	}
	for _, tc := range tests {
		st, names, err := Probe(tc.dir)
		if err != nil || st != tc.want || !slices.Equal(names, tc.names) {
			t.Errorf("Probe(%s) = %v %q %v, want %v %q", filepath.Base(tc.dir), st, names, err, tc.want, tc.names)
		}
	}
	// Probing changes nothing.
	if entries, err := os.ReadDir(filepath.Join(root, "empty")); err != nil || len(entries) != 0 {
		t.Fatalf("probe wrote into an empty directory: %v %v", entries, err)
	}
}

// TestForeignDatabaseRefused: a pebble database another program wrote is
// not adopted as a memsvc data directory.
func TestForeignDatabaseRefused(t *testing.T) {
	dir := t.TempDir()
	pdb, err := pebble.Open(dir, &pebble.Options{FS: vfs.Default})
	if err != nil {
		t.Fatal(err)
	}
	if err := pdb.Set([]byte("someone else's key"), []byte("v"), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := pdb.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir, Options{})
	if err == nil || !strings.Contains(err.Error(), "memsvc did not write") {
		t.Fatalf("open of a foreign database: %v", err)
	}
}
