package recordercmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/spool"
	"memsvc.dev/memsvc/pkg/wire"
)

// fake is a server that stores raw batches and can demand a key.
type fake struct {
	key string
	mu  sync.Mutex
	got []memory.EncodeStoreRawRequest
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case wire.PathHealth, wire.PathReadiness:
		fmt.Fprint(w, `{"status":"ok"}`)
		return
	}
	if f.key != "" && r.Header.Get("Authorization") != "Bearer "+f.key {
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(wire.NewEnvelope(&memory.Error{Code: memory.CodeUnauthorized, Message: "Invalid API key"}, ""))
		return
	}
	switch r.URL.Path {
	case wire.PathRecallRaw:
		fmt.Fprint(w, `{"records":[],"total_candidates":0}`)
	case wire.PathEncodeRawBatch:
		var req memory.EncodeBatchStoreRawRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		var resp memory.EncodeBatchStoreRawResponse
		f.mu.Lock()
		for _, rec := range req.Records {
			f.got = append(f.got, rec)
			resp.Results = append(resp.Results, memory.EncodeStoreRawResponse{RecordID: *rec.RecordID, SessionID: rec.SessionID, Visibility: rec.Visibility, SecrecyLevel: rec.SecrecyLevel})
		}
		f.mu.Unlock()
		_ = json.NewEncoder(w).Encode(resp)
	default:
		http.NotFound(w, r)
	}
}

// texts returns the text of the stored entries, in order.
func (f *fake) texts() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return testkit.RawTexts(f.got)
}

func startFake(t *testing.T, key string) (*fake, string) {
	f := &fake{key: key}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

// deadURL is a loopback URL nobody listens on.
func deadURL(t *testing.T) string {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	return url
}

type run struct {
	stdout, stderr string
	code           int
}

func exec(t *testing.T, stdin string, env []string, args ...string) run {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(t.Context(), args, strings.NewReader(stdin), &out, &errOut, env)
	return run{out.String(), errOut.String(), code}
}

func home(t *testing.T) []string {
	return []string{"HOME=" + t.TempDir()}
}

const event = `{"session_id":"s","event_type":"user_message","content":"hello"}` + "\n"

func TestExitCodes(t *testing.T) {
	_, url := startFake(t, "")
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no command", nil, 0, "SUBCOMMANDS"},
		{"help", []string{"--help"}, 0, "ingest"},
		{"unknown command", []string{"record"}, 2, `unknown command "record"`},
		{"unknown flag", []string{"ingest", "--bogus"}, 2, "bogus"},
		{"zero batch", []string{"ingest", "--batch-max-records", "0"}, 2, "--batch-max-records: 0 is out of range"},
		{"huge batch", []string{"ingest", "--batch-max-records", "1001"}, 2, "--batch-max-records"},
		{"zero interval", []string{"ingest", "--flush-interval-ms", "0"}, 2, "--flush-interval-ms"},
		{"zero event size", []string{"ingest", "--max-event-bytes", "0"}, 2, "--max-event-bytes"},
		{"ingest argument", []string{"ingest", "file.jsonl"}, 2, "no arguments"},
		{"install-hook without agent", []string{"install-hook"}, 2, "want exactly one agent"},
		{"install-hook unknown agent", []string{"install-hook", "vim"}, 2, `unknown agent "vim"`},
		{"bad URL", []string{"ingest", "--server-url", "ftp://x"}, 1, "want an http:// or https:// URL"},
		{"doctor argument", []string{"doctor", "x", "--server-url", url}, 2, "no arguments"},
		{"hook unknown agent still exits 0", []string{"hook", "vim"}, 0, "exiting 0"},
		{"hook bad flag still exits 0", []string{"hook", "claude", "--bogus"}, 0, "exiting 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := exec(t, "", home(t), tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr+r.stdout, tc.msg) {
				t.Fatalf("exit %d (want %d)\nstdout %s\nstderr %s", r.code, tc.code, r.stdout, r.stderr)
			}
		})
	}
}

func TestHelpHasExamples(t *testing.T) {
	for _, cmd := range []string{"ingest", "doctor", "install-hook", "hook"} {
		r := exec(t, "", nil, cmd, "--help")
		if r.code != 0 || !strings.Contains(r.stderr, "Examples:") || !strings.Contains(r.stderr, "memsvc-recorder "+cmd) {
			t.Errorf("%s --help: exit %d\n%s", cmd, r.code, r.stderr)
		}
	}
}

