package admincmd

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/audit"
)

// auditFixture writes a log of n entries with the audit package and
// returns its path and head hash.
func auditFixture(t *testing.T, dir string, n int) (string, string) {
	t.Helper()
	path := filepath.Join(dir, "audit.jsonl")
	l, err := audit.Open(path, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops := []string{audit.OpEncodeStore, audit.OpForget, audit.OpImport}
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("0190f5d2-8c4e-7a1b-9c3d-%012x", i)
		if err := l.Append(audit.Event{
			Sequence:   uint64(i),
			Time:       t0.Add(time.Duration(i) * time.Minute),
			Operation:  ops[i%len(ops)],
			RecordIDs:  []string{id},
			StoreTypes: []string{"episodic"},
			Summary:    []byte(fmt.Sprintf(`{"record_id":%q,"n":%d}`, id, i)),
		}); err != nil {
			t.Fatal(err)
		}
	}
	_, head := l.Last()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return path, head
}

// editLines rewrites the log at path line by line.
func editLines(t *testing.T, path string, f func(lines [][]byte) [][]byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	if err := os.WriteFile(path, bytes.Join(f(lines), nil), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestAuditVerify(t *testing.T) {
	path, head := auditFixture(t, t.TempDir(), 5)
	for _, args := range [][]string{
		{"audit", "verify", "--path", path},
		{"audit", "verify", "--data-dir", filepath.Dir(path)},
	} {
		r := run(t, args...)
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("%q: exit %d\n%s", args, r.code, r.stderr)
		}
		m := decode(t, r)
		if m["path"] != path || num(t, m, "entries") != 5 || num(t, m, "last_sequence") != 5 || m["head_hash"] != head || m["ok"] != true || m["torn_tail"] != nil {
			t.Errorf("%q: report %v", args, m)
		}
	}
}

// TestAuditVerifyDefaultPath: without flags the log is ./data/audit.jsonl.
func TestAuditVerifyDefaultPath(t *testing.T) {
	dir := t.TempDir()
	auditFixture(t, filepath.Join(dir, "data"), 2)
	t.Chdir(dir)
	r := run(t, "audit", "verify")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if m := decode(t, r); m["path"] != filepath.Join("data", "audit.jsonl") || num(t, m, "entries") != 2 {
		t.Errorf("report %v", m)
	}
}

// TestAuditVerifyBroken: every kind of damage names the first bad line,
// the fault and the reason, and exits 1.
func TestAuditVerifyBroken(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edit   func(lines [][]byte) [][]byte
		line   int
		seq    int
		fault  string
		reason string
	}{
		{"tampered line", func(l [][]byte) [][]byte {
			l[2] = bytes.Replace(l[2], []byte(`"n":3`), []byte(`"n":4`), 1)
			return l
		}, 3, 3, "entry_hash", "entry_hash"},
		{"deleted line", func(l [][]byte) [][]byte {
			return append(l[:2:2], l[3:]...)
		}, 3, 3, "sequence", "expected 3, got 4"},
		{"blank line", func(l [][]byte) [][]byte {
			return append(l[:2:2], append([][]byte{[]byte("\n")}, l[2:]...)...)
		}, 3, 3, "blank", "blank"},
		{"swapped lines", func(l [][]byte) [][]byte {
			l[1], l[2] = l[2], l[1]
			return l
		}, 2, 2, "sequence", "expected 2, got 3"},
		{"unknown field", func(l [][]byte) [][]byte {
			l[3] = bytes.Replace(l[3], []byte(`{"version":1,`), []byte(`{"version":1,"extra":true,`), 1)
			return l
		}, 4, 4, "noncanonical", ""},
		{"first line deleted", func(l [][]byte) [][]byte {
			return l[1:]
		}, 1, 1, "sequence", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, _ := auditFixture(t, t.TempDir(), 5)
			editLines(t, path, tc.edit)
			r := run(t, "audit", "verify", "--path", path)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
			}
			m := decode(t, r)
			if m["ok"] != false || num(t, m, "line") != tc.line || num(t, m, "expected_sequence") != tc.seq || m["fault"] != tc.fault ||
				num(t, m, "entries") != tc.line-1 || !strings.Contains(fmt.Sprint(m["reason"]), tc.reason) {
				t.Errorf("report %v, want line %d, fault %s", m, tc.line, tc.fault)
			}
			want := fmt.Sprintf("Error: audit log is NOT intact: audit log %s line %d: ", path, tc.line)
			if !strings.HasPrefix(r.stderr, want) {
				t.Errorf("stderr %q, want prefix %q", r.stderr, want)
			}
		})
	}
}

// TestAuditVerifyTornTail: a last line without its newline (an append in
// progress) is a warning: the complete lines verify, exit 0.
func TestAuditVerifyTornTail(t *testing.T) {
	path, head := auditFixture(t, t.TempDir(), 4)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"version":1,"sequence":5,"timestamp":"2026-11-01T02:`); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	r := run(t, "audit", "verify", "--path", path)
	if r.code != 0 || !strings.HasPrefix(r.stderr, "warning: ") || !strings.Contains(r.stderr, "line 5") || !strings.Contains(r.stderr, "the 4 complete entries verify") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	m := decode(t, r)
	if m["ok"] != true || m["torn_tail"] != true || num(t, m, "entries") != 4 || m["head_hash"] != head {
		t.Errorf("report %v", m)
	}
	// --quiet does not hide the warning.
	if r := run(t, "--quiet", "audit", "verify", "--path", path); !strings.HasPrefix(r.stderr, "warning: ") {
		t.Errorf("--quiet hid the warning: %q", r.stderr)
	}
}

func TestAuditVerifyMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	r := run(t, "audit", "verify", "--path", path)
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "no audit log at "+path) {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// An empty log or a directory is nothing to verify either.
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{path: "audit log " + path + " is empty", filepath.Dir(path): "is not a regular file"} {
		r := run(t, "audit", "verify", "--path", p)
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: exit %d\n%s%s", p, r.code, r.stdout, r.stderr)
		}
	}
}
