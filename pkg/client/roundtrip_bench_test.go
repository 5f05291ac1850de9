package client_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/httpapi"
	"memsvc.dev/memsvc/pkg/memory"
)

// BenchmarkRoundTrip measures what a recall costs over HTTP apart from
// the engine, against GET /health on the same connection: pkg/client
// and the real handler (pkg/httpapi) over loopback, the service answering
// testkit.RecallAnswer at once, a text answer (dims=0) and a hybrid one
// (384-dimension embeddings). The recall's figure over the health's is
// the share of issue 17's ratio that encoding, transport and decoding
// take. cpu-ns/op is the process's CPU time (client and server) per call,
// answer-bytes the size of one answer as sent.
func BenchmarkRoundTrip(b *testing.B) {
	ctx := context.Background()
	for _, dims := range []int{-1, 0, 384} {
		name := "health"
		if dims >= 0 {
			name = "recall/dims=" + strconv.Itoa(dims)
		}
		b.Run(name, func(b *testing.B) {
			srv, err := httpapi.New(testkit.CannedRecall{Answer: testkit.RecallAnswer(max(dims, 0))},
				httpapi.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: time.Now})
			if err != nil {
				b.Fatal(err)
			}
			var size atomic.Int64
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				cw := &countingWriter{ResponseWriter: w}
				srv.ServeHTTP(cw, r)
				size.Store(cw.n)
			}))
			defer ts.Close()
			c, err := client.New(ts.URL, client.Options{})
			if err != nil {
				b.Fatal(err)
			}
			req := memory.DefaultRecallQueryRequest()
			q := "deploy pipeline"
			req.Cue.Text = &q
			if dims > 0 {
				req.Cue.Embedding = testkit.RecallAnswer(dims).Memories[0].Record.Content.Blocks[0].Embedding
			}
			b.ReportAllocs()
			cpu0 := processCPU(b)
			for b.Loop() {
				if dims < 0 {
					if err := c.Health(ctx); err != nil {
						b.Fatal(err)
					}
					continue
				}
				resp, err := c.RecallQuery(ctx, &req)
				if err != nil {
					b.Fatal(err)
				}
				if len(resp.Memories) != 10 {
					b.Fatalf("recall: %d memories, want 10", len(resp.Memories))
				}
			}
			b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(size.Load()), "answer-bytes")
		})
	}
}

// countingWriter counts the body bytes of an answer.
type countingWriter struct {
	http.ResponseWriter
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.ResponseWriter.Write(p)
}

// processCPU is the user and system CPU time of the process so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
