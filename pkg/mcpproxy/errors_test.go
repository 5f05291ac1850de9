package mcpproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/httpapi"
	"memsvc.dev/memsvc/pkg/memory"
)

// closedURL returns the URL of a loopback port nobody listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return url
}

// TestErrorMapping: every class of failure is an isError result whose
// text says what went wrong and what to do.
func TestErrorMapping(t *testing.T) {
	authed := newHTTP(t, httpapi.Options{AuthEnabled: true, APIKeys: []string{"right-key"}})
	down := closedURL(t)
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(release) }) // runs first

	tests := []struct {
		name  string
		url   string
		copts client.Options
		tool  string
		args  map[string]any
		want  []string
	}{
		{"unreachable", down, client.Options{}, "stats", nil,
			[]string{"The memsvc server is unreachable at " + down, "connection refused", "memsvc serve", "--server-url"}},
		{"timeout", slow.URL, client.Options{Timeout: 50 * time.Millisecond}, "recall", map[string]any{"query": "x"},
			[]string{"did not answer within the time limit", "--server-timeout-secs", "may or may not have taken effect"}},
		{"unauthorized without key", authed, client.Options{}, "stats", nil,
			[]string{"Unauthorized", "No API key is configured", "MEMSVC_SERVER_API_KEY", "restart the MCP server"}},
		{"unauthorized with wrong key", authed, client.Options{APIKey: "wrong-key"}, "stats", nil,
			[]string{"Unauthorized", "The API key configured for this MCP server was refused", "MEMSVC_SERVER_API_KEY"}},
		{"rate limited after the retries", fakeHTTP(t, 429, `{"code":"RATE_LIMITED","message":"too many requests","details":null,"retry_after":7}`), client.Options{Sleep: noSleep}, "stats", nil,
			[]string{"Rate limited by the memsvc server (too many requests). Retry after 7 s.", "The MCP proxy already retried 3 times"}},
		{"rate limited by a proxy, after the retries", fakeHTTP(t, 429, `slow down`), client.Options{Sleep: noSleep}, "stats", nil,
			[]string{"Rate limited", "Retry after 1 s.", "already retried 3 times"}},
		{"rate limited store, not repeatable", fakeHTTP(t, 429, `{"code":"RATE_LIMITED","message":"too many requests","details":null,"retry_after":2}`), client.Options{Sleep: noSleep}, "store", map[string]any{"content": "x"},
			[]string{"Rate limited by the memsvc server (too many requests). Retry after 2 s."}},
		{"busy", fakeHTTP(t, 503, `{"code":"DECAY_ENGINE_BUSY","message":"decay tick running","details":null,"retry_after":3}`), client.Options{}, "consolidate", nil,
			[]string{"The memsvc server is busy (DECAY_ENGINE_BUSY: decay tick running). Retry after 3 s."}},
		{"internal", fakeHTTP(t, 500, `{"code":"INTERNAL_ERROR","message":"storage failure","details":null,"retry_after":null}`), client.Options{}, "stats", nil,
			[]string{"failed: storage failure", "server's log"}},
		{"not a memsvc server", fakeHTTP(t, 404, `<html>nope</html>`), client.Options{}, "stats", nil,
			[]string{"404 Not Found", "is this a memsvc server"}},
		{"validation from the server", fakeHTTP(t, 400, `{"code":"VALIDATION_ERROR","message":"limit: too large","details":null,"retry_after":null}`), client.Options{}, "stats", nil,
			[]string{"rejected the request as invalid: limit: too large"}},
		{"answer too large", fakeHTTP(t, 413, `{"code":"CONTENT_TOO_LARGE","message":"answer too large: only 3 records fit within the server's limit of 1048576 bytes for one answer; ask for fewer records","details":null,"retry_after":null}`), client.Options{}, "recall", map[string]any{"query": "x"},
			[]string{"The memsvc server refused to answer: answer too large", "ask for fewer records"}},
		{"export failed", fakeHTTP(t, 500, `{"code":"EXPORT_FAILED","message":"archive write failed","details":null,"retry_after":null}`), client.Options{}, "stats", nil,
			[]string{"could not build the archive: archive write failed"}},
		{"forget unconfirmed from the server", fakeHTTP(t, 400, `{"code":"FORGET_UNCONFIRMED","message":"confirm","details":null,"retry_after":null}`), client.Options{}, "stats", nil,
			[]string{"Nothing was deleted", "confirm=true"}},
		{"undecodable answer", fakeHTTP(t, 200, `{"total_records":"many"}`), client.Options{}, "stats", nil,
			[]string{"failed: decode answer"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newProxy(t, tc.url, tc.copts, Options{})
			text, isErr := callTool(t, p, tc.tool, tc.args)
			if !isErr {
				t.Fatalf("not an error result: %s", text)
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("error text lacks %q:\n%s", w, text)
				}
			}
		})
	}
}

// noSleep lets a client retry without waiting.
func noSleep(context.Context, time.Duration) error { return nil }

