package mcpproxy

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/httpapi"
)

// TestExportPathRules: export writes only inside its export directory:
// every path rule is checked before the server is called, and nothing that
// exists is touched, inside or outside the directory.
func TestExportPathRules(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	existing := filepath.Join(dir, "existing.cma")
	if err := os.WriteFile(existing, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, l := range []struct{ target, name string }{
		{existing, "link.cma"},
		{filepath.Join(dir, "nowhere.cma"), "dangling.cma"},
		{filepath.Join(outside, "bashrc"), "escape.cma"},
		{outside, "out"},
	} {
		if err := os.Symlink(l.target, filepath.Join(dir, l.name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	// The server must never be called: point the proxy at a closed port,
	// so a call would fail with "unreachable" instead of a path message.
	p := newProxy(t, closedURL(t), client.Options{}, Options{ExportDir: dir})

	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"missing", map[string]any{}, `"output_path": required: the name of a new archive file in the export directory ` + dir},
		{"blank", map[string]any{"output_path": "  "}, `"output_path": required`},
		{"overwrite", map[string]any{"output_path": existing}, "already exists in the export directory " + dir + "; export never overwrites"},
		{"overwrite relative", map[string]any{"output_path": "existing.cma"}, "already exists"},
		{"symlink to a file", map[string]any{"output_path": "link.cma"}, "is a symbolic link in the export directory " + dir},
		{"dangling symlink", map[string]any{"output_path": filepath.Join(dir, "dangling.cma")}, "is a symbolic link"},
		{"symlink out of the directory", map[string]any{"output_path": "escape.cma"}, "is a symbolic link"},
		{"through a symlinked directory", map[string]any{"output_path": "out/new.cma"}, "leads out of the export directory " + dir},
		{"absolute path elsewhere", map[string]any{"output_path": filepath.Join(outside, "new.cma")}, "is outside the export directory " + dir + "; export writes only there"},
		{"a new dot file in a home", map[string]any{"output_path": "/home/someone/.bashrc"}, "is outside the export directory " + dir},
		{"tilde", map[string]any{"output_path": "~/backup.cma"}, "is outside the export directory"},
		{"dot dot", map[string]any{"output_path": "../new.cma"}, "leaves the export directory " + dir},
		{"dot dot from an absolute path", map[string]any{"output_path": dir + "/../new.cma"}, "is outside the export directory"},
		{"missing parent", map[string]any{"output_path": "nope/new.cma"}, "names a directory that does not exist in the export directory " + dir},
		{"parent is a file", map[string]any{"output_path": "existing.cma/new.cma"}, "does not exist in the export directory"},
		{"directory", map[string]any{"output_path": "sub"}, "is a directory in the export directory"},
		{"trailing slash", map[string]any{"output_path": "sub/"}, "names a directory"},
		{"the directory itself", map[string]any{"output_path": dir}, "is a directory"},
		{"encrypt without key", map[string]any{"output_path": "a.cma", "encrypt": true}, `"encryption_key": required when encrypt is true`},
		{"key without encrypt", map[string]any{"output_path": "a.cma", "encryption_key": "k"}, `"encryption_key": given while encrypt is false`},
		{"bad format", map[string]any{"output_path": "a.cma", "format": "zip"}, `"format": "zip" is not accepted; use one of: cma, jsonl`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text, isErr := callTool(t, p, "export", tc.args)
			if !isErr || !strings.Contains(text, tc.want) || !strings.Contains(text, "Nothing was sent") {
				t.Fatalf("isError %v, text %q, want %q", isErr, text, tc.want)
			}
		})
	}
	if b, err := os.ReadFile(existing); err != nil || string(b) != "keep me" {
		t.Fatalf("existing file changed: %q %v", b, err)
	}
	for _, d := range []string{dir, outside} {
		entries, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]int{dir: 6, outside: 0}[d]; len(entries) != want {
			t.Fatalf("export created files in %s: %v", d, entries)
		}
	}
}

