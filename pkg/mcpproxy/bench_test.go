package mcpproxy

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// recallAnswerJSON is a recall answer of ten text memories of about 250
// characters each, with their rendered content, as the server writes it
// for the benchmark driver's MCP searches.
func recallAnswerJSON(tb testing.TB) []byte {
	tb.Helper()
	text := strings.Repeat("the deploy pipeline failed on the staging cluster again ", 5)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	resp := memory.RecallQueryResponse{TotalCandidates: 120, QueryMetadata: &memory.QueryMetadata{TotalRecordsScanned: 2000, StoresSearched: []memory.StoreType{memory.StoreEpisodic}}}
	for i := range 10 {
		content := memory.MemoryContent{Blocks: []memory.ContentBlock{{Modality: memory.ModalityText, Format: "text/plain", Data: memory.Bytes(text)}}}
		rec := memory.MemoryRecord{ID: memory.MustParseID("0196a7f0-0000-7000-8000-00000000000" + strconv.Itoa(i)), Store: memory.StoreEpisodic,
			CreatedAt: now, UpdatedAt: now, LastAccessedAt: now, AccessCount: 2, Content: content, Fidelity: memory.FidelityState{Score: 1, Stability: 1, DecayRate: 0.5, EmotionalAnchor: 1},
			Version: 2, Meta: memory.UnavailableMeta(memory.TriggerEncodeStore, now)}
		resp.Memories = append(resp.Memories, memory.RecalledMemory{Record: rec, RelevanceScore: 1.125, ActivationPath: []memory.ID{}, RenderedContent: content})
	}
	b, err := json.Marshal(resp)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// BenchmarkServeRecall measures the proxy's share of an MCP search, as the
// benchmark driver makes it: one tools/call of recall written to the
// proxy's stdin, through Run (the client the binary builds, HTTP over
// loopback to a server that writes a canned answer) to the answer line on
// its stdout.
func BenchmarkServeRecall(b *testing.B) {
	body := recallAnswerJSON(b)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	}))
	defer ts.Close()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, inR, outW, io.Discard, Options{ServerURL: ts.URL}); _ = outW.Close() }()
	defer func() {
		_ = inW.Close()
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	}()
	out := bufio.NewReaderSize(outR, 1<<16)
	call := func(msg string) []byte {
		if _, err := io.WriteString(inW, msg+"\n"); err != nil {
			b.Fatal(err)
		}
		line, err := out.ReadBytes('\n')
		if err != nil {
			b.Fatal(err)
		}
		return line
	}
	call(initializeMsg)
	b.ReportAllocs()
	id := 1
	for b.Loop() {
		id++
		msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"recall","arguments":{"query":"staging","limit":10}}}`, id)
		line := call(msg)
		if !strings.Contains(string(line), `record_id`) {
			b.Fatalf("answer: %.300s", line)
		}
	}
}
