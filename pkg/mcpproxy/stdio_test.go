package mcpproxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/httpapi"
)

// parseStdout requires every line of out to be a JSON-RPC 2.0 response and
// returns them by id ("null" for answers without one).
func parseStdout(t *testing.T, out string) map[string]answer {
	t.Helper()
	got := map[string]answer{}
	for _, a := range parseAnswers(t, []byte(out)) {
		got[string(a.ID)] = a
	}
	return got
}

const initializeMsg = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`

// TestRunSession drives Run as an MCP client does and checks the process
// rules: only JSON-RPC on stdout, logs on stderr, no server call until a
// tool is called, every request answered even when stdin ends right
// after it.
func TestRunSession(t *testing.T) {
	srv, err := httpapi.New(newEngine(t), httpapi.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)

	in := strings.Join([]string{
		initializeMsg,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		``,
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
		`{not json`,
		`{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"store","arguments":{"content":"written just before stdin closed"}}}`,
	}, "\n") // no final newline: the last message ends with the input
	var stdout, stderr bytes.Buffer
	err = Run(t.Context(), strings.NewReader(in), &stdout, &stderr, Options{ServerURL: ts.URL + "/", Version: "9.9.9"})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr.String())
	}
	got := parseStdout(t, stdout.String())
	if len(got) != 5 {
		t.Fatalf("%d answers, want 5:\n%s", len(got), stdout.String())
	}
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
		ServerInfo      struct{ Name, Version string }
		Capabilities    struct {
			Tools *struct{} `json:"tools"`
		}
		Instructions string
	}
	if err := json.Unmarshal(got["1"].Result, &init); err != nil {
		t.Fatal(err)
	}
	if init.ProtocolVersion != "2025-06-18" || init.ServerInfo.Name != "memsvc" || init.ServerInfo.Version != "9.9.9" ||
		init.Capabilities.Tools == nil || !strings.Contains(init.Instructions, "meta_json") {
		t.Errorf("initialize: %s", got["1"].Result)
	}
	if !strings.Contains(string(got["2"].Result), `"name":"update"`) || got["3"].Error != nil {
		t.Errorf("tools/list %s, ping %+v", got["2"].Result, got["3"].Error)
	}
	if e := got["null"].Error; e == nil || e.Code != -32700 {
		t.Errorf("malformed line: %+v", got["null"])
	}
	if r := string(got[`"s"`].Result); !strings.Contains(r, `record_id`) || strings.Contains(r, "isError") {
		t.Errorf("store: %s", r)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the server got %d requests, want 1 (only the tool call)", n)
	}
	if !strings.Contains(stderr.String(), "MCP proxy serving on stdio") || !strings.Contains(stderr.String(), "server="+ts.URL) {
		t.Errorf("stderr: %s", stderr.String())
	}
}

// TestRunServerDown: the proxy starts without a server and reports it per
// call.
func TestRunServerDown(t *testing.T) {
	url := closedURL(t)
	in := initializeMsg + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"stats","arguments":{}}}` + "\n"
	var stdout, stderr bytes.Buffer
	if err := Run(t.Context(), strings.NewReader(in), &stdout, &stderr, Options{ServerURL: url}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	got := parseStdout(t, stdout.String())
	var res struct {
		Content []struct{ Text string }
		IsError bool
	}
	if err := json.Unmarshal(got["2"].Result, &res); err != nil || !res.IsError || len(res.Content) != 1 ||
		!strings.Contains(res.Content[0].Text, "unreachable at "+url) {
		t.Fatalf("stats with the server down: %s", got["2"].Result)
	}
	if got["1"].Error != nil {
		t.Fatalf("initialize failed: %+v", got["1"].Error)
	}
}

// TestRunRefusesKeyOverPlainHTTP: Run refuses to send a key in the clear
// to another machine.
func TestRunRefusesKeyOverPlainHTTP(t *testing.T) {
	err := Run(t.Context(), strings.NewReader(""), io.Discard, io.Discard, Options{ServerURL: "http://memory.example.com:8420", APIKey: "k"})
	if err == nil || !strings.Contains(err.Error(), "plain http") {
		t.Fatalf("err = %v", err)
	}
}

// TestServeStopsOnCancel: a cancelled context ends Serve although stdin
// stays open.
func TestServeStopsOnCancel(t *testing.T) {
	p := New(newEngine(t), Options{})
	r, w := io.Pipe()
	t.Cleanup(func() { _ = w.Close() })
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	var out bytes.Buffer
	go func() { done <- p.Serve(ctx, r, &out) }()
	if _, err := io.WriteString(w, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := testkit.Receive(t, done, 10*time.Second, "Serve to return after cancel"); err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// TestServeStdoutFails: a client that stopped reading ends the session
// with an error.
func TestServeStdoutFails(t *testing.T) {
	p := New(newEngine(t), Options{})
	err := p.Serve(t.Context(), strings.NewReader(initializeMsg+"\n"), failingWriter{})
	if err == nil || !strings.Contains(err.Error(), "write stdout: broken pipe") {
		t.Fatalf("err = %v", err)
	}
}

// TestLineReaderLimit: an over-long line is skipped and reported; the
// next line is read normally; a line of exactly the limit is not too long
// because of its "\n".
func TestLineReaderLimit(t *testing.T) {
	in := strings.Repeat("x", 100) + "\n" + `{"a":1}` + "\r\n" + strings.Repeat("y", 50) + "\n"
	r := &lineReader{br: bufio.NewReaderSize(strings.NewReader(in), 16), limit: 50}
	tests := []message{
		{tooLong: true},
		{data: []byte(`{"a":1}`)},
		{data: []byte(strings.Repeat("y", 50))},
		{err: io.EOF},
	}
	for i, want := range tests {
		got := r.next()
		if got.tooLong != want.tooLong || string(got.data) != string(want.data) || !errors.Is(got.err, want.err) {
			t.Fatalf("message %d = %+v, want %+v", i, got, want)
		}
	}
}

// TestServeTooLong: the answer to an over-long message is an
// invalid-request error, and the session goes on.
func TestServeTooLong(t *testing.T) {
	p := New(newEngine(t), Options{})
	p.maxMessage = 100
	var out bytes.Buffer
	in := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 200) + `"}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n"
	if err := p.Serve(t.Context(), strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	got := parseStdout(t, out.String())
	if e := got["null"].Error; e == nil || e.Code != -32600 || got["2"].Error != nil {
		t.Fatalf("answers: %s", out.String())
	}
}
