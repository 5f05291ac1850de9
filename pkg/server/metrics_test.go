package server

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

// TestStateMetrics: /metrics serves the server's state: records per
// store, the dream backlog, the free space of the data and audit file
// systems (as the guard reads it), the floor, and the audit log's append
// failures.
func TestStateMetrics(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTP.MetricsEnabled = true
	auditPath := filepath.Join(t.TempDir(), "audit", "audit.jsonl")
	cfg.Security.AuditLogPath = &auditPath
	disk := &fakeDisk{}
	disk.free.Store(7 << 30)
	c, s := serveWith(t, cfg, Options{Version: "test", DiskFree: disk.DiskFree})
	ctx := context.Background()
	sem := memory.StoreSemantic
	for range 2 {
		if _, err := c.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: memory.TextContent("a fact"), Store: &sem}); err != nil {
			t.Fatal(err)
		}
	}
	raw := memory.DefaultEncodeStoreRawRequest()
	raw.SessionID, raw.Content = "s1", memory.TextContent("raw words")
	if _, err := c.EncodeStoreRaw(ctx, &raw); err != nil {
		t.Fatal(err)
	}

	resp, err := http.Get("http://" + s.HTTPAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		`memsvc_records{store="semantic"} 2`,
		`memsvc_records{store="episodic"} 0`,
		`memsvc_dream_pending_entries 1`,
		`memsvc_storage_free_bytes{volume="data"} 7.516192768e+09`,
		`memsvc_storage_free_bytes{volume="audit"} 7.516192768e+09`,
		`memsvc_storage_min_free_bytes 2.68435456e+08`,
		`memsvc_audit_append_failures_total 0`,
		`memsvc_config_last_reload_successful 1`,
		`memsvc_background_rounds_total{loop="dream",result="ok"} 0`,
	} {
		if !strings.Contains(string(body), "\n"+line+"\n") {
			t.Errorf("/metrics lacks %q", line)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", body)
	}
}