// TestRetriedUntilServed: a read refused by the server's rate limit is
// retried by the client and the tool call succeeds without an error
// reaching the model; a raw store carries a client-made id, so it is
// retried too.
func TestRetriedUntilServed(t *testing.T) {
	eng := newEngine(t)
	srv, err := httpapi.New(eng, httpapi.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var refusals atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refusals.Add(1)%2 == 1 {
			w.Header().Set("Retry-After", "1")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, `{"code":"RATE_LIMITED","message":"rate limit exceeded","details":null,"retry_after":1}`)
			return
		}
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	p := newProxy(t, ts.URL, client.Options{Sleep: noSleep}, Options{})
	for _, call := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"store_raw", map[string]any{"content": "kept despite a refusal", "session_id": "s1"}, `"duplicate":false`},
		{"batch_store_raw", map[string]any{"records_json": `[{"content":"one","session_id":"s1"},{"content":"two","session_id":"s1"}]`}, `"results"`},
		{"stats", nil, `"raw_journal_records":3`},
		{"recall_raw", map[string]any{"session_id": "s1"}, `"total_candidates":3`},
	} {
		text, isErr := callTool(t, p, call.tool, call.args)
		if isErr || !strings.Contains(text, call.want) {
			t.Fatalf("%s: error=%v %s", call.tool, isErr, text)
		}
	}
	if n := refusals.Load(); n != 8 {
		t.Errorf("%d requests, want 8 (each call refused once)", n)
	}
}

// TestDescribe covers the classes a server cannot be made to produce
// on demand, straight through the table.
func TestDescribe(t *testing.T) {
	p := New(nil, Options{ServerURL: "http://127.0.0.1:8420"})
	tests := []struct {
		err      error
		kind     string
		contains string
	}{
		{badArg("store", "bad"), "invalid_argument", `Invalid argument "store": bad.`},
		{fmt.Errorf("memsvc request: %w", context.Canceled), "cancelled", "cancelled"},
		{&client.UnavailableError{URL: "http://h:1", Err: errors.New("boom")}, "unreachable", "unreachable at http://h:1 (boom)"},
		{&client.UnavailableError{URL: "http://h:1", Err: context.DeadlineExceeded}, "timeout", "did not answer"},
		{memory.NotFound(memory.MustParseID("0190b6a4-7c1e-7a55-9f1a-5f2b3c4d5e6f")), "not_found", "Not found: record not found: 0190b6a4"},
		{&memory.Error{Code: memory.CodeContentTooLarge, Message: "content.blocks[0].data: too big"}, "invalid_argument", "Too large"},
		{&memory.Error{Code: memory.CodeModalityUnsupported, Message: "no images"}, "invalid_argument", "Not supported"},
		{&memory.Error{Code: memory.CodeWorkingMemoryFull, Message: "full"}, "busy", "Retry after 1 s"},
		{&memory.Error{Code: memory.CodeImportConflict, Message: "bad archive"}, "conflict", "Conflict: bad archive"},
		{&memory.Error{Code: memory.CodeInsufficientStorage, Message: "only 10 MiB free"}, "insufficient_storage", "low on disk space and refused to write: only 10 MiB free. Nothing was changed."},
		{&memory.Error{Code: memory.CodeForbidden, Message: "this API key may not use namespace \"b\""}, "forbidden", "Forbidden: this API key may not use namespace \"b\". The API key"},
		{&localError{"Disk full."}, "local", "Disk full."},
		{errors.New("nil map"), "internal", "bug in the proxy"},
	}
	for _, tc := range tests {
		f := p.describe(tc.err)
		if f.kind != tc.kind || !strings.Contains(f.text, tc.contains) {
			t.Errorf("describe(%v) = %s %q, want %s containing %q", tc.err, f.kind, f.text, tc.kind, tc.contains)
		}
	}
}

// TestServerRestart: the proxy keeps no connection state, so a server
// that goes away and comes back on the same address is used again.
func TestServerRestart(t *testing.T) {
	srv, err := httpapi.New(newEngine(t), httpapi.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	serve := func(l net.Listener) *http.Server {
		hs := &http.Server{Handler: srv}
		go func() { _ = hs.Serve(l) }()
		return hs
	}
	hs := serve(l)
	p := newProxy(t, "http://"+addr, client.Options{}, Options{})
	if text, isErr := callTool(t, p, "stats", nil); isErr {
		t.Fatal(text)
	}
	if err := hs.Close(); err != nil {
		t.Fatal(err)
	}
	if text, isErr := callTool(t, p, "stats", nil); !isErr || !strings.Contains(text, "unreachable") {
		t.Fatalf("server down: %v %s", isErr, text)
	}
	l, err = net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	hs = serve(l)
	t.Cleanup(func() { _ = hs.Close() })
	if text, isErr := callTool(t, p, "stats", nil); isErr {
		t.Fatalf("after restart: %s", text)
	}
}
