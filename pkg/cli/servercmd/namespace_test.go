package servercmd

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

// fakeServer answers stats, the namespace listing and drops the way a
// server holding namespace "proj-a" would, and records what it got.
type fakeServer struct {
	mu   sync.Mutex
	got  []*http.Request
	body []string
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.got = append(f.got, r.Clone(context.Background()))
	f.body = append(f.body, string(b))
	f.mu.Unlock()
	w.Header().Set("Content-Type", wire.ContentTypeJSON)
	switch {
	case r.URL.Path == wire.PathStats:
		_, _ = io.WriteString(w, `{"total_records":3,"records_by_store":{},"avg_fidelity_by_store":{}}`)
	case r.URL.Path == wire.PathNamespaces:
		_, _ = io.WriteString(w, `{"namespaces":[{"name":"default","total_records":12,"records_by_store":{"episodic":12},"raw_journal_records":1500},{"name":"proj-a","total_records":3,"records_by_store":{"semantic":3},"raw_journal_records":0}]}`)
	case r.URL.Path == wire.NamespacePath("proj-a") && r.Method == http.MethodDelete:
		_, _ = io.WriteString(w, `{"name":"proj-a","records_deleted":3,"raw_entries_deleted":7}`)
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"code":"RECORD_NOT_FOUND","message":"namespace \"nope\" not found","details":null,"retry_after":null}`)
	}
}

func (f *fakeServer) last(t *testing.T) (*http.Request, string) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.got) == 0 {
		t.Fatal("the server got no request")
	}
	return f.got[len(f.got)-1], f.body[len(f.body)-1]
}

func (f *fakeServer) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.got)
}

// runWith executes memsvc with args and the environment env.
func runWith(env []string, args ...string) (string, string, int) {
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), args, strings.NewReader(""), &stdout, &stderr, env)
	return stdout.String(), stderr.String(), code
}

// TestNamespaceSelection: --namespace, else MEMSVC_NAMESPACE, names the
// namespace every data command sends; a bad one is a usage error (exit 2)
// before anything is sent.
func TestNamespaceSelection(t *testing.T) {
	f := &fakeServer{}
	ts := httptest.NewServer(f)
	t.Cleanup(ts.Close)
	url := "MEMSVC_SERVER_URL=" + ts.URL
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"none", []string{url}, []string{"stats"}, ""},
		{"flag", []string{url}, []string{"--namespace", "proj-a", "stats"}, "proj-a"},
		{"flag after the command", []string{url}, []string{"stats", "--namespace", "proj-b"}, "proj-b"},
		{"env", []string{url, "MEMSVC_NAMESPACE=from-env"}, []string{"stats"}, "from-env"},
		{"flag over env", []string{url, "MEMSVC_NAMESPACE=from-env"}, []string{"--namespace", "from-flag", "stats"}, "from-flag"},
		{"recall", []string{url, "MEMSVC_NAMESPACE=proj-a"}, []string{"recall", "x"}, "proj-a"},
	} {
		_, errOut, _ := runWith(tc.env, tc.args...)
		r, _ := f.last(t)
		if got := r.Header.Get(wire.HeaderNamespace); got != tc.want {
			t.Errorf("%s: sent namespace %q, want %q (%s)", tc.name, got, tc.want, errOut)
		}
	}

	for _, tc := range []struct {
		env  []string
		args []string
		msg  string
	}{
		{[]string{url}, []string{"--namespace", "Proj A", "stats"}, `--namespace: "Proj A" must start with a lower-case letter`},
		{[]string{url, "MEMSVC_NAMESPACE=a/b"}, []string{"stats"}, "MEMSVC_NAMESPACE: "},
		{[]string{url}, []string{"--namespace", strings.Repeat("n", 65), "store", "x"}, "at most 64"},
	} {
		before := f.count()
		_, errOut, code := runWith(tc.env, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.msg) {
			t.Errorf("%v %v: exit %d, %q; want 2 and %q", tc.env, tc.args, code, errOut, tc.msg)
		}
		if f.count() != before {
			t.Errorf("%v: a request was sent", tc.args)
		}
	}

	// Embedded: the same checks, and a good namespace works on a data
	// directory (and MEMSVC_NAMESPACE is not mistaken for a configuration
	// variable).
	dir := t.TempDir()
	if _, errOut, code := runWith([]string{"MEMSVC_NAMESPACE=proj-a"}, "--data-dir", dir, "store", "a note"); code != 0 {
		t.Fatalf("embedded store with MEMSVC_NAMESPACE: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runWith(nil, "--data-dir", dir, "--namespace", "-x", "stats"); code != 2 || !strings.Contains(errOut, "--namespace") {
		t.Errorf("embedded with a bad namespace: exit %d: %s", code, errOut)
	}
}

// TestNamespaceCommands: namespaces lists (text and JSON), namespace drop
// sends the name in the path with confirm, and the exit codes follow the
// CLI's contract.
func TestNamespaceCommands(t *testing.T) {
	f := &fakeServer{}
	ts := httptest.NewServer(f)
	t.Cleanup(ts.Close)
	env := []string{"MEMSVC_SERVER_URL=" + ts.URL}

	out, errOut, code := runWith(env, "namespaces")
	want := "NAMESPACE   RECORDS RAW ENTRIES\n" +
		"default          12       1,500\n" +
		"proj-a            3           0\n"
	if code != 0 || out != want {
		t.Fatalf("namespaces: exit %d\n%s\nwant\n%s%s", code, out, want, errOut)
	}
	out, _, code = runWith(env, "namespaces", "--json")
	var list memory.NamespacesResponse
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list.Namespaces) != 2 || list.Namespaces[1].RecordsByStore["semantic"] != 3 {
		t.Fatalf("namespaces --json: exit %d %s", code, out)
	}

	out, errOut, code = runWith(env, "namespace", "drop", "proj-a", "--confirm")
	if code != 0 || out != "Dropped namespace proj-a: 3 record(s), 7 raw entries deleted\n" {
		t.Fatalf("drop: exit %d %q %s", code, out, errOut)
	}
	r, body := f.last(t)
	if r.Method != http.MethodDelete || r.URL.Path != "/v1/namespaces/proj-a" || !strings.Contains(body, `"confirm":true`) {
		t.Errorf("drop sent %s %s %s", r.Method, r.URL.Path, body)
	}
	out, _, code = runWith(env, "--namespace", "other", "namespace", "drop", "proj-a", "--confirm", "--json")
	var dropped memory.DropNamespaceResponse
	if code != 0 || json.Unmarshal([]byte(out), &dropped) != nil || dropped.RawEntriesDeleted != 7 {
		t.Errorf("drop --json: exit %d %s", code, out)
	}

	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"namespace", "drop", "Bad_Name", "--confirm"}, 2, `NAME: "Bad_Name"`},
		{[]string{"namespace", "drop", "--confirm"}, 2, "missing NAME"},
		{[]string{"namespace", "drop", "a", "b", "--confirm"}, 2, "expected one NAME"},
		{[]string{"namespace", "drop", "proj-a"}, 2, "refusing to delete without --confirm"},
		{[]string{"namespace", "drop", "nope", "--confirm"}, 1, `namespace "nope" not found`},
		{[]string{"namespace", "frobnicate"}, 2, "unknown namespace command"},
		{[]string{"namespaces", "x"}, 2, "no arguments"},
	} {
		before := f.count()
		out, errOut, code := runWith(env, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.msg) {
			t.Errorf("%v: exit %d, %q, stdout %q; want %d and %q", tc.args, code, errOut, out, tc.code, tc.msg)
		}
		if tc.code == 2 && f.count() != before {
			t.Errorf("%v: a request was sent", tc.args)
		}
	}
}

// TestNamespaceFlags: stats --all-namespaces, export --namespaces and
// import --preserve-namespaces reach the request; bad lists are usage
// errors.
func TestNamespaceFlags(t *testing.T) {
	f := &fakeServer{}
	ts := httptest.NewServer(f)
	t.Cleanup(ts.Close)
	env := []string{"MEMSVC_SERVER_URL=" + ts.URL}

	if _, errOut, code := runWith(env, "stats", "--all-namespaces"); code != 0 {
		t.Fatalf("stats --all-namespaces: exit %d %s", code, errOut)
	}
	if r, _ := f.last(t); r.URL.Path != wire.PathStats || r.URL.Query().Get(wire.QueryAllNamespaces) != "true" {
		t.Errorf("stats --all-namespaces sent %s?%s", r.URL.Path, r.URL.RawQuery)
	}

	dir := t.TempDir()
	runWith(env, "export", "--output", dir+"/a.cma", "--namespaces", "proj-a, proj-b")
	if r, body := f.last(t); r.URL.Path != wire.PathExportStream || !strings.Contains(body, `"namespaces":["proj-a","proj-b"]`) {
		t.Errorf("export --namespaces sent %s %s", r.URL.Path, body)
	}
	runWith(env, "export", "--output", dir+"/b.cma", "--namespaces", "*")
	if _, body := f.last(t); !strings.Contains(body, `"namespaces":["*"]`) {
		t.Errorf("export --namespaces '*' sent %s", body)
	}
	for _, bad := range []string{"proj-a,*", "Proj", "a,,b"} {
		before := f.count()
		if _, errOut, code := runWith(env, "export", "--output", dir+"/c.cma", "--namespaces", bad); code != 2 || !strings.Contains(errOut, "--namespaces") {
			t.Errorf("export --namespaces %q: exit %d %s", bad, code, errOut)
		}
		if f.count() != before {
			t.Errorf("export --namespaces %q sent a request", bad)
		}
	}

	archive := dir + "/in.cma"
	if err := os.WriteFile(archive, []byte("not checked here\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	runWith(env, "import", archive, "--preserve-namespaces")
	if r, _ := f.last(t); r.URL.Path != wire.PathImportStream || r.URL.Query().Get(wire.QueryPreserveNamespaces) != "true" {
		t.Errorf("import --preserve-namespaces sent %s?%s", r.URL.Path, r.URL.RawQuery)
	}
}