// TestExportDirectoryMadeOrMissing: a missing export directory is made
// (0700) by the first export; a proxy without one refuses to export.
func TestExportDirectoryMadeOrMissing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "memsvc", "exports")
	p := newProxy(t, newHTTP(t, httpapi.Options{}), client.Options{}, Options{ExportDir: dir})
	if text, isErr := callTool(t, p, "export", map[string]any{"output_path": "first.cma"}); isErr || !strings.Contains(text, filepath.Join(dir, "first.cma")) {
		t.Fatalf("first export: %s", text)
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("export directory: %v %v", st, err)
	}
	none := newProxy(t, newHTTP(t, httpapi.Options{}), client.Options{}, Options{})
	if text, isErr := callTool(t, none, "export", map[string]any{"output_path": "x.cma"}); !isErr || !strings.Contains(text, "no export directory") {
		t.Fatalf("without an export directory: %v %s", isErr, text)
	}
}

// TestExportWrites: a successful export creates a new 0600 file holding
// the archive, curated records and raw journal included; a failed one
// leaves nothing behind.
func TestExportWrites(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, newHTTP(t, httpapi.Options{}), client.Options{}, Options{ExportDir: dir})
	storeMemory(t, p, map[string]any{"content": "a curated memory"})
	if text, isErr := callTool(t, p, "store_raw", map[string]any{"content": "a raw entry", "session_id": "s1"}); isErr {
		t.Fatal(text)
	}
	if text, isErr := callTool(t, p, "store_raw", map[string]any{"content": "a secret entry", "session_id": "s1", "secrecy_level": "secret"}); isErr {
		t.Fatal(text)
	}

	tests := []struct {
		name      string
		args      map[string]any
		path      string
		records   uint32
		encrypted bool
	}{
		{"absolute", map[string]any{"output_path": filepath.Join(dir, "a.cma")}, filepath.Join(dir, "a.cma"), 2, false},
		{"relative jsonl", map[string]any{"output_path": "b.jsonl", "format": "JSONL"}, filepath.Join(dir, "b.jsonl"), 2, false},
		{"in a subdirectory", map[string]any{"output_path": "sub/e.cma"}, filepath.Join(dir, "sub", "e.cma"), 2, false},
		{"with secrets", map[string]any{"output_path": filepath.Join(dir, "c.cma"), "include_secret": true, "include_sealed": true}, filepath.Join(dir, "c.cma"), 3, false},
		{"encrypted", map[string]any{"output_path": filepath.Join(dir, "d.cma"), "encrypt": true, "encryption_key": "correct horse"}, filepath.Join(dir, "d.cma"), 2, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text, isErr := callTool(t, p, "export", tc.args)
			if isErr {
				t.Fatal(text)
			}
			var res exportResult
			mustJSON(t, text, &res)
			if res.Path != tc.path {
				t.Fatalf("result %s, want the path %s", text, tc.path)
			}
			st, err := os.Lstat(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != 0o600 || !st.Mode().IsRegular() {
				t.Errorf("mode %v, want a regular 0600 file", st.Mode())
			}
			if uint64(st.Size()) != res.SizeBytes || res.RecordCount != tc.records || res.ArchiveID == "" || len(res.Checksum) != 64 {
				t.Errorf("file %d bytes, result %s", st.Size(), text)
			}
			data, err := os.ReadFile(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			// A plaintext archive starts with a JSON header line that
			// counts the raw journal entries; an encrypted one does not.
			first := bytes.SplitN(data, []byte("\n"), 2)[0]
			var header struct {
				RawRecordCount *int `json:"raw_record_count"`
			}
			plain := json.Unmarshal(first, &header) == nil && header.RawRecordCount != nil
			if plain == tc.encrypted || (plain && uint32(*header.RawRecordCount) != tc.records-1) {
				t.Errorf("encrypted %v, but the first line is %.200q", tc.encrypted, first)
			}
		})
	}

	// A server that fails mid-way: the file is removed.
	down := newProxy(t, closedURL(t), client.Options{}, Options{ExportDir: dir})
	text, isErr := callTool(t, down, "export", map[string]any{"output_path": "e.cma"})
	if !isErr || !strings.Contains(text, "unreachable") {
		t.Fatalf("export to a down server: %v %s", isErr, text)
	}
	if _, err := os.Lstat(filepath.Join(dir, "e.cma")); !os.IsNotExist(err) {
		t.Fatalf("failed export left a file: %v", err)
	}
}
