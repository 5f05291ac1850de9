package testkit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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

// ExampleConfig writes the documented example configuration (the file
// at example, deploy-docs/memsvc.example.toml) into a new temporary
// directory as memsvc.toml, with its data directory moved into that
// directory and the HTTP port 0, so a server can start from it as
// documented; it returns the file's path.
func ExampleConfig(t testing.TB, example string) string {
	t.Helper()
	text, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{`data_dir = "./data"`, "port = 8420"} {
		if !strings.Contains(string(text), line) {
			t.Fatalf("%s: no line %q to change", example, line)
		}
	}
	dir := t.TempDir()
	cfg := strings.Replace(string(text), `data_dir = "./data"`, fmt.Sprintf("data_dir = %q", filepath.Join(dir, "data")), 1)
	cfg = strings.Replace(cfg, "port = 8420", "port = 0", 1)
	path := filepath.Join(dir, "memsvc.toml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
