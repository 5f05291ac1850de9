package server

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store/storetest"
)

// TestReadyDetail: a ready server reports disk space under the floor and
// records quarantined as unreadable in its readiness detail, as counts
// and sizes without paths, and reports nothing when all is well.
func TestReadyDetail(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := loadConfig(t, dir)
	pass := "correct horse battery staple"
	cfg.Security.StoreEncryptionPassphrase = &pass
	var free atomic.Uint64
	free.Store(1 << 40)
	opts := LocalOptions{Create: true, DiskFree: func(string) (uint64, error) { return free.Load(), nil }}
	l, err := OpenLocal(ctx, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	var ids []memory.ID
	for _, text := range []string{"the kept note", "the note that gets damaged"} {
		resp, err := l.Service().EncodeStore(ctx, &memory.EncodeStoreRequest{Content: memory.TextContent(text)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, resp.RecordID)
	}
	if d := l.ReadyDetail(); len(d) != 0 {
		t.Fatalf("detail of a healthy server: %q", d)
	}
	free.Store(cfg.Storage.MinFreeBytes - 1<<20)
	if d := l.ReadyDetail(); len(d) != 1 || !strings.HasPrefix(d[0], "disk space low: ") || strings.Contains(d[0], dir) {
		t.Fatalf("detail under the floor: %q", d)
	}
	if err := l.Ready(ctx); err != nil {
		t.Fatalf("not ready under the floor (reads go on): %v", err)
	}
	free.Store(1 << 40)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	storetest.DamageValue(t, dir, []byte(pass), []byte{'c'}, ids[1]) // 'c': the records' key kind
	l, err = OpenLocal(ctx, cfg, opts)
	if err != nil {
		t.Fatalf("a damaged record stopped the open: %v", err)
	}
	defer l.Close()
	if err := l.Ready(ctx); err != nil {
		t.Fatalf("not ready with a quarantined record: %v", err)
	}
	if d := l.ReadyDetail(); len(d) != 1 || !strings.HasPrefix(d[0], "1 stored value quarantined as unreadable") {
		t.Fatalf("detail with a damaged record: %q", d)
	}
}

// TestNotReadyReason: the audit log's failure names the system error and
// no path.
func TestNotReadyReason(t *testing.T) {
	err := fmt.Errorf("append /var/lib/memsvc/audit.jsonl: %w", syscall.ENOSPC)
	if got := causeOf(err); got != "no space left on device" {
		t.Fatalf("causeOf = %q", got)
	}
	if got := causeOf(fmt.Errorf("odd: %w", context.Canceled)); strings.Contains(got, "odd") {
		t.Fatalf("causeOf leaks the message: %q", got)
	}
}
