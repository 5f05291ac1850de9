package client

import (
	"context"
	"strconv"
	"testing"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/memory"
)

// BenchmarkRecallQuery measures the client's share of a recall over
// loopback: encoding the request, reading and decoding the answer (the
// server only writes a canned body).
func BenchmarkRecallQuery(b *testing.B) {
	for _, dims := range []int{0, 384} {
		b.Run("dims="+strconv.Itoa(dims), func(b *testing.B) {
			url, body := testkit.RecallServer(b, dims)
			c, err := New(url, Options{})
			if err != nil {
				b.Fatal(err)
			}
			req := memory.DefaultRecallQueryRequest()
			q := "deploy pipeline"
			req.Cue.Text = &q
			ctx := context.Background()
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				resp, err := c.RecallQuery(ctx, &req)
				if err != nil || len(resp.Memories) != 10 {
					b.Fatalf("recall: %v", err)
				}
			}
		})
	}
}
