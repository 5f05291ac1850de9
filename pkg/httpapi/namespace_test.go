package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/access"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

// walkRequest is a request of route rt that a service accepting anything
// answers with success.
func walkRequest(rt wire.Route) request {
	rq := request{method: rt.Method, path: rt.Path}
	switch rt.Path {
	case wire.PathNamespace:
		rq.path = wire.NamespacePath("walk")
	case wire.PathEncodeUpdate, wire.PathRecallAssociate, wire.PathRecord:
		rq.path = strings.Replace(rt.Path, "{"+wire.ParamRecordID+"}", unknownID, 1)
	}
	if !rt.Body {
		return rq
	}
	rq.body = `{}`
	switch rt.Path {
	case wire.PathForget:
		rq.body = `{"record_ids":[],"confirm":true}`
	case wire.PathMode:
		rq.body = `{"mode":"human"}`
	case wire.PathRecallTimeline:
		rq.body = `{"range":{"start":"2026-11-01T00:00:00Z","end":"2026-11-02T00:00:00Z"}}`
	case wire.PathDecayForecast:
		rq.body = `{"record_ids":[],"forecast_at":"2026-12-01T00:00:00Z"}`
	case wire.PathImport:
		rq.body = `{"archive_id":"a","archive_data":[1]}`
	case wire.PathImportStream:
		rq.body = "archive bytes"
		rq.header = map[string]string{"Content-Type": wire.ContentTypeArchive}
	case wire.PathNamespace:
		rq.body = `{"confirm":true}`
	}
	return rq
}

// withHeader returns rq with the header k: v added.
func withHeader(rq request, k, v string) request {
	h := map[string]string{k: v}
	for hk, hv := range rq.header {
		h[hk] = hv
	}
	rq.header = h
	return rq
}

// TestNamespaceReachesService walks every protected route with a
// namespace in the header: each one that acts in a namespace hands the
// service that namespace (the path's, for the path-scoped route), and
// none acts in another.
func TestNamespaceReachesService(t *testing.T) {
	spy := &testkit.NamespaceSpy{Svc: testkit.AcceptAll{}}
	f := newFixture(t, spy, Options{MetricsEnabled: true})
	for _, rt := range wire.Routes() {
		if !rt.Protected {
			continue
		}
		t.Run(rt.Method+" "+rt.Path, func(t *testing.T) {
			spy.Reset()
			resp, body := f.do(t, withHeader(walkRequest(rt), wire.HeaderNamespace, "from-header"))
			if resp.StatusCode != rt.Status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, rt.Status, body)
			}
			calls := spy.Calls()
			want := "from-header"
			switch rt.Namespace {
			case wire.InPath:
				want = "walk"
			case wire.ServerWide:
				if len(calls) != 0 {
					t.Errorf("a server-wide route called the service: %v", calls)
				}
				return
			}
			if len(calls) == 0 {
				t.Fatal("the service was not called")
			}
			for method, ns := range calls {
				if ns != want && method != "Namespaces" {
					t.Errorf("%s acted in namespace %q, want %q", method, ns, want)
				}
			}
		})
	}
}

