package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
