package testkit

import (
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/wire"

	"memsvc.dev/memsvc/pkg/memory"
)

// RecallAnswer is the recall answer the transport and proxy benchmarks
// serve, shaped like the benchmark driver's searches: ten text memories
// of about 330 characters returned with their rendered content, each with
// an embedding of dims random values (none when 0), and the query's
// metadata. The same dims give the same answer.
func RecallAnswer(dims int) *memory.RecallQueryResponse {
	rng := rand.New(rand.NewPCG(1, 2))
	text := strings.Repeat("the deploy pipeline failed on the staging cluster again ", 6)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	resp := &memory.RecallQueryResponse{TotalCandidates: 120,
		QueryMetadata: &memory.QueryMetadata{TotalRecordsScanned: 2000, StoresSearched: []memory.StoreType{memory.StoreEpisodic}}}
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
	return resp
}

// CannedRecall is a service whose recall answers Answer at once; every
// other method is unimplemented (it panics through the nil Service).
type CannedRecall struct {
	memory.Service
	Answer *memory.RecallQueryResponse
}

// RecallQuery implements memory.Service.
func (c CannedRecall) RecallQuery(context.Context, *memory.RecallQueryRequest) (*memory.RecallQueryResponse, error) {
	return c.Answer, nil
}

// RecallServer starts an HTTP server on loopback that answers every
// request, after reading its body, with RecallAnswer(dims) as the server
// writes it, and returns its URL and that answer; it is closed when the
// test ends.
func RecallServer(tb testing.TB, dims int) (url string, body []byte) {
	tb.Helper()
	body, err := json.Marshal(RecallAnswer(dims))
	if err != nil {
		tb.Fatal(err)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", wire.ContentTypeJSON)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	}))
	tb.Cleanup(ts.Close)
	return ts.URL, body
}