// TestNamespaceHeader: the header is checked (a bad one is a 400 naming
// the header, before the service sees anything), and a request without one
// acts in the default namespace.
func TestNamespaceHeader(t *testing.T) {
	spy := &testkit.NamespaceSpy{Svc: testkit.AcceptAll{}}
	f := newFixture(t, spy, Options{})
	stats := request{method: http.MethodGet, path: wire.PathStats}
	for _, tc := range []struct {
		name   string
		header []string
		status int
		ns     string
		msg    string
	}{
		{name: "none", status: 200, ns: memory.DefaultNamespace},
		{name: "named", header: []string{"proj.a-1_x"}, status: 200, ns: "proj.a-1_x"},
		{name: "empty", header: []string{""}, status: 400, msg: "X-Memsvc-Namespace header: must not be empty"},
		{name: "upper case", header: []string{"Proj"}, status: 400, msg: `X-Memsvc-Namespace header: "Proj" must start with a lower-case letter or a digit`},
		{name: "slash", header: []string{"a/b"}, status: 400, msg: "X-Memsvc-Namespace header"},
		{name: "too long", header: []string{strings.Repeat("n", 65)}, status: 400, msg: "at most 64"},
		{name: "twice", header: []string{"a", "b"}, status: 400, msg: "sent 2 times"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spy.Reset()
			req, err := http.NewRequest(stats.method, f.ts.URL+stats.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range tc.header {
				req.Header.Add(wire.HeaderNamespace, v)
			}
			resp, err := f.ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var env wire.Envelope
			_ = json.NewDecoder(resp.Body).Decode(&env)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d (%+v)", resp.StatusCode, tc.status, env)
			}
			ns, called := spy.Seen("Stats")
			if tc.status != 200 {
				if env.Code != memory.CodeValidation || !strings.Contains(env.Message, tc.msg) {
					t.Errorf("envelope %+v, want VALIDATION_ERROR with %q", env, tc.msg)
				}
				if called {
					t.Error("the service was called")
				}
				return
			}
			if ns != tc.ns {
				t.Errorf("acted in %q, want %q", ns, tc.ns)
			}
		})
	}
}