func TestIngest(t *testing.T) {
	f, url := startFake(t, "")
	spoolDir := filepath.Join(t.TempDir(), "spool")
	r := exec(t, event+`{"session_id":"s","event_type":"command","content":"export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}`+"\n",
		nil, "ingest", "--server-url", url, "--spool-dir", spoolDir)
	if r.code != 0 || !strings.Contains(r.stderr, "memsvc-recorder: accepted=2 duplicate=0 rejected=0 sent=2 spooled=0") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if got := f.texts(); len(got) != 2 || got[0] != "hello" || strings.Contains(got[1], "wJalr") {
		t.Fatalf("stored %q", got)
	}
	if r.stdout != "" {
		t.Fatalf("ingest printed to stdout: %q", r.stdout)
	}
}

func TestIngestServerDownSpoolsThenFlushes(t *testing.T) {
	spoolDir := filepath.Join(t.TempDir(), "spool")
	r := exec(t, event, nil, "ingest", "--server-url", deadURL(t), "--spool-dir", spoolDir)
	if r.code != 0 || !strings.Contains(r.stderr, "spooled=1") {
		t.Fatalf("server down: exit %d\n%s", r.code, r.stderr)
	}
	f, url := startFake(t, "")
	r = exec(t, "", []string{"MEMSVC_RECORDER_SPOOL_DIR=" + spoolDir, "MEMSVC_SERVER_URL=" + url}, "ingest")
	if r.code != 0 || !strings.Contains(r.stderr, "replayed=1") || len(f.texts()) != 1 {
		t.Fatalf("next run: exit %d, stored %q\n%s", r.code, f.texts(), r.stderr)
	}
}

func TestIngestAuth(t *testing.T) {
	f, url := startFake(t, "right")
	spoolDir := filepath.Join(t.TempDir(), "spool")
	r := exec(t, event, []string{"MEMSVC_SERVER_API_KEY=wrong"}, "ingest", "--server-url", url, "--spool-dir", spoolDir)
	if r.code != 1 || !strings.Contains(r.stderr, "server refused the API key (HTTP 401)") || !strings.Contains(r.stderr, "spooled=1") {
		t.Fatalf("wrong key: exit %d\n%s", r.code, r.stderr)
	}
	r = exec(t, "", []string{"MEMSVC_SERVER_API_KEY= right "}, "ingest", "--server-url", url, "--spool-dir", spoolDir)
	if r.code != 0 || len(f.texts()) != 1 {
		t.Fatalf("right key: exit %d, stored %q\n%s", r.code, f.texts(), r.stderr)
	}
}

func TestIngestRefusesKeyOverPlainHTTP(t *testing.T) {
	r := exec(t, event, []string{"MEMSVC_SERVER_API_KEY=k", "HOME=" + t.TempDir()}, "ingest", "--server-url", "http://memsvc.example.com:8420")
	if r.code != 1 || !strings.Contains(r.stderr, "refusing to send MEMSVC_SERVER_API_KEY over plain http to memsvc.example.com:8420") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
}

