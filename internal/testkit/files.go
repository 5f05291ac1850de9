package testkit

import (
	"errors"
	"io/fs"
	"os"
	"testing"
)

// DirNames returns the names in dir, sorted, or nil when dir does not
// exist; any other failure to read it ends the test.
func DirNames(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
