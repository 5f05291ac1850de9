package testkit

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
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

// AppendFile appends data to the file at path, creating it (mode 0600)
// and its directories when missing, as a program writing a log or a
// transcript would; any failure ends the test.
func AppendFile(t testing.TB, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
}
