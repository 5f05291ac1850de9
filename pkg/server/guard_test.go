package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

// fakeDisk reports a free space the test sets, for every path.
type fakeDisk struct{ free atomic.Uint64 }

func (d *fakeDisk) DiskFree(string) (uint64, error) { return d.free.Load(), nil }

// postJSON sends body to the server and returns the status and the
// decoded error envelope, if any.
func postJSON(t *testing.T, addr, method, path string, body any) (int, wire.Envelope, http.Header) {
	t.Helper()
	a := testkit.Do(t, testkit.Request{Method: method, URL: "http://" + addr + path, Body: body})
	var env wire.Envelope
	if a.Status >= 400 {
		if err := json.Unmarshal(a.Body, &env); err != nil {
			t.Fatalf("%s %s: %d with a body that is no envelope: %s", method, path, a.Status, a.Body)
		}
	}
	return a.Status, env, a.Header
}

// TestDiskSpaceGuard: below storage.min_free_bytes writes answer 507
// INSUFFICIENT_STORAGE with Retry-After while reads, export and forget go
// on; below half of it even forget is refused by the store, and answered
// 507 as well; once space returns, writes succeed again, without a restart.
// The guard logs when it starts and stops refusing, not once per request.
func TestDiskSpaceGuard(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t)
	cfg.Storage.MinFreeBytes = 100 << 20
	disk := &fakeDisk{}
	disk.free.Store(1 << 30)
	logs := &testkit.SyncBuffer{}
	c, s := serveWith(t, cfg, Options{Version: "test", DiskFree: disk.DiskFree, Logger: newTestLogger(logs)})
	store := func(text string) (int, wire.Envelope, http.Header) {
		return postJSON(t, s.HTTPAddr(), "POST", wire.PathEncode, map[string]any{
			"content": map[string]any{"blocks": []map[string]any{{"modality": "text", "format": "text/plain", "data": []byte(text)}}},
		})
	}
	kept, err := c.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: memory.TextContent("written with room to spare")})
	if err != nil {
		t.Fatal(err)
	}
	doomed, err := c.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: memory.TextContent("to be forgotten")})
	if err != nil {
		t.Fatal(err)
	}

	disk.free.Store(80 << 20) // under the floor, above the store's reserve
	for i := range 3 {
		code, env, h := store(fmt.Sprint("refused ", i))
		if code != http.StatusInsufficientStorage || env.Code != memory.CodeInsufficientStorage ||
			!strings.Contains(env.Message, "80.0 MiB free") || h.Get("Retry-After") == "" {
			t.Fatalf("store under the floor: %d %+v", code, env)
		}
	}
	code, env, _ := postJSON(t, s.HTTPAddr(), "POST", wire.PathEncodeRawBatch, map[string]any{"records": []any{}})
	if code != http.StatusInsufficientStorage {
		t.Fatalf("raw batch under the floor: %d %+v", code, env)
	}
	// Reads, export and forget go on.
	if _, err := c.Record(ctx, &memory.IntrospectRecordRequest{RecordID: kept.RecordID}); err != nil {
		t.Fatalf("read under the floor: %v", err)
	}
	if s, err := c.Stats(ctx); err != nil || s.TotalRecords != 2 {
		t.Fatalf("stats under the floor: %+v %v", s, err)
	}
	if err := c.Ready(ctx); err != nil {
		t.Fatalf("readiness under the floor: %v", err)
	}
	var archive bytes.Buffer
	if _, err := c.Export(ctx, &memory.ExportRequest{Format: "cma"}, &archive); err != nil {
		t.Fatalf("export under the floor: %v", err)
	}
	yes := true
	if resp, err := c.Forget(ctx, &memory.ForgetRequest{RecordIDs: []memory.ID{doomed.RecordID}, Confirm: &yes}); err != nil || resp.RecordsDeleted != 1 {
		t.Fatalf("forget under the floor: %+v %v", resp, err)
	}

	// Under the store's reserve nothing is written, not even a forget,
	// and the refusal still reads as INSUFFICIENT_STORAGE.
	disk.free.Store(10 << 20)
	_, err = c.Forget(ctx, &memory.ForgetRequest{RecordIDs: []memory.ID{kept.RecordID}, Confirm: &yes})
	if !errors.Is(err, memory.ErrInsufficientStorage) {
		t.Fatalf("forget under the reserve: %v", err)
	}
	if _, err := c.Record(ctx, &memory.IntrospectRecordRequest{RecordID: kept.RecordID}); err != nil {
		t.Fatalf("the refused forget deleted the record: %v", err)
	}

	disk.free.Store(1 << 30)
	if code, env, _ := store("space is back"); code != http.StatusOK {
		t.Fatalf("store after space returned: %d %+v", code, env)
	}
	log := logs.String()
	if n := strings.Count(log, "refusing writes"); n != 1 {
		t.Errorf("the guard logged %d times that it refuses writes, want once:\n%s", n, log)
	}
	if n := strings.Count(log, "accepting writes again"); n != 1 {
		t.Errorf("the guard logged %d times that it accepts writes again, want once:\n%s", n, log)
	}
}

// TestStartOnFullDisk: a start on a file system under the store's reserve
// fails at once with one message that names the directory and what to do,
// and logs nothing else.
func TestStartOnFullDisk(t *testing.T) {
	cfg := testConfig(t)
	cfg.Storage.MinFreeBytes = 100 << 20
	disk := &fakeDisk{}
	disk.free.Store(3 << 20)
	logs := &testkit.SyncBuffer{}
	s := New(cfg, Options{DiskFree: disk.DiskFree, Logger: newTestLogger(logs)})
	res := make(chan error, 1)
	go func() { res <- s.Run(context.Background()) }()
	err := testkit.Receive(t, res, 20*time.Second, "Run on a full disk to return")
	for _, want := range []string{"not opening data directory", "3.0 MiB free", "free some space", "storage.min_free_bytes"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
	if logs.String() != "" {
		t.Errorf("a failed start logged:\n%s", logs)
	}
	select {
	case <-s.Ready():
		t.Fatal("the server became ready on a full disk")
	default:
	}
}

// newTestLogger logs text lines into w.
func newTestLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }
