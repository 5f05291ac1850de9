package engine

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// committingSink is an export destination with a final step; it records
// whether the export's audit entry was already in the log when Commit ran.
type committingSink struct {
	bytes.Buffer
	h         *harness
	path      string
	fail      error
	committed bool
	auditedAt int // export entries in the log at Commit
}

func (s *committingSink) Commit() error {
	s.committed = true
	if err := s.h.e.syncAudit(); err != nil {
		return err
	}
	for _, l := range readAudit(s.h.t, s.path) {
		if l.Operation == audit.OpExport {
			s.auditedAt++
		}
	}
	return s.fail
}

// TestExportCommitsBeforeAuditing: an export to a destination with a
// final step runs that step first and audits only when it succeeded.
func TestExportCommitsBeforeAuditing(t *testing.T) {
	h, path := auditHarness(t)
	ctx := context.Background()
	h.store("exported note", memory.StoreEpisodic)
	exports := func() int {
		if err := h.e.syncAudit(); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, l := range readAudit(t, path) {
			if l.Operation == audit.OpExport {
				n++
			}
		}
		return n
	}

	failed := &committingSink{h: h, path: path, fail: errors.New("rename failed")}
	req := memory.DefaultExportRequest()
	if _, err := h.e.Export(ctx, &req, failed); err == nil || !failed.committed || memory.CodeOf(err) != memory.CodeExportFailed {
		t.Fatalf("export with a failing commit: %v (committed %v)", err, failed.committed)
	}
	if n := exports(); n != 0 {
		t.Fatalf("an export whose file never appeared was audited (%d entries)", n)
	}

	ok := &committingSink{h: h, path: path}
	if _, err := h.e.Export(ctx, &req, ok); err != nil {
		t.Fatal(err)
	}
	if !ok.committed || ok.auditedAt != 0 {
		t.Fatalf("commit ran %v, with %d export entries already logged", ok.committed, ok.auditedAt)
	}
	if n := exports(); n != 1 {
		t.Fatalf("export entries after a committed export: %d", n)
	}
}

// TestLogOperationWith: the caller's writes commit with the audit entry.
func TestLogOperationWith(t *testing.T) {
	h, path := auditHarness(t)
	ctx := context.Background()
	err := h.e.LogOperation(ctx, audit.OpMigrateStoreEncryption, map[string]any{"n": 1}, func(b *store.Batch) {
		b.PutMeta("test_marker", []byte("x"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := h.db.GetMeta("test_marker"); err != nil || string(v) != "x" {
		t.Fatalf("caller's write: %q %v", v, err)
	}
	if err := h.e.syncAudit(); err != nil {
		t.Fatal(err)
	}
	lines := readAudit(t, path)
	if len(lines) != 1 || lines[0].Operation != audit.OpMigrateStoreEncryption {
		t.Fatalf("audit log: %+v", lines)
	}

	// Without an audit log the writes are committed alone.
	plain := newHarness(t, Options{SimilarLinks: -1})
	if err := plain.e.LogOperation(ctx, audit.OpMigrateStoreEncryption, nil, func(b *store.Batch) { b.PutMeta("test_marker", []byte("y")) }); err != nil {
		t.Fatal(err)
	}
	if v, err := plain.db.GetMeta("test_marker"); err != nil || string(v) != "y" {
		t.Fatalf("caller's write without audit log: %q %v", v, err)
	}
}
