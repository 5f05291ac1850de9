package mcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/engine"
	"memsvc.dev/memsvc/pkg/httpapi"
)

// t0 is the engine's clock in the tests.
var t0 = time.Date(2026, 5, 1, 9, 30, 0, 0, time.UTC)

func newEngine(t testing.TB) *engine.Engine {
	return testkit.Engine(t, engine.Options{Now: func() time.Time { return t0 }})
}

// newHTTP serves an in-memory engine over pkg/httpapi and returns its URL.
func newHTTP(t testing.TB, opts httpapi.Options) string {
	t.Helper()
	srv, err := httpapi.New(newEngine(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts.URL
}

// newProxy returns a proxy that reaches url through pkg/client, as Run
// wires it.
func newProxy(t testing.TB, url string, copts client.Options, opts Options) *Proxy {
	t.Helper()
	if copts.HTTPClient == nil {
		// The transport Run gives the client.
		copts.HTTPClient = &http.Client{Transport: serverTransport(http.ProxyFromEnvironment)}
	}
	c, err := client.New(url, copts)
	if err != nil {
		t.Fatal(err)
	}
	opts.ServerURL = c.URL()
	opts.APIKey = copts.APIKey
	if opts.Now == nil {
		opts.Now = func() time.Time { return t0.Add(time.Hour) }
	}
	return New(c, opts)
}

// fakeHTTP answers every request with status and body.
func fakeHTTP(t testing.TB, status int, body string) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// rpcAnswer is a JSON-RPC answer to tools/call.
type rpcAnswer struct {
	Result *struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// callTool answers tools/call as Serve does and returns the text of
// the result and whether it is an error result. A JSON-RPC error fails the
// test: tool failures must be results. A successful result must carry
// structuredContent that validates against the tool's outputSchema, and
// its text must be the same JSON, compact. The answer must be written on
// stdout as json.Marshal writes it.
func callTool(t testing.TB, p *Proxy, name string, arguments any) (string, bool) {
	t.Helper()
	msg, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": 7, "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": arguments},
	})
	if err != nil {
		t.Fatal(err)
	}
	tc, ok := p.readToolCall(msg)
	if !ok || tc.run == nil {
		t.Fatalf("%s: not read as a plain tool call: %s", name, msg)
	}
	resp := p.answer(context.Background(), tc, msg) // as Serve answers it
	b, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	sameEncoding(t, resp) // as Serve writes it
	var ans rpcAnswer
	if err := json.Unmarshal(b, &ans); err != nil {
		t.Fatalf("answer %s: %v", b, err)
	}
	if ans.Error != nil || ans.Result == nil {
		t.Fatalf("%s: JSON-RPC error instead of a tool result: %s", name, b)
	}
	if len(ans.Result.Content) != 1 || ans.Result.Content[0].Type != "text" {
		t.Fatalf("%s: want one text item, got %s", name, b)
	}
	text := ans.Result.Content[0].Text
	if ans.Result.IsError {
		if ans.Result.StructuredContent != nil {
			t.Errorf("%s: error result with structuredContent: %s", name, b)
		}
		return text, true
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, ans.Result.StructuredContent); err != nil || compact.String() != text {
		t.Fatalf("%s: text is not the structuredContent, compact (%v):\ntext:       %s\nstructured: %s", name, err, text, ans.Result.StructuredContent)
	}
	checkAnswer(t, outputSchema(t, p, name), name, ans.Result.StructuredContent)
	return text, false
}

// mustJSON decodes the text of a successful result.
func mustJSON(t testing.TB, text string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(text), v); err != nil {
		t.Fatalf("result is not JSON: %v\n%s", err, text)
	}
}
