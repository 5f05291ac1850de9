package httpapi

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/metrics"
	"memsvc.dev/memsvc/pkg/wire"

	"github.com/prometheus/client_golang/prometheus"
)

// BenchmarkServe measures the server's own work per request, handler and
// middleware (request id, routing, admission, metrics, encoding), without
// a network: GET /health, and a text recall whose service answers at
// once.
func BenchmarkServe(b *testing.B) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := New(m.Instrument(testkit.CannedRecall{Answer: testkit.RecallAnswer(0)}), Options{Metrics: m, Gatherer: reg,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: time.Now})
	if err != nil {
		b.Fatal(err)
	}
	body := `{"cue":{"text":"deploy pipeline"},"limit":10}`
	for _, bc := range []struct {
		name, method, path, body string
	}{
		{"health", http.MethodGet, wire.PathHealth, ""},
		{"recall", http.MethodPost, wire.PathRecallQuery, body},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var rd io.Reader
				if bc.body != "" {
					rd = strings.NewReader(bc.body)
				}
				r := httptest.NewRequest(bc.method, bc.path, rd)
				if bc.body != "" {
					r.Header.Set("Content-Type", "application/json")
				}
				w := httptest.NewRecorder()
				srv.ServeHTTP(w, r)
				if w.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", bc.path, w.Code, w.Body)
				}
			}
		})
	}
}
