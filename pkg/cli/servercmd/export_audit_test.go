package servercmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// exportEntries counts the export entries of the audit log in dataDir.
func exportEntries(t *testing.T, dataDir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dataDir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(b, []byte(`"operation":"lifecycle.export"`))
}

// TestExportAuditedOnlyWhenInPlace: an export whose file cannot be put in
// place is not audited and leaves no temporary file; one that succeeds is
// audited once.
func TestExportAuditedOnlyWhenInPlace(t *testing.T) {
	data := t.TempDir()
	storeText(t, data, "a note to export")
	out := t.TempDir()
	// A non-empty directory where the archive should go: everything is
	// written, and the rename into place fails.
	target := filepath.Join(out, "backup.cma")
	if err := os.MkdirAll(filepath.Join(target, "occupied"), 0o700); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := run(t, data, "export", "--output", target, "--force")
	if code != 1 {
		t.Fatalf("export onto a directory: exit %d: %s", code, errOut)
	}
	if n := exportEntries(t, data); n != 0 {
		t.Fatalf("an export whose file never appeared was audited %d times", n)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 1 {
		t.Fatalf("the failed export left %v", entries)
	}

	target = filepath.Join(out, "good.cma")
	if _, errOut, code := run(t, data, "export", "--output", target); code != 0 {
		t.Fatalf("export: %d %s", code, errOut)
	}
	if n := exportEntries(t, data); n != 1 {
		t.Fatalf("export entries after a successful export: %d", n)
	}
}

// TestExportRemovesStaleTemporaryFiles: the temporary file a killed export
// left next to its archive is gone after the next export into that
// directory.
func TestExportRemovesStaleTemporaryFiles(t *testing.T) {
	data := t.TempDir()
	storeText(t, data, "a note to export")
	out := t.TempDir()
	stale := filepath.Join(out, ".backup.cma.part-4242")
	if err := os.WriteFile(stale, []byte("a plaintext copy of every memory"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := run(t, data, "export", "--output", filepath.Join(out, "other.cma")); code != 0 {
		t.Fatalf("export: %d %s", code, errOut)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("stale temporary file survived the next export: %v", err)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 || !strings.HasSuffix(entries[0].Name(), "other.cma") {
		t.Fatalf("directory after export: %v", entries)
	}
}
