package mcpproxy

import (
	"net/http/httptest"
	"strings"
	"testing"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/access"
	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/httpapi"
)

// TestToolsActInTheNamespace: with Options.Namespace, the tools act in
// that namespace on the server (the client carries it in the header);
// without it, in the default one.
func TestToolsActInTheNamespace(t *testing.T) {
	spy := &testkit.NamespaceSpy{Svc: newEngine(t)}
	srv, err := httpapi.New(spy, httpapi.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)

	p := newProxy(t, ts.URL, client.Options{}, Options{Namespace: "proj-a"})
	for _, call := range []struct {
		tool, method string
		args         map[string]any
	}{
		{"store", "EncodeStore", map[string]any{"content": "the deploy key rotates on Fridays"}},
		{"recall", "RecallQuery", map[string]any{"query": "deploy key"}},
		{"stats", "Stats", map[string]any{}},
	} {
		if text, isErr := callTool(t, p, call.tool, call.args); isErr {
			t.Fatalf("%s: %s", call.tool, text)
		}
		if ns, _ := spy.Seen(call.method); ns != "proj-a" {
			t.Errorf("%s acted in %q, want proj-a", call.tool, ns)
		}
	}
	plain := newProxy(t, ts.URL, client.Options{}, Options{})
	if text, isErr := callTool(t, plain, "stats", map[string]any{}); isErr {
		t.Fatal(text)
	}
	if ns, _ := spy.Seen("Stats"); ns != "default" {
		t.Errorf("without a namespace, stats acted in %q", ns)
	}
}

// TestToolForbidden: a key bound to other namespaces makes every tool
// call a tool error that says what is wrong and what to do, not a
// protocol error.
func TestToolForbidden(t *testing.T) {
	ring, err := access.NewScopedKeyring([]access.Key{{Secret: "key-of-b", Scope: testkit.Scope(t, "proj-b")}})
	if err != nil {
		t.Fatal(err)
	}
	url := newHTTP(t, httpapi.Options{Gate: access.NewGate(access.Policy{Keys: ring}, nil)})
	p := newProxy(t, url, client.Options{APIKey: "key-of-b"}, Options{Namespace: "proj-a"})
	text, isErr := callTool(t, p, "stats", map[string]any{})
	if !isErr || !strings.HasPrefix(text, "Forbidden:") || !strings.Contains(text, `"proj-a"`) || !strings.Contains(text, "--namespace") {
		t.Fatalf("stats with a key of another namespace: error %v: %s", isErr, text)
	}
	// The key's own namespace works.
	ok := newProxy(t, url, client.Options{APIKey: "key-of-b"}, Options{Namespace: "proj-b"})
	if text, isErr := callTool(t, ok, "stats", map[string]any{}); isErr {
		t.Fatalf("stats in the key's namespace: %s", text)
	}
}
