package recordercmd

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/spool"
	"memsvc.dev/memsvc/pkg/wire"
)

// nsFake is the fake server, also noting the namespace of every raw batch.
type nsFake struct {
	fake
	mu  sync.Mutex
	nss []string
}

func (f *nsFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == wire.PathEncodeRawBatch {
		f.mu.Lock()
		f.nss = append(f.nss, r.Header.Get(wire.HeaderNamespace))
		f.mu.Unlock()
	}
	f.fake.ServeHTTP(w, r)
}

func (f *nsFake) namespaces() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.nss...)
}

func startNSFake(t *testing.T) (*nsFake, string) {
	f := &nsFake{}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

func pendingIn(t *testing.T, dir string) int {
	t.Helper()
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return 0
	}
	d, err := spool.Open(dir, spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := d.Pending()
	if err != nil {
		t.Fatal(err)
	}
	return len(p)
}

// TestRecorderNamespace: ingest, hook and doctor send the namespace of
// --namespace, else MEMSVC_NAMESPACE; a bad one is a usage error.
func TestRecorderNamespace(t *testing.T) {
	f, url := startNSFake(t)
	spoolDir := filepath.Join(t.TempDir(), "spool")
	for _, tc := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"ingest"}, ""},
		{nil, []string{"ingest", "--namespace", "proj-a"}, "proj-a"},
		{[]string{"MEMSVC_NAMESPACE=proj-b"}, []string{"ingest"}, "proj-b"},
		{[]string{"MEMSVC_NAMESPACE=proj-b"}, []string{"ingest", "--namespace", "proj-c"}, "proj-c"},
	} {
		before := len(f.namespaces())
		r := exec(t, event, tc.env, append(tc.args, "--server-url", url, "--spool-dir", spoolDir)...)
		got := f.namespaces()
		if r.code != 0 || len(got) != before+1 || got[len(got)-1] != tc.want {
			t.Errorf("%v %v: exit %d, namespaces %q, want %q last\n%s", tc.env, tc.args, r.code, got, tc.want, r.stderr)
		}
	}
	payload := `{"session_id":"cc","hook_event_name":"UserPromptSubmit","prompt":"hi"}`
	r := exec(t, payload, []string{"MEMSVC_NAMESPACE=from-hook-env"}, "hook", "claude", "--server-url", url, "--spool-dir", spoolDir)
	if got := f.namespaces(); r.code != 0 || got[len(got)-1] != "from-hook-env" {
		t.Errorf("hook: exit %d, namespaces %q\n%s", r.code, got, r.stderr)
	}
	r = exec(t, "", []string{"HOME=" + t.TempDir()}, "doctor", "--server-url", url, "--namespace", "proj-d", "--spool-dir", spoolDir)
	if got := f.namespaces(); r.code != 0 || got[len(got)-1] != "proj-d" {
		t.Errorf("doctor: exit %d, namespaces %q\n%s%s", r.code, got, r.stdout, r.stderr)
	}

	for _, tc := range []struct {
		env  []string
		args []string
		msg  string
	}{
		{nil, []string{"ingest", "--namespace", "Proj"}, `--namespace: "Proj"`},
		{[]string{"MEMSVC_NAMESPACE=a b"}, []string{"ingest"}, "MEMSVC_NAMESPACE: "},
		{nil, []string{"doctor", "--namespace", "-x"}, "--namespace"},
		{nil, []string{"install-hook", "claude", "--namespace", "A"}, "--namespace"},
	} {
		r := exec(t, event, tc.env, append(tc.args, "--server-url", url, "--spool-dir", spoolDir)...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("%v %v: exit %d, want 2 with %q\n%s", tc.env, tc.args, r.code, tc.msg, r.stderr)
		}
	}
}

