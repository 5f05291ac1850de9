package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/config"
	"memsvc.dev/memsvc/pkg/memory"
)

// TestLoopRecoversPanics: a panicking round is recovered and counted, the
// loop restarts after a back-off that doubles and is capped, and goes on.
func TestLoopRecoversPanics(t *testing.T) {
	var mu sync.Mutex
	var waits []time.Duration
	after := func(d time.Duration) <-chan time.Time {
		mu.Lock()
		waits = append(waits, d)
		mu.Unlock()
		c := make(chan time.Time, 1)
		c <- time.Time{}
		return c
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls, panics := 0, 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		runLoop(ctx, loopOptions{name: "test", interval: time.Hour, runFirst: true, maxBackoff: 4 * time.Second,
			log: slog.New(slog.DiscardHandler), onPanic: func() { panics++ }, after: after},
			func(context.Context) error {
				calls++
				switch {
				case calls <= 4:
					panic(fmt.Sprint("boom ", calls))
				case calls == 5:
					return errors.New("a failed round is only logged")
				case calls == 7:
					cancel()
				}
				return nil
			})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("loop did not stop")
	}
	if panics != 4 || calls != 7 {
		t.Fatalf("panics %d, calls %d", panics, calls)
	}
	// Back-offs 1, 2, 4, 4 (capped), then the interval before each round
	// after the fifth (the last one is asked for and abandoned when the
	// loop sees the cancellation).
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second, time.Hour, time.Hour, time.Hour}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(waits) != fmt.Sprint(want) {
		t.Fatalf("waits %v, want %v", waits, want)
	}
}

func testConfig(t *testing.T) *config.Config {
	t.Helper()
	dir := t.TempDir()
	cfg, err := config.Load(config.LoadOptions{Overrides: []config.Override{
		{Key: "data_dir", Value: dir}, {Key: "http.port", Value: "0"}, {Key: "http.shutdown_timeout_secs", Value: "1"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// start runs a server and returns a client for it and a function that
// stops it and returns Run's result.
func start(t *testing.T, cfg *config.Config) (*client.Client, *Server, func() error) {
	t.Helper()
	s := New(cfg, Options{Version: "test"})
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() { res <- s.Run(ctx) }()
	select {
	case <-s.Ready():
	case err := <-res:
		cancel()
		t.Fatalf("server did not start: %v", err)
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatal("server did not start in time")
	}
	c, err := client.New("http://"+s.HTTPAddr(), client.Options{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c, s, func() error {
		cancel()
		select {
		case err := <-res:
			return err
		case <-time.After(20 * time.Second):
			t.Fatal("server did not stop")
			return nil
		}
	}
}

func TestRunServesAndShutsDown(t *testing.T) {
	cfg := testConfig(t)
	c, _, stop := start(t, cfg)
	ctx := context.Background()
	resp, err := c.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: memory.TextContent("served by memsvc")})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Stats(ctx)
	if err != nil || s.TotalRecords != 1 || !s.BackgroundDecayEnabled || !s.BackgroundDreamEnabled {
		t.Fatalf("stats %+v %v", s, err)
	}
	if err := c.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatalf("run returned %v", err)
	}
	// Everything acknowledged is there after a restart; the audit log
	// verifies.
	c, _, stop = start(t, cfg)
	rec, err := c.Record(ctx, &memory.IntrospectRecordRequest{RecordID: resp.RecordID})
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := rec.Content.Text(); text != "served by memsvc" {
		t.Fatalf("record %q", text)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	rep, err := audit.VerifyFile(filepath.Join(cfg.DataDir, "audit.jsonl"))
	if err != nil || rep.Entries < 1 {
		t.Fatalf("audit %+v %v", rep, err)
	}
}

func TestRefusesUnsafeBind(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTP.BindAddress = "0.0.0.0"
	err := New(cfg, Options{}).Run(context.Background())
	if !errors.Is(err, ErrUnsafeBind) || !strings.Contains(err.Error(), "auth.enabled") {
		t.Fatalf("non-loopback bind without auth: %v", err)
	}
}

// TestShutdownDeadline: a request that never finishes is cut off at the
// shutdown deadline instead of holding the server forever.
func TestShutdownDeadline(t *testing.T) {
	cfg := testConfig(t)
	_, s, stop := start(t, cfg)
	conn, err := net.Dial("tcp", s.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Headers promise a body that never comes.
	if _, err := fmt.Fprintf(conn, "POST /v1/encode HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(begin); took > 10*time.Second {
		t.Fatalf("shutdown took %v with a 1 s deadline", took)
	}
}

func TestGRPCNeedsTLSWithAuth(t *testing.T) {
	cfg := testConfig(t)
	port := uint16(0)
	cfg.GRPC.Port = &port
	cfg.Auth.Enabled, cfg.Auth.APIKeys = true, []string{"k1"}
	err := New(cfg, Options{}).Run(context.Background())
	if !errors.Is(err, ErrUnsafeBind) || !strings.Contains(err.Error(), "grpc.tls_cert_path") {
		t.Fatalf("gRPC with keys over plaintext: %v", err)
	}
}

// TestImportLimitFromConfig: max_import_bytes reaches the engine: a server
// with a 1 MiB limit refuses a bigger archive and says which setting to
// raise, and one with the default takes it.
func TestImportLimitFromConfig(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t)
	c, _, stop := start(t, cfg)
	text := strings.Repeat("a long note that pads the archive out ", 800) // 30 KiB
	for i := range 10 {
		if _, err := c.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: memory.TextContent(fmt.Sprint(i, text))}); err != nil {
			t.Fatal(err)
		}
	}
	var archive bytes.Buffer
	if _, err := c.Export(ctx, &memory.ExportRequest{Format: "cma"}, &archive); err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	// Over the limit, but within what the transport lets through for it
	// (room for encryption), so the engine is the one that refuses.
	if archive.Len() <= 1<<20 || int64(archive.Len()) > importWireLimit(1<<20) {
		t.Fatalf("archive of %d bytes is not between the 1 MiB limit and the transport's %d", archive.Len(), importWireLimit(1<<20))
	}

	small := testConfig(t)
	small.MaxImportBytes = 1 << 20
	c, _, stop = start(t, small)
	req := memory.DefaultImportRequest()
	_, err := c.Import(ctx, &req, bytes.NewReader(archive.Bytes()))
	if memory.CodeOf(err) != memory.CodeImportConflict || !strings.Contains(err.Error(), "max_import_bytes") {
		t.Fatalf("import over the limit: %v", err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	c, _, stop = start(t, testConfig(t))
	resp, err := c.Import(ctx, &req, bytes.NewReader(archive.Bytes()))
	if err != nil || resp.RecordsImported != 10 {
		t.Fatalf("import under the default limit: %+v %v", resp, err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
