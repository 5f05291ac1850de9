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
// a network: GET /health, and recalls whose service answers at once, a
// text answer and one with 384-dimension embeddings, each in the default
// form and with ?binary=base64 (which a server that does not know it
// ignores).
func BenchmarkServe(b *testing.B) {
	body := `{"cue":{"text":"deploy pipeline"},"limit":10}`
	base64 := "?" + wire.QueryBinary + "=" + wire.BinaryBase64
	for _, bc := range []struct {
		name, method, path, body string
		dims                     int
	}{
		{"health", http.MethodGet, wire.PathHealth, "", 0},
		{"recall", http.MethodPost, wire.PathRecallQuery, body, 0},
		{"recall-base64", http.MethodPost, wire.PathRecallQuery + base64, body, 0},
		{"recall-384", http.MethodPost, wire.PathRecallQuery, body, 384},
		{"recall-384-base64", http.MethodPost, wire.PathRecallQuery + base64, body, 384},
	} {
		b.Run(bc.name, func(b *testing.B) {
			reg := prometheus.NewRegistry()
			m, err := metrics.New(reg)
			if err != nil {
				b.Fatal(err)
			}
			srv, err := New(m.Instrument(testkit.CannedRecall{Answer: testkit.RecallAnswer(bc.dims)}), Options{Metrics: m, Gatherer: reg,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: time.Now})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			size := 0
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
				size = w.Body.Len()
			}
			b.ReportMetric(float64(size), "answer-bytes")
		})
	}
}