// TestSpoolPerNamespace: what is spooled for a namespace waits in its own
// directory and is replayed only by a run of that namespace, into it.
func TestSpoolPerNamespace(t *testing.T) {
	spoolDir := filepath.Join(t.TempDir(), "spool")
	dead := deadURL(t)
	if r := exec(t, event, nil, "ingest", "--server-url", dead, "--spool-dir", spoolDir, "--namespace", "proj-a"); r.code != 0 || !strings.Contains(r.stderr, "spooled=1") {
		t.Fatalf("server down: exit %d\n%s", r.code, r.stderr)
	}
	if n := pendingIn(t, filepath.Join(spoolDir, "namespaces", "proj-a")); n != 1 {
		t.Fatalf("%d batches pending for proj-a", n)
	}
	if n := pendingIn(t, spoolDir); n != 0 {
		t.Fatalf("%d batches pending in the default spool", n)
	}

	f, url := startNSFake(t)
	for _, ns := range []string{"", "default", "proj-b"} {
		args := []string{"ingest", "--server-url", url, "--spool-dir", spoolDir}
		if ns != "" {
			args = append(args, "--namespace", ns)
		}
		if r := exec(t, "", nil, args...); r.code != 0 || !strings.Contains(r.stderr, "replayed=0") {
			t.Fatalf("a run of namespace %q: exit %d\n%s", ns, r.code, r.stderr)
		}
	}
	if got := f.namespaces(); len(got) != 0 {
		t.Fatalf("another namespace's run sent %q", got)
	}
	r := exec(t, "", []string{"MEMSVC_NAMESPACE=proj-a"}, "ingest", "--server-url", url, "--spool-dir", spoolDir)
	if got := f.namespaces(); r.code != 0 || !strings.Contains(r.stderr, "replayed=1") || len(got) != 1 || got[0] != "proj-a" || f.texts()[0] != "hello" {
		t.Fatalf("the namespace's own run: exit %d, namespaces %q\n%s", r.code, got, r.stderr)
	}
}

// TestQueueAndFlushPerNamespace: hook --queue-only queues into the
// namespace's own spool, and flush sends that queue only when run for the
// namespace (flag or MEMSVC_NAMESPACE, as the hook helper sets it), into
// it, oldest first.
func TestQueueAndFlushPerNamespace(t *testing.T) {
	f, url := startNSFake(t)
	spoolDir := filepath.Join(t.TempDir(), "spool")
	for _, prompt := range []string{"one", "two"} {
		payload := `{"session_id":"q","hook_event_name":"UserPromptSubmit","prompt":"` + prompt + `"}`
		r := exec(t, payload, []string{"MEMSVC_NAMESPACE=proj-a"}, "hook", "claude", "--queue-only", "--server-url", url, "--spool-dir", spoolDir)
		if r.code != 0 || !strings.Contains(r.stderr, "spooled=1") {
			t.Fatalf("queue %s: exit %d\n%s", prompt, r.code, r.stderr)
		}
	}
	if n := pendingIn(t, filepath.Join(spoolDir, "namespaces", "proj-a")); n != 2 {
		t.Fatalf("%d batches queued for proj-a, want 2", n)
	}
	if n := pendingIn(t, spoolDir); n != 0 {
		t.Fatalf("%d batches queued in the default spool", n)
	}
	for _, args := range [][]string{{}, {"--namespace", "proj-b"}, {"--namespace", "default"}} {
		r := exec(t, "", nil, append([]string{"flush", "--server-url", url, "--spool-dir", spoolDir}, args...)...)
		if r.code != 0 || !strings.Contains(r.stderr, "replayed=0") {
			t.Fatalf("flush %v: exit %d\n%s", args, r.code, r.stderr)
		}
	}
	if got := f.namespaces(); len(got) != 0 {
		t.Fatalf("a flush of another namespace sent %q", got)
	}
	r := exec(t, "", []string{"MEMSVC_NAMESPACE=proj-a"}, "flush", "--server-url", url, "--spool-dir", spoolDir)
	if r.code != 0 || !strings.Contains(r.stderr, "replayed=2") {
		t.Fatalf("flush of proj-a: exit %d\n%s", r.code, r.stderr)
	}
	if got := f.namespaces(); strings.Join(got, ",") != "proj-a,proj-a" || strings.Join(f.texts(), ",") != "one,two" {
		t.Fatalf("server got %q in namespaces %q", f.texts(), got)
	}
	if r := exec(t, "", nil, "flush", "--namespace", "Bad Name", "--server-url", url, "--spool-dir", spoolDir); r.code != 2 || !strings.Contains(r.stderr, "--namespace") {
		t.Fatalf("flush with a bad namespace: exit %d\n%s", r.code, r.stderr)
	}
}

