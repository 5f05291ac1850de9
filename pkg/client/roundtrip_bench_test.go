package client_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
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
// testkit.RecallAnswer at once. The recall's figure over the health's is
// the share of issue 17's ratio that encoding, transport and decoding
// take.
func BenchmarkRoundTrip(b *testing.B) {
	srv, err := httpapi.New(testkit.CannedRecall{Answer: testkit.RecallAnswer(0)},
		httpapi.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: time.Now})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c, err := client.New(ts.URL, client.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.Run("health", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := c.Health(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("recall", func(b *testing.B) {
		req := memory.DefaultRecallQueryRequest()
		q := "deploy pipeline"
		req.Cue.Text = &q
		b.ReportAllocs()
		for b.Loop() {
			resp, err := c.RecallQuery(ctx, &req)
			if err != nil {
				b.Fatal(err)
			}
			if len(resp.Memories) != 10 {
				b.Fatalf("recall: %d memories, want 10", len(resp.Memories))
			}
		}
	})
}
