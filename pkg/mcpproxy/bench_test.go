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

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

// BenchmarkServeRecall measures the proxy's share of an MCP search, as the
// benchmark driver makes it: one tools/call of recall written to the
// proxy's stdin, through Run (the client the binary builds, HTTP over
// loopback to a server that writes a canned answer, brief when asked for
// one as memsvc serve does) to the answer line on its stdout.
func BenchmarkServeRecall(b *testing.B) {
	answer := testkit.RecallAnswer(0)
	full, err := json.Marshal(answer)
	if err != nil {
		b.Fatal(err)
	}
	brief, err := memory.RecallBrief{Response: answer}.MarshalJSON()
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		body := full
		if r.URL.Query().Get(wire.QueryView) == memory.ViewBrief {
			body = brief
		}
		w.Header().Set("Content-Type", wire.ContentTypeJSON)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	}))
	defer ts.Close()
	url := ts.URL
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, inR, outW, io.Discard, Options{ServerURL: url}); _ = outW.Close() }()
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
