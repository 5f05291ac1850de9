package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// DirState is what a directory holds, as far as opening it as a data
// directory is concerned.
type DirState int

// The states of a directory.
const (
	// DirMissing: nothing exists at the path.
	DirMissing DirState = iota
	// DirEmpty: an empty directory (a file system's lost+found and a
	// stale lock file aside).
	DirEmpty
	// DirDatabase: a directory that holds a database.
	DirDatabase
	// DirForeign: a directory that holds files but no database, or a
	// path that is not a directory.
	DirForeign
)

// ignored reports whether a directory may hold the entry and still count
// as empty: the lost+found of a freshly made file system mounted as the
// data directory, and the lock file an Open that failed before creating
// the database leaves.
func ignored(name string) bool { return name == "lost+found" || name == "LOCK" }

// Probe tells what dir holds without changing anything in it. For
// DirForeign it also returns up to three of the entries it found, for
// messages.
func Probe(dir string) (DirState, []string, error) {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return DirMissing, nil, nil
	case err != nil:
		return 0, nil, fmt.Errorf("data directory %s: %w", dir, err)
	case !fi.IsDir():
		return DirForeign, []string{fi.Name() + " is not a directory"}, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	var names []string
	for _, e := range entries {
		if !ignored(e.Name()) {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return DirEmpty, nil, nil
	}
	desc, err := pebble.Peek(dir, vfs.Default)
	if err != nil {
		return 0, nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	if desc.Exists {
		return DirDatabase, nil, nil
	}
	return DirForeign, names[:min(3, len(names))], nil
}
