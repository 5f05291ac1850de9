//go:build linux

package server

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/engine"
	"memsvc.dev/memsvc/pkg/httpapi"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// TestReadinessFollowsAuditLog: while the audit log cannot append (here the
// process may not grow the file, which fails a write as a full disk does),
// the data layer reports not ready; once the file may grow again the audit
// log recovers by itself, without a restart, readiness returns, and the log
// holds every change exactly once.
//
// The limit on file size applies to every file the process writes, so the
// store lives in memory for this test.
func TestReadinessFollowsAuditLog(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	logs := &testkit.SyncBuffer{}
	log := newTestLogger(logs)
	db, err := store.OpenInMemory()
	if err != nil {
		t.Fatal(err)
	}
	alog, err := audit.Open(path, audit.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open(ctx, db, engineOptions(cfg, log, alog, nil))
	if err != nil {
		t.Fatal(err)
	}
	l := &Local{cfg: cfg, log: log, db: db, audit: alog, eng: eng, svc: eng}
	closed := false
	defer func() {
		if !closed {
			_ = l.Close()
		}
	}()
	entries := func() uint64 {
		rep, err := audit.VerifyFile(path)
		if err != nil && !errors.Is(err, audit.ErrTorn) {
			t.Fatalf("audit log does not verify: %v", err)
		}
		return rep.Entries
	}
	store := func(text string) {
		t.Helper()
		if _, err := l.Service().EncodeStore(ctx, &memory.EncodeStoreRequest{Content: memory.TextContent(text)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, text := range []string{"one", "two", "three"} {
		store(text)
	}
	testkit.WaitFor(t, 10*time.Second, "three entries in the audit log", func() bool { return entries() == 3 }, nil)
	if err := l.Ready(ctx); err != nil {
		t.Fatalf("readiness with a healthy audit log: %v", err)
	}

	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	limited := old
	limited.Cur = uint64(fi.Size()) + 16
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limited); err != nil {
		t.Fatal(err)
	}
	restored := false
	restore := func() {
		if !restored {
			restored = true
			if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer restore()

	store("four") // committed and acknowledged; its entry waits in the outbox
	var notReady error
	testkit.WaitFor(t, 10*time.Second, "not ready while the audit log cannot append", func() bool {
		notReady = l.Ready(ctx)
		return notReady != nil
	}, nil)
	if !strings.Contains(notReady.Error(), "cannot append") || !errors.Is(notReady, syscall.EFBIG) {
		t.Fatalf("readiness error %v", notReady)
	}
	// /readiness tells why, naming the system error but no path.
	nre, ok := errors.AsType[*httpapi.NotReadyError](notReady)
	if !ok || nre.Reason != "audit log cannot append (file too large); changes wait until it can" {
		t.Fatalf("readiness reason of %v", notReady)
	}
	restore()
	// No change comes to wake the appender: it retries on its own.
	testkit.WaitFor(t, 20*time.Second, "ready again once the audit log may grow", func() bool { return l.Ready(ctx) == nil }, nil)
	testkit.WaitFor(t, 10*time.Second, "the waiting entry in the audit log", func() bool { return entries() == 4 }, nil)
	store("five")
	testkit.WaitFor(t, 10*time.Second, "every entry in the audit log", func() bool { return entries() == 5 }, nil)

	closed = true
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if rep, err := audit.VerifyFile(path); err != nil || rep.Entries != 5 {
		t.Fatalf("audit log after recovery: %+v %v", rep, err)
	}
	if n := strings.Count(logs.String(), "cannot append"); n != 1 {
		t.Errorf("the failure was logged %d times, want once:\n%s", n, logs)
	}
}
