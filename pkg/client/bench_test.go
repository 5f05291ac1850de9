package client

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// recallAnswerJSON is a recall answer of ten memories of a few hundred
// characters, with an embedding of dims values each (none when 0) and
// their rendered content, as the server writes it.
func recallAnswerJSON(tb testing.TB, dims int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	text := strings.Repeat("the deploy pipeline failed on the staging cluster again ", 6)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	resp := memory.RecallQueryResponse{TotalCandidates: 120}
	for i := range 10 {
		var emb []float32
		for range dims {
			emb = append(emb, rng.Float32()*2-1)
		}
		content := memory.MemoryContent{Blocks: []memory.ContentBlock{{Modality: memory.ModalityText, Format: "text/plain", Data: memory.Bytes(text), Embedding: emb}}}
		rec := memory.MemoryRecord{ID: memory.MustParseID("0196a7f0-0000-7000-8000-00000000000" + strconv.Itoa(i)), Store: memory.StoreEpisodic,
			CreatedAt: now, UpdatedAt: now, LastAccessedAt: now, Content: content, Fidelity: memory.FidelityState{Score: 1, Stability: 2},
			Version: 1, Meta: memory.UnavailableMeta(memory.TriggerEncodeStore, now)}
		resp.Memories = append(resp.Memories, memory.RecalledMemory{Record: rec, RelevanceScore: 0.5, RenderedContent: content})
	}
	b, err := json.Marshal(resp)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// BenchmarkRecallQuery measures the client's share of a recall over
// loopback: encoding the request, reading and decoding the answer (the
// server only writes a canned body).
func BenchmarkRecallQuery(b *testing.B) {
	for _, dims := range []int{0, 384} {
		b.Run("dims="+strconv.Itoa(dims), func(b *testing.B) {
			body := recallAnswerJSON(b, dims)
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Length", strconv.Itoa(len(body)))
				_, _ = w.Write(body)
			}))
			defer ts.Close()
			c, err := New(ts.URL, Options{})
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
