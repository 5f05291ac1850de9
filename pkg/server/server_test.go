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

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/config"
	"memsvc.dev/memsvc/pkg/engine"
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
	testkit.Receive(t, done, 10*time.Second, "the loop to stop")
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
	return startWith(t, cfg, Options{Version: "test"})
}

// serve is start for a server that runs until the test ends: then it is
// stopped, and a failed stop fails the test.
func serve(t *testing.T, cfg *config.Config) (*client.Client, *Server) {
	t.Helper()
	return serveWith(t, cfg, Options{Version: "test"})
}

// serveWith is serve with the given options.
func serveWith(t *testing.T, cfg *config.Config, opts Options) (*client.Client, *Server) {
	t.Helper()
	c, s, stop := startWith(t, cfg, opts)
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	})
	return c, s
}

// startWith is start with the given options.
func startWith(t *testing.T, cfg *config.Config, opts Options) (*client.Client, *Server, func() error) {
	t.Helper()
	s := New(cfg, opts)
	cancel, res := runReady(t, s)
	c, err := client.New("http://"+s.HTTPAddr(), client.Options{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c, s, func() error {
		cancel()
		return testkit.Receive(t, res, 20*time.Second, "the server to stop")
	}
}

// runReady runs s and waits (at most 20 seconds) until it is ready; the
// test fails when Run returns first. It returns what ends Run and the
// channel Run's result comes on.
func runReady(t *testing.T, s *Server) (context.CancelFunc, <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() { res <- s.Run(ctx) }()
	select {
	case <-s.Ready():
		return cancel, res
	case err := <-res:
		cancel()
		t.Fatalf("server did not start: %v", err)
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatal("server did not start in time")
	}
	return nil, nil
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

// TestDecayFromConfig: the decay keys reach the engine. New records get
// the configured initial stability of their store, and a decay tick
// prunes what falls under the configured decay.prune_below.
func TestDecayFromConfig(t *testing.T) {
	ctx := context.Background()
	cfg, err := config.Load(config.LoadOptions{
		Environ: []string{
			"MEMSVC_DECAY__STABILITY_DAYS__EPISODIC=3",
			"MEMSVC_DECAY__STABILITY_DAYS__SEMANTIC=7",
			"MEMSVC_DECAY__PRUNE_BELOW=0.05",
		},
		Overrides: []config.Override{
			{Key: "data_dir", Value: t.TempDir()}, {Key: "http.port", Value: "0"}, {Key: "http.shutdown_timeout_secs", Value: "1"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := serve(t, cfg)
	store := func(st memory.StoreType) memory.ID {
		resp, err := c.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: memory.TextContent("a note in " + st.String()), Store: &st})
		if err != nil {
			t.Fatal(err)
		}
		return resp.RecordID
	}
	episodic, semantic := store(memory.StoreEpisodic), store(memory.StoreSemantic)
	for id, want := range map[memory.ID]float64{episodic: 3, semantic: 7} {
		rec, err := c.Record(ctx, &memory.IntrospectRecordRequest{RecordID: id})
		if err != nil {
			t.Fatal(err)
		}
		if rec.Fidelity.Stability != want {
			t.Errorf("%s record: stability %v, want the configured %v", rec.Store, rec.Fidelity.Stability, want)
		}
	}
	// 1500 days: the episodic record (S = 3) is at (1+500)^-0.5 = 0.045,
	// under 0.05; the semantic one (S = 7) at (1+214)^-0.5 = 0.068.
	d := uint32(1500 * 86400)
	resp, err := c.DecayTick(ctx, &memory.DecayTickRequest{TickDurationSeconds: &d, AllowLong: true})
	if err != nil {
		t.Fatal(err)
	}
	if resp.RecordsPruned != 1 {
		t.Fatalf("decay tick %+v: want the episodic record pruned", resp)
	}
	if _, err := c.Record(ctx, &memory.IntrospectRecordRequest{RecordID: episodic}); memory.CodeOf(err) != memory.CodeNotFound {
		t.Fatalf("pruned record: %v", err)
	}
	if _, err := c.Record(ctx, &memory.IntrospectRecordRequest{RecordID: semantic}); err != nil {
		t.Fatalf("record above prune_below: %v", err)
	}
}

// TestDecayDefaultsMatchEngine: the configuration's decay defaults and
// limits (pkg/config cannot import the engine) are the engine's own.
func TestDecayDefaultsMatchEngine(t *testing.T) {
	if config.MaxPruneBelow != engine.DormantBelow {
		t.Errorf("config.MaxPruneBelow %v, engine.DormantBelow %v", config.MaxPruneBelow, engine.DormantBelow)
	}
	opts := engineOptions(config.Defaults(), nil, nil, nil)
	if opts.Decay.PruneBelow != 0 {
		t.Errorf("default prune_below %v", opts.Decay.PruneBelow)
	}
	for _, st := range memory.PersistentStores() {
		if got, want := opts.Decay.StabilityDays[st], engine.DefaultStabilityDays()[st]; got != want {
			t.Errorf("%s: configured default stability %v, engine default %v", st, got, want)
		}
	}
}