// TestWatchNamespace: watch records into the namespace of --namespace,
// keeps its offsets in that namespace's spool, and the systemd unit it
// prints carries the namespace.
func TestWatchNamespace(t *testing.T) {
	f, url := startNSFake(t)
	hm := t.TempDir()
	projects := filepath.Join(hm, ".claude", "projects")
	if err := os.MkdirAll(projects, 0o700); err != nil {
		t.Fatal(err)
	}
	spoolDir := filepath.Join(t.TempDir(), "spool")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"watch", "--agent", "claude", "--server-url", url, "--spool-dir", spoolDir, "--namespace", "proj-w"},
			strings.NewReader(""), &out, &errOut, []string{"HOME=" + hm})
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(errOut.String(), "following transcripts") {
		if time.Now().After(deadline) {
			t.Fatalf("watch did not start:\n%s", errOut.String())
		}
		time.Sleep(10 * time.Millisecond) // polling with a deadline
	}
	line := `{"type":"assistant","uuid":"u1","sessionId":"w1","timestamp":"2026-11-03T09:00:00Z","message":{"role":"assistant","content":[{"type":"text","text":"hello from the transcript"}]}}` + "\n"
	if err := os.MkdirAll(filepath.Join(projects, "p"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(projects, "p", "w1.jsonl"), []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	for len(f.namespaces()) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("nothing recorded:\n%s", errOut.String())
		}
		time.Sleep(10 * time.Millisecond) // polling with a deadline
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut.String())
	}
	if got := f.namespaces(); len(got) != 1 || got[0] != "proj-w" || f.texts()[0] != "hello from the transcript" {
		t.Fatalf("stored %q in namespaces %q", f.texts(), got)
	}
	if _, err := os.Stat(filepath.Join(spoolDir, "namespaces", "proj-w", "transcript-offsets")); err != nil {
		t.Fatalf("offsets not kept in the namespace's spool: %v", err)
	}
	if _, err := os.Stat(filepath.Join(spoolDir, "transcript-offsets")); err == nil {
		t.Fatal("offsets kept in the default spool")
	}

	r := exec(t, "", []string{"HOME=/home/dev", "MEMSVC_NAMESPACE=proj-u"}, "watch", "--agent", "claude", "--server-url", "https://memsvc.example.com", "--print-systemd-unit")
	if r.code != 0 || !strings.Contains(r.stdout, " --namespace proj-u ") {
		t.Fatalf("unit: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestInstallHookNamespace: the script records into the project
// directory's name made a namespace, or into --namespace; a directory
// name that yields none asks for --namespace.
func TestInstallHookNamespace(t *testing.T) {
	project := filepath.Join(t.TempDir(), "My Project")
	if err := os.Mkdir(project, 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(project, ".claude", "hooks", "memsvc-recorder-claude-hook.sh")
	r := exec(t, "", nil, "install-hook", "claude", "--target-dir", project)
	body, _ := os.ReadFile(script)
	if r.code != 0 || !strings.Contains(r.stdout, "namespace: my-project\n") || !strings.Contains(string(body), "MEMSVC_NAMESPACE='my-project'\n") {
		t.Fatalf("derived: exit %d\n%s%s\n%s", r.code, r.stdout, r.stderr, body)
	}
	r = exec(t, "", []string{"MEMSVC_NAMESPACE=not-this"}, "install-hook", "claude", "--target-dir", project, "--force", "--namespace", "team.x")
	body, _ = os.ReadFile(script)
	if r.code != 0 || !strings.Contains(r.stdout, "namespace: team.x\n") || !strings.Contains(string(body), "MEMSVC_NAMESPACE='team.x'\n") {
		t.Fatalf("--namespace: exit %d\n%s%s\n%s", r.code, r.stdout, r.stderr, body)
	}
	odd := filepath.Join(t.TempDir(), "日本語")
	if err := os.Mkdir(odd, 0o755); err != nil {
		t.Fatal(err)
	}
	r = exec(t, "", nil, "install-hook", "claude", "--target-dir", odd)
	if r.code != 1 || !strings.Contains(r.stderr, "pass --namespace") {
		t.Fatalf("a name without a namespace in it: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(odd, ".claude")); err == nil {
		t.Error("a refused install wrote files")
	}
}