// TestBoundKeys: with authentication on, a key bound to namespaces gets
// 403 FORBIDDEN, with the envelope, on every route that would act in
// another namespace, on the server-wide routes and on stats of all
// namespaces; it lists only its own namespaces. A key of APIKeys may do
// everything.
func TestBoundKeys(t *testing.T) {
	spy := &testkit.NamespaceSpy{Svc: testkit.AcceptAll{Names: []string{"default", "a", "b", "c"}}}
	ring, err := access.NewScopedKeyring([]access.Key{{Secret: "all-key", Scope: access.AllNamespaces()},
		{Secret: "a-key", Scope: testkit.Scope(t, "a")}, {Secret: "ab-key", Scope: testkit.Scope(t, "a", "b")}, {Secret: "star-key", Scope: testkit.Scope(t, "*")}})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, spy, Options{
		Gate:           access.NewGate(access.Policy{Keys: ring}, nil),
		MetricsEnabled: true,
	})
	call := func(t *testing.T, rq request, key, ns string) (*http.Response, []byte) {
		t.Helper()
		rq = withHeader(rq, "Authorization", "Bearer "+key)
		if ns != "" {
			rq = withHeader(rq, wire.HeaderNamespace, ns)
		}
		return f.do(t, rq)
	}
	forbidden := func(t *testing.T, resp *http.Response, body []byte, want string) {
		t.Helper()
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("status %d, want 403: %s", resp.StatusCode, body)
		}
		env := errorEnvelope(t, resp, body, memory.CodeForbidden)
		if msg := jsonString(t, env["message"]); !strings.Contains(msg, want) {
			t.Errorf("message %q does not say %q", msg, want)
		}
	}

	for _, rt := range wire.Routes() {
		if !rt.Protected {
			continue
		}
		t.Run(rt.Method+" "+rt.Path, func(t *testing.T) {
			rq := walkRequest(rt)
			if rt.Namespace == wire.InPath {
				rq.path = wire.NamespacePath("b")
			}
			spy.Reset()
			switch rt.Namespace {
			case wire.InHeader, wire.InPath:
				// Another namespace, named; and for a key bound to several,
				// none (which means default).
				resp, body := call(t, rq, "a-key", "b")
				forbidden(t, resp, body, `namespace "b"`)
				if rt.Namespace == wire.InHeader {
					resp, body = call(t, rq, "ab-key", "")
					forbidden(t, resp, body, "X-Memsvc-Namespace")
					resp, body = call(t, rq, "ab-key", "c")
					forbidden(t, resp, body, `namespace "c"`)
				}
			case wire.ServerWide:
				resp, body := call(t, rq, "ab-key", "a")
				forbidden(t, resp, body, `bound to namespaces ["a", "b"]`)
			case wire.KeyWide:
				// Not refused: it answers for the key's namespaces (below).
				return
			}
			if calls := spy.Calls(); len(calls) != 0 {
				t.Errorf("a refused request reached the service: %v", calls)
			}
			// The same request in a namespace of the key passes, and a key
			// bound to one namespace acts in it without naming it.
			for _, try := range []struct{ key, ns string }{{"a-key", ""}, {"ab-key", "a"}, {"all-key", "b"}, {"star-key", "b"}} {
				if rt.Namespace == wire.ServerWide && (try.key == "a-key" || try.key == "ab-key") {
					continue
				}
				rq := rq
				if rt.Namespace == wire.InPath {
					rq.path = wire.NamespacePath(map[string]string{"": "a", "a": "a", "b": "b"}[try.ns])
				}
				spy.Reset()
				resp, body := call(t, rq, try.key, try.ns)
				if resp.StatusCode != rt.Status {
					t.Fatalf("key %s, namespace %q: status %d, want %d: %s", try.key, try.ns, resp.StatusCode, rt.Status, body)
				}
				want := try.ns
				if want == "" {
					want = "a"
				}
				for method, ns := range spy.Calls() {
					if ns != want {
						t.Errorf("key %s: %s acted in %q, want %q", try.key, method, ns, want)
					}
				}
			}
		})
	}

	t.Run("namespaces listed", func(t *testing.T) {
		for key, want := range map[string]string{
			"a-key":    "a",
			"ab-key":   "a,b",
			"all-key":  "default,a,b,c",
			"star-key": "default,a,b,c",
		} {
			resp, body := call(t, request{method: http.MethodGet, path: wire.PathNamespaces}, key, "")
			var got memory.NamespacesResponse
			if resp.StatusCode != 200 || json.Unmarshal(body, &got) != nil {
				t.Fatalf("%s: %d %s", key, resp.StatusCode, body)
			}
			var names []string
			for _, n := range got.Namespaces {
				names = append(names, n.Name)
			}
			if strings.Join(names, ",") != want {
				t.Errorf("%s sees %v, want %s", key, names, want)
			}
		}
	})

	t.Run("stats of all namespaces", func(t *testing.T) {
		all := request{method: http.MethodGet, path: wire.PathStats + "?" + wire.QueryAllNamespaces + "=true"}
		resp, body := call(t, all, "ab-key", "a")
		forbidden(t, resp, body, "stats of all namespaces")
		resp, body = call(t, all, "a-key", "")
		forbidden(t, resp, body, "stats of all namespaces")
		for _, key := range []string{"all-key", "star-key"} {
			spy.Reset()
			if resp, body := call(t, all, key, ""); resp.StatusCode != 200 {
				t.Errorf("%s: %d %s", key, resp.StatusCode, body)
			}
			if calls := spy.Calls(); len(calls) != 1 || calls["StatsAll"] == "" {
				t.Errorf("%s: stats of all namespaces called %v, want StatsAll", key, calls)
			}
		}
		resp, body = call(t, request{method: http.MethodGet, path: wire.PathStats + "?" + wire.QueryAllNamespaces + "=yes"}, "all-key", "")
		if resp.StatusCode != 400 || !strings.Contains(string(body), `all_namespaces: query value \"yes\"`) {
			t.Errorf("a bad all_namespaces value: %d %s", resp.StatusCode, body)
		}
		// The explicit false is the request's own namespace, for any key.
		if resp, body := call(t, request{method: http.MethodGet, path: wire.PathStats + "?" + wire.QueryAllNamespaces + "=false"}, "a-key", ""); resp.StatusCode != 200 {
			t.Errorf("all_namespaces=false with a bound key: %d %s", resp.StatusCode, body)
		}
	})

	t.Run("export and import across namespaces", func(t *testing.T) {
		for _, tc := range []struct {
			rq     request
			key    string
			status int
			msg    string
		}{
			{request{method: http.MethodPost, path: wire.PathExport, body: `{"namespaces":["a","b"]}`}, "ab-key", 200, ""},
			{request{method: http.MethodPost, path: wire.PathExport, body: `{"namespaces":["b"]}`}, "a-key", 403, `namespace "b"`},
			{request{method: http.MethodPost, path: wire.PathExport, body: `{"namespaces":["*"]}`}, "ab-key", 403, "export of every namespace"},
			{request{method: http.MethodPost, path: wire.PathExport, body: `{"namespaces":["*"]}`}, "all-key", 200, ""},
			{request{method: http.MethodPost, path: wire.PathExport, body: `{"namespaces":["a","No"]}`}, "all-key", 400, "namespaces[1]"},
			{request{method: http.MethodPost, path: wire.PathExportStream, body: `{"namespaces":["c"]}`}, "ab-key", 403, `namespace "c"`},
			{request{method: http.MethodPost, path: wire.PathExportStream, body: `{"namespaces":["*"]}`}, "star-key", 200, ""},
			{request{method: http.MethodPost, path: wire.PathImport, body: `{"archive_id":"x","archive_data":[1],"preserve_namespaces":true}`}, "ab-key", 403, "preserve_namespaces"},
			{request{method: http.MethodPost, path: wire.PathImport, body: `{"archive_id":"x","archive_data":[1],"preserve_namespaces":true}`}, "all-key", 200, ""},
			{request{method: http.MethodPost, path: wire.PathImportStream + "?preserve_namespaces=true", body: "x", header: map[string]string{"Content-Type": wire.ContentTypeArchive}}, "a-key", 403, "preserve_namespaces"},
			{request{method: http.MethodPost, path: wire.PathImportStream + "?preserve_namespaces=true", body: "x", header: map[string]string{"Content-Type": wire.ContentTypeArchive}}, "all-key", 200, ""},
			{request{method: http.MethodPost, path: wire.PathImportStream + "?preserve_namespaces=yes", body: "x", header: map[string]string{"Content-Type": wire.ContentTypeArchive}}, "all-key", 400, `preserve_namespaces: query value "yes"`},
		} {
			spy.Reset()
			resp, body := call(t, tc.rq, tc.key, "a")
			msg := ""
			if env, ok := wire.DecodeEnvelope(body); ok {
				msg = env.Message
			}
			if resp.StatusCode != tc.status || !strings.Contains(msg, tc.msg) {
				t.Errorf("%s %s with %s: %d %s; want %d with %q", tc.rq.method, tc.rq.path, tc.key, resp.StatusCode, body, tc.status, tc.msg)
			}
			if calls := spy.Calls(); (len(calls) != 0) != (tc.status == 200) {
				t.Errorf("%s %s with %s: service calls %v", tc.rq.method, tc.rq.path, tc.key, calls)
			}
		}
	})

	t.Run("drop", func(t *testing.T) {
		spy.Reset()
		resp, body := call(t, request{method: http.MethodDelete, path: wire.NamespacePath("a"), body: `{"name":"b","confirm":true}`}, "ab-key", "b")
		var got memory.DropNamespaceResponse
		if resp.StatusCode != 200 || json.Unmarshal(body, &got) != nil || got.Name != "a" {
			t.Fatalf("drop a with a body naming b: %d %s; the path names the namespace", resp.StatusCode, body)
		}
		if ns, _ := spy.Seen("DropNamespace"); ns != "a" {
			t.Errorf("the drop acted in %q", ns)
		}
		resp, body = call(t, request{method: http.MethodDelete, path: "/v1/namespaces/Not-Valid", body: `{"confirm":true}`}, "all-key", "")
		if resp.StatusCode != 400 || !strings.Contains(string(body), "path segment {namespace}") {
			t.Errorf("drop of a bad name: %d %s", resp.StatusCode, body)
		}
	})
}
