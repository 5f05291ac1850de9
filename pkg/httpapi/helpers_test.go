package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"memsvc.dev/memsvc/internal/testkit"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"memsvc.dev/memsvc/pkg/engine"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/metrics"
	"memsvc.dev/memsvc/pkg/wire"
)

// t0 is the fixed time of every test engine.
var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func fixedNow() time.Time { return t0 }

// newEngine opens an engine on an in-memory store with a fixed clock and
// no background similarity linking, so results are deterministic.
func newEngine(t testing.TB) *engine.Engine {
	return testkit.Engine(t, engine.Options{Now: fixedNow, SimilarLinks: -1})
}

// fixture is a Server over svc behind a real HTTP listener.
type fixture struct {
	m    *metrics.Metrics
	srv  *Server
	ts   *httptest.Server
	reg  *prometheus.Registry
	logs *testkit.SyncBuffer
}

// newFixture serves svc with opts; metrics are always recorded on a fresh
// registry, and the log is captured.
func newFixture(t testing.TB, svc memory.Service, opts Options) *fixture {
	t.Helper()
	f := &fixture{reg: prometheus.NewRegistry(), logs: &testkit.SyncBuffer{}}
	m, err := metrics.New(f.reg)
	if err != nil {
		t.Fatal(err)
	}
	opts.Metrics = m
	f.m = m
	opts.Gatherer = f.reg
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	f.srv, err = New(m.Instrument(svc), opts)
	if err != nil {
		t.Fatal(err)
	}
	f.ts = httptest.NewServer(f.srv)
	t.Cleanup(f.ts.Close)
	return f
}

// request is one HTTP call of a test.
type request struct {
	method string
	path   string
	body   string
	// header entries; a JSON Content-Type is added when there is a body
	// and no Content-Type entry (use "" to send none).
	header map[string]string
}

func (f *fixture) do(t testing.TB, rq request) (*http.Response, []byte) {
	t.Helper()
	var body io.Reader
	if rq.body != "" {
		body = strings.NewReader(rq.body)
	}
	req, err := http.NewRequest(rq.method, f.ts.URL+rq.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rq.header["Content-Type"]; !ok && rq.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range rq.header {
		switch {
		case k == "Transfer-Encoding" && v == "chunked":
			// Hide the length so the client sends the body chunked.
			req.Body = io.NopCloser(strings.NewReader(rq.body))
			req.ContentLength = -1
			req.GetBody = nil
		case v != "":
			req.Header.Set(k, v)
		}
	}
	resp, err := f.ts.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", rq.method, rq.path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", rq.method, rq.path, err)
	}
	return resp, data
}

// envelope checks that body is a well-formed error envelope and returns
// its raw fields.
func envelope(t testing.TB, resp *http.Response, body []byte) map[string]json.RawMessage {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != wire.ContentTypeJSON {
		t.Errorf("error Content-Type = %q, want %q", ct, wire.ContentTypeJSON)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("error body %q is not a JSON object: %v", body, err)
	}
	for _, k := range []string{"code", "message", "details", "retry_after"} {
		if _, ok := m[k]; !ok {
			t.Errorf("envelope %s lacks %q", body, k)
		}
	}
	if string(m["details"]) != "null" {
		t.Errorf("details = %s, want null", m["details"])
	}
	for k := range m {
		switch k {
		case "code", "message", "details", "retry_after", "request_id":
		default:
			t.Errorf("envelope has unexpected key %q", k)
		}
	}
	return m
}

// errorEnvelope checks that body is a well-formed error envelope with
// code and returns its raw fields.
func errorEnvelope(t testing.TB, resp *http.Response, body []byte, code memory.Code) map[string]json.RawMessage {
	t.Helper()
	env := envelope(t, resp, body)
	if got := memory.Code(jsonString(t, env["code"])); got != code {
		t.Errorf("code %s, want %s", got, code)
	}
	return env
}

func jsonString(t testing.TB, raw json.RawMessage) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s is not a JSON string: %v", raw, err)
	}
	return s
}

// stubService is a memory.Service whose methods tests set one by one;
// the others panic through the nil embedded interface.
type stubService struct {
	memory.Service
	export func(ctx context.Context, req *memory.ExportRequest, w io.Writer) (*memory.ExportResponse, error)
	imp    func(ctx context.Context, req *memory.ImportRequest, r io.Reader) (*memory.ImportResponse, error)
	stats  func(ctx context.Context) (*memory.Stats, error)
	decay  func(ctx context.Context, req *memory.DecayTickRequest) (*memory.DecayTickResponse, error)
}

func (s *stubService) Export(ctx context.Context, req *memory.ExportRequest, w io.Writer) (*memory.ExportResponse, error) {
	return s.export(ctx, req, w)
}

func (s *stubService) Import(ctx context.Context, req *memory.ImportRequest, r io.Reader) (*memory.ImportResponse, error) {
	return s.imp(ctx, req, r)
}

func (s *stubService) Stats(ctx context.Context) (*memory.Stats, error) {
	if s.stats == nil {
		return &memory.Stats{}, nil
	}
	return s.stats(ctx)
}

func (s *stubService) DecayTick(ctx context.Context, req *memory.DecayTickRequest) (*memory.DecayTickResponse, error) {
	return s.decay(ctx, req)
}
