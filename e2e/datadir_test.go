package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testkit"
)

// readOnlyCommands read data and never create a data directory.
var readOnlyCommands = [][]string{
	{"stats"},
	{"recall", "deploy"},
	{"recall-raw"},
	{"inspect", "0190b6a4-7c1e-7a55-9f1a-5f2b3c4d5e6f"},
	{"export", "--output", "OUT"},
	{"audit-verify"},
	{"decay-tick"},
	{"dream-tick"},
	{"consolidate"},
	{"forget", "0190b6a4-7c1e-7a55-9f1a-5f2b3c4d5e6f", "--confirm"},
}

// TestMissingDataDirRefused: a mistyped --data-dir is refused by every
// command that only reads (or changes existing data), with a message naming
// the directory, and nothing is created; a command that stores data creates
// it.
func TestMissingDataDirRefused(t *testing.T) {
	root := t.TempDir()
	typo := filepath.Join(root, "dta")
	for _, args := range readOnlyCommands {
		args = slices.Clone(args)
		for i, a := range args {
			if a == "OUT" {
				args[i] = filepath.Join(root, "backup.cma")
			}
		}
		r := runBin(t, 20*time.Second, nil, "memsvc", append([]string{"--data-dir", typo}, args...)...)
		if r.code != 1 || !strings.Contains(r.stderr, typo) || !strings.Contains(r.stderr, "does not exist") {
			t.Errorf("%s on a missing directory: exit %d, stderr %q", args[0], r.code, r.stderr)
		}
		if r.stdout != "" {
			t.Errorf("%s on a missing directory printed %q", args[0], r.stdout)
		}
		if names := testkit.DirNames(t, root); len(names) != 0 {
			t.Fatalf("%s on a missing directory created %v", args[0], names)
		}
	}
	if r := runBin(t, 20*time.Second, nil, "memsvc", "--data-dir", typo, "store", "first note"); r.code != 0 {
		t.Fatalf("store into a new directory: %+v", r)
	}
	if r := runBin(t, 20*time.Second, nil, "memsvc", "--data-dir", typo, "stats", "--json"); r.code != 0 || !strings.Contains(r.stdout, `"total_records": 1`) {
		t.Fatalf("stats after the first store: %+v", r)
	}
}

// TestForeignDataDirRefused: a non-empty directory that is not a memsvc
// data directory is refused by every command, serve and store included,
// and left exactly as it was.
func TestForeignDataDirRefused(t *testing.T) {
	project := t.TempDir()
	for _, f := range []string{"go.mod", "main.go", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(project, f), []byte("mine"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	commands := append([][]string{{"store", "a note"}, {"store-raw", "an entry", "--session-id", "s"}, {"import", "ARCHIVE"}, {"serve", "--port", "0"}},
		readOnlyCommands...)
	// A real archive, so that import fails on the directory and not on
	// its input.
	src := filepath.Join(t.TempDir(), "src")
	archive := filepath.Join(t.TempDir(), "one.cma")
	if r := runBin(t, 20*time.Second, nil, "memsvc", "--data-dir", src, "store", "a note"); r.code != 0 {
		t.Fatalf("store: %+v", r)
	}
	if r := runBin(t, 20*time.Second, nil, "memsvc", "--data-dir", src, "export", "--output", archive); r.code != 0 {
		t.Fatalf("export: %+v", r)
	}
	for _, args := range commands {
		args = slices.Clone(args)
		for i, a := range args {
			switch a {
			case "OUT":
				args[i] = filepath.Join(t.TempDir(), "backup.cma")
			case "ARCHIVE":
				args[i] = archive
			}
		}
		r := runBin(t, 20*time.Second, nil, "memsvc", append([]string{"--data-dir", project}, args...)...)
		if r.code != 1 || !strings.Contains(r.stderr, project+" (from --data-dir) is not a memsvc data directory") ||
			!strings.Contains(r.stderr, "go.mod, main.go, notes.txt") {
			t.Errorf("%s in a foreign directory: exit %d, stderr %q", args[0], r.code, r.stderr)
		}
	}
	if names := testkit.DirNames(t, project); !slices.Equal(names, []string{"go.mod", "main.go", "notes.txt"}) {
		t.Fatalf("the foreign directory now holds %v", names)
	}
}
