package grpcapi

import (
	"context"
	"io"
	"log/slog"
	"memsvc.dev/memsvc/internal/testkit"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/types/known/structpb"

	"memsvc.dev/memsvc/pkg/engine"
	pb "memsvc.dev/memsvc/pkg/grpcapi/memsvcpb"
	"memsvc.dev/memsvc/pkg/memory"
)

// t0 is the fixed time of every test engine.
var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// newEngine opens an engine on an in-memory store with a fixed clock and
// no background similarity linking, so results are deterministic.
func newEngine(t testing.TB) *engine.Engine {
	return testkit.Engine(t, engine.Options{Now: func() time.Time { return t0 }, SimilarLinks: -1})
}

// fixture is a Server over svc on a bufconn listener and a client of it.
type fixture struct {
	srv    *Server
	conn   *grpc.ClientConn
	client pb.MemsvcServiceClient
	health healthpb.HealthClient
	logs   *testkit.SyncBuffer
	stop   context.CancelFunc
	served chan error
}

// newFixture serves svc with opts until the test ends; the log is
// captured.
func newFixture(t testing.TB, svc memory.Service, opts Options) *fixture {
	t.Helper()
	f := &fixture{logs: &testkit.SyncBuffer{}, served: make(chan error, 1)}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	var err error
	f.srv, err = NewServer(svc, opts)
	if err != nil {
		t.Fatal(err)
	}
	ln := bufconn.Listen(1 << 20)
	ctx, cancel := context.WithCancel(context.Background())
	f.stop = cancel
	go func() { f.served <- f.srv.Serve(ctx, ln) }()
	f.conn, err = grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return ln.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)),
	)
	if err != nil {
		t.Fatal(err)
	}
	f.client = pb.NewMemsvcServiceClient(f.conn)
	f.health = healthpb.NewHealthClient(f.conn)
	t.Cleanup(func() {
		_ = f.conn.Close()
		f.shutdown(t)
	})
	return f
}

// shutdown ends Serve and waits for it (bounded). It may be called more
// than once.
func (f *fixture) shutdown(t testing.TB) {
	t.Helper()
	f.stop()
	select {
	case err, ok := <-f.served:
		if ok && err != nil {
			t.Errorf("Serve: %v", err)
		}
		if ok {
			close(f.served)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
}

// stubService is a memory.Service whose methods tests set one by one; the
// others panic through the nil embedded interface.
type stubService struct {
	memory.Service
	stats     func(ctx context.Context) (*memory.Stats, error)
	evolution func(ctx context.Context) (*memory.EvolutionMetrics, error)
	export    func(ctx context.Context, req *memory.ExportRequest, w io.Writer) (*memory.ExportResponse, error)
	imp       func(ctx context.Context, req *memory.ImportRequest, r io.Reader) (*memory.ImportResponse, error)
}

func (s *stubService) Stats(ctx context.Context) (*memory.Stats, error) {
	if s.stats == nil {
		return &memory.Stats{}, nil
	}
	return s.stats(ctx)
}

func (s *stubService) Evolution(ctx context.Context) (*memory.EvolutionMetrics, error) {
	if s.evolution == nil {
		return &memory.EvolutionMetrics{}, nil
	}
	return s.evolution(ctx)
}

func (s *stubService) Export(ctx context.Context, req *memory.ExportRequest, w io.Writer) (*memory.ExportResponse, error) {
	return s.export(ctx, req, w)
}

func (s *stubService) Import(ctx context.Context, req *memory.ImportRequest, r io.Reader) (*memory.ImportResponse, error) {
	return s.imp(ctx, req, r)
}

func textContent(s string) *pb.MemoryContent {
	return &pb.MemoryContent{Blocks: []*pb.ContentBlock{{Modality: pb.Modality_MODALITY_TEXT, Format: "text/plain", Data: []byte(s)}}}
}

func mustStruct(t testing.TB, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// serveTCP serves srv on a loopback TCP port until the test ends and
// returns the address; the cleanup stops it and checks Serve's result.
func serveTCP(t testing.TB, srv *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
	})
	return ln.Addr().String()
}