func TestSpoolDirectoryResolution(t *testing.T) {
	_, url := startFake(t, "")
	// --spool-dir works without HOME (the default is not computed).
	dir := filepath.Join(t.TempDir(), "flag")
	if r := exec(t, event, nil, "ingest", "--server-url", url, "--spool-dir", dir); r.code != 0 {
		t.Fatalf("--spool-dir without HOME: %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
	// HOME default.
	h := t.TempDir()
	if r := exec(t, event, []string{"HOME=" + h}, "ingest", "--server-url", url); r.code != 0 {
		t.Fatalf("HOME default: %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(h, ".memsvc", "recorder", "spool")); err != nil {
		t.Fatal(err)
	}
	// Nothing to go on.
	r := exec(t, event, nil, "ingest", "--server-url", url)
	if r.code != 1 || !strings.Contains(r.stderr, "no spool directory") {
		t.Fatalf("no spool directory: %d %s", r.code, r.stderr)
	}
	// A directory open to group or others is refused, not fixed: the
	// mode is what the user set, and nothing is spooled into it.
	for _, mode := range []os.FileMode{0o755, 0o750, 0o701} {
		pub := filepath.Join(t.TempDir(), "pub")
		if err := os.Mkdir(pub, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(pub, mode); err != nil { // past the umask
			t.Fatal(err)
		}
		r = exec(t, event, nil, "ingest", "--server-url", url, "--spool-dir", pub)
		if r.code != 1 || !strings.Contains(r.stderr, "not private") || !strings.Contains(r.stderr, pub) {
			t.Errorf("spool directory with mode %04o: exit %d, want 1 and a refusal naming %s\n%s", mode, r.code, pub, r.stderr)
		}
		fi, err := os.Stat(pub)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != mode {
			t.Errorf("spool directory mode changed from %04o to %04o", mode, got)
		}
		if entries, err := os.ReadDir(pub); err != nil || len(entries) != 0 {
			t.Errorf("refused spool directory (mode %04o) holds %v, %v", mode, entries, err)
		}
	}
}

func TestDoctor(t *testing.T) {
	_, url := startFake(t, "k")
	spoolDir := filepath.Join(t.TempDir(), "spool")
	r := exec(t, "", []string{"MEMSVC_SERVER_API_KEY=k"}, "doctor", "--server-url", url, "--spool-dir", spoolDir)
	if r.code != 0 || strings.Count(r.stdout, "\nok ")+boolInt(strings.HasPrefix(r.stdout, "ok ")) != 4 {
		t.Fatalf("doctor: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = exec(t, "", []string{"MEMSVC_SERVER_API_KEY=bad"}, "doctor", "--server-url", url, "--spool-dir", spoolDir, "--skip-raw-ingest-probe")
	if r.code != 1 || !strings.Contains(r.stdout, "fail auth - server rejected MEMSVC_SERVER_API_KEY (HTTP 401)") ||
		!strings.Contains(r.stdout, "ok raw_ingest - skipped") || !strings.Contains(r.stderr, "doctor found 1 failing check(s)") {
		t.Fatalf("doctor with a bad key: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = exec(t, "", nil, "doctor", "--server-url", deadURL(t))
	if r.code != 1 || !strings.Contains(r.stdout, "fail health") || !strings.Contains(r.stdout, "fail spool - no spool directory") {
		t.Fatalf("doctor, server down, no HOME: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestInstallHook(t *testing.T) {
	project := t.TempDir()
	r := exec(t, "", nil, "install-hook", "codex", "--target-dir", project, "--server-url", "https://memsvc.example.com")
	script := filepath.Join(project, ".codex", "hooks", "memsvc-recorder-codex-hook.sh")
	if r.code != 0 || !strings.Contains(r.stdout, "script: "+script+"\n") || !strings.Contains(r.stdout, "MEMSVC_SERVER_API_KEY") ||
		!strings.Contains(r.stdout, "registration: "+filepath.Join(project, ".codex", "hooks.json")+" (written)\n") || !strings.Contains(r.stdout, "/hooks in Codex") {
		t.Fatalf("install: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = exec(t, "", nil, "install-hook", "codex", "--target-dir", project)
	if r.code != 1 || !strings.Contains(r.stderr, "already exists; pass --force") {
		t.Fatalf("second install: exit %d\n%s", r.code, r.stderr)
	}
	r = exec(t, "", nil, "install-hook", "--force", "codex", "--target-dir", project)
	if r.code != 0 || !strings.Contains(r.stdout, "hooks.json (exists; left as it was)") || !strings.Contains(r.stdout, "Merge the \"hooks\" object") {
		t.Fatalf("--force: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = exec(t, "", nil, "install-hook", "claude", "--target-dir", project, "--server-url", "http://10.1.2.3:8420")
	if r.code != 0 || !strings.Contains(r.stderr, "warning: http://10.1.2.3:8420 is plain http") {
		t.Fatalf("plain http warning: exit %d\n%s", r.code, r.stderr)
	}
}

func TestHook(t *testing.T) {
	f, url := startFake(t, "")
	spoolDir := filepath.Join(t.TempDir(), "spool")
	payload := `{"session_id":"cc","hook_event_name":"UserPromptSubmit","prompt":"use token=abcdef0123456789"}`
	r := exec(t, payload, nil, "hook", "claude", "--server-url", url, "--spool-dir", spoolDir)
	if r.code != 0 || !strings.Contains(r.stderr, "sent=1") {
		t.Fatalf("hook: exit %d\n%s", r.code, r.stderr)
	}
	if got := f.texts(); len(got) != 1 || got[0] != "use token=[REDACTED]" {
		t.Fatalf("stored %q", got)
	}
	// Codex notify passes the payload as an argument.
	notify := `{"type":"agent-turn-complete","thread-id":"th","turn-id":"1","input-messages":["q"],"last-assistant-message":"a"}`
	r = exec(t, "", nil, "hook", "codex", "--server-url", url, "--spool-dir", spoolDir, notify)
	if r.code != 0 || len(f.texts()) != 3 {
		t.Fatalf("notify: exit %d, stored %q\n%s", r.code, f.texts(), r.stderr)
	}
	// The server is down: spooled, exit 0.
	r = exec(t, payload, nil, "hook", "claude", "--server-url", deadURL(t), "--spool-dir", spoolDir)
	d, err := spool.Open(spoolDir, spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pending, _ := d.Pending()
	if r.code != 0 || len(pending) != 1 {
		t.Fatalf("server down: exit %d, pending %v\n%s", r.code, pending, r.stderr)
	}
	// A key over plain http to another host: refused, but the event is
	// spooled and the agent sees success.
	r = exec(t, payload, []string{"MEMSVC_SERVER_API_KEY=k"}, "hook", "claude", "--server-url", "http://memsvc.example.com", "--spool-dir", spoolDir)
	pending, _ = d.Pending()
	if r.code != 0 || len(pending) != 2 || !strings.Contains(r.stderr, "refusing to send MEMSVC_SERVER_API_KEY") {
		t.Fatalf("plain http with a key: exit %d, pending %v\n%s", r.code, pending, r.stderr)
	}
	// Empty stdin: nothing recorded, exit 0.
	if r := exec(t, "", nil, "hook", "claude", "--server-url", url, "--spool-dir", spoolDir); r.code != 0 || !strings.Contains(r.stderr, "nothing recorded") {
		t.Fatalf("empty payload: exit %d\n%s", r.code, r.stderr)
	}
}

// slowReader never ends.
type slowReader struct{ ch chan struct{} }

func (s slowReader) Read([]byte) (int, error) { <-s.ch; return 0, io.EOF }

func TestReadBounded(t *testing.T) {
	got := readBounded(t.Context(), strings.NewReader(strings.Repeat("x", 100)), 10, 1<<40)
	if string(got) != strings.Repeat("x", 10) {
		t.Fatalf("bounded read %q", got)
	}
	ch := make(chan struct{})
	defer close(ch)
	if got := readBounded(t.Context(), slowReader{ch}, 10, 1); len(got) != 0 {
		t.Fatalf("read from a stuck reader: %q", got)
	}
}

// TestHookQueueOnlyThenFlush: --queue-only never sends; flush sends the
// queue in order, and waits (bounded) for another flusher.
func TestHookQueueOnlyThenFlush(t *testing.T) {
	f, url := startFake(t, "")
	spoolDir := filepath.Join(t.TempDir(), "spool")
	for _, prompt := range []string{"one", "two", "three"} {
		payload := `{"session_id":"q","hook_event_name":"UserPromptSubmit","prompt":"` + prompt + `"}`
		r := exec(t, payload, nil, "hook", "claude", "--queue-only", "--server-url", url, "--spool-dir", spoolDir)
		if r.code != 0 || !strings.Contains(r.stderr, "spooled=1") {
			t.Fatalf("queue %s: exit %d\n%s", prompt, r.code, r.stderr)
		}
	}
	if got := f.texts(); len(got) != 0 {
		t.Fatalf("--queue-only sent %q", got)
	}
	d, err := spool.Open(spoolDir, spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := d.TryLock("flush")
	if err != nil {
		t.Fatal(err)
	}
	r := exec(t, "", nil, "flush", "--server-url", url, "--spool-dir", spoolDir, "--wait", "10ms")
	unlock()
	if r.code != 0 || len(f.texts()) != 0 || !strings.Contains(r.stderr, "another recorder kept flushing") {
		t.Fatalf("flush while locked: exit %d, sent %q\n%s", r.code, f.texts(), r.stderr)
	}
	r = exec(t, "", nil, "flush", "--server-url", url, "--spool-dir", spoolDir)
	if r.code != 0 || !strings.Contains(r.stderr, "memsvc-recorder flush: ") || !strings.Contains(r.stderr, "replayed=3") {
		t.Fatalf("flush: exit %d\n%s", r.code, r.stderr)
	}
	if got := f.texts(); strings.Join(got, ",") != "one,two,three" {
		t.Fatalf("server got %q", got)
	}
	if r := exec(t, "", nil, "flush", "x"); r.code != 2 {
		t.Fatalf("flush with an argument: exit %d", r.code)
	}
	// A refused key is a failure of flush (unlike hook).
	exec(t, `{"session_id":"q","hook_event_name":"Stop"}`, nil, "hook", "claude", "--queue-only", "--spool-dir", spoolDir)
	_, keyed := startFake(t, "right")
	r = exec(t, "", []string{"MEMSVC_SERVER_API_KEY=wrong"}, "flush", "--server-url", keyed, "--spool-dir", spoolDir)
	if r.code != 1 {
		t.Fatalf("flush with a refused key: exit %d\n%s", r.code, r.stderr)
	}
}

func TestWatchUsage(t *testing.T) {
	for _, args := range [][]string{
		{"watch", "extra"},
		{"watch", "--agent", "vim"},
		{"watch", "--rescan-interval", "10ms"},
		{"watch", "--max-line-bytes", "10"},
	} {
		if r := exec(t, "", home(t), args...); r.code != 2 {
			t.Errorf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
	}
}

func TestWatchSystemdUnit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), `my "claude" 100%`)
	r := exec(t, "", []string{"HOME=/home/dev", "MEMSVC_SERVER_API_KEY=top-secret-key"},
		"watch", "--agent", "claude", "--claude-dir", dir, "--server-url", "https://memsvc.example.com", "--print-systemd-unit")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var execStart string
	for _, l := range strings.Split(r.stdout, "\n") {
		if v, ok := strings.CutPrefix(l, "ExecStart="); ok {
			execStart = v
		}
	}
	wantDir := `"` + strings.NewReplacer(`"`, `\"`, "%", "%%").Replace(dir) + `"`
	if !strings.Contains(execStart, " watch --server-url https://memsvc.example.com --agent claude --claude-dir "+wantDir) ||
		!strings.Contains(r.stdout, "[Install]\nWantedBy=default.target") || strings.Contains(r.stdout, "top-secret-key") {
		t.Fatalf("unit:\n%s", r.stdout)
	}
	// Both agents by default, with their default directories.
	r = exec(t, "", []string{"HOME=/home/dev", "CODEX_HOME=/srv/codex"}, "watch", "--print-systemd-unit")
	if r.code != 0 || !strings.Contains(r.stdout, "--claude-dir /home/dev/.claude/projects --codex-dir /srv/codex/sessions") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestWatchCommand runs watch until the assistant's message of a new
// transcript has reached the server, then interrupts it: exit 0.
func TestWatchCommand(t *testing.T) {
	f, url := startFake(t, "")
	code, errOut := watchOneLine(t, func() bool { return len(f.texts()) > 0 }, "--server-url", url)
	if code != 0 || !strings.Contains(errOut, "memsvc-recorder watch: files=1 lines=1 events=1") {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if got := f.texts(); len(got) != 1 || got[0] != "hello from the transcript" {
		t.Fatalf("stored %q", got)
	}
}

// watchOneLine runs `watch --agent claude args...` with a HOME of its
// own; once watch follows the transcripts it writes one assistant line
// ("hello from the transcript") to a new transcript, waits (bounded) until
// recorded says the server has it, then interrupts watch and returns its
// exit code and stderr.
func watchOneLine(t *testing.T, recorded func() bool, args ...string) (int, string) {
	t.Helper()
	hm := t.TempDir()
	projects := filepath.Join(hm, ".claude", "projects")
	if err := os.MkdirAll(projects, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out, errOut testkit.SyncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, append([]string{"watch", "--agent", "claude"}, args...), strings.NewReader(""), &out, &errOut, []string{"HOME=" + hm})
	}()
	testkit.WaitFor(t, 30*time.Second, "watch to start", func() bool {
		return strings.Contains(errOut.String(), "following transcripts")
	}, errOut.String)
	line := `{"type":"assistant","uuid":"u1","sessionId":"w1","timestamp":"2026-11-03T09:00:00Z","message":{"role":"assistant","content":[{"type":"text","text":"hello from the transcript"}]}}` + "\n"
	// Written after the first walk (the log line comes after it), so it
	// is a new file: read whole.
	if err := os.MkdirAll(filepath.Join(projects, "p"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(projects, "p", "w1.jsonl"), []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 30*time.Second, "the transcript recorded", recorded, errOut.String)
	cancel()
	code := <-done
	return code, errOut.String()
}
