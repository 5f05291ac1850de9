package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/memory"
)

// runRecorder runs memsvc-recorder with stdin, a clean environment (HOME,
// PATH and env) and a time limit.
func runRecorder(t *testing.T, stdin string, env []string, args ...string) result {
	t.Helper()
	return runBinInput(t, 60*time.Second, strings.NewReader(stdin), env, "memsvc-recorder", args...)
}

// recEntry is a raw journal entry as the tests look at it.
type recEntry struct {
	memory.RawJournalRecord
	text string
	md   map[string]any
}

// recRecallRaw returns every entry of session (newest first), private and
// sealed ones and every secrecy level included.
func recRecallRaw(t *testing.T, baseURL, key, session string) []recEntry {
	t.Helper()
	return recRecallRawIn(t, baseURL, key, "", session)
}

// recRecallRawIn is recRecallRaw in namespace ns ("" sends no header: the
// default namespace).
func recRecallRawIn(t *testing.T, baseURL, key, ns, session string) []recEntry {
	t.Helper()
	a := testkit.Do(t, testkit.Request{Method: "POST", URL: baseURL + "/v1/recall/raw", Key: key, Namespace: ns, Body: map[string]any{
		"session_id": session, "limit": 1000, "include_private_scratch": true, "include_sealed": true,
		"secrecy_levels": []string{"public", "sensitive", "secret"},
	}})
	if a.Status != 200 {
		t.Fatalf("recall raw: %d %s", a.Status, a.Body)
	}
	var out memory.RecallRawQueryResponse
	if err := json.Unmarshal(a.Body, &out); err != nil {
		t.Fatal(err)
	}
	var entries []recEntry
	for _, r := range out.Records {
		e := recEntry{RawJournalRecord: r}
		e.text, _ = r.Content.Text()
		_ = json.Unmarshal(r.Metadata, &e.md)
		entries = append(entries, e)
	}
	return entries
}

func recTexts(entries []recEntry) map[string]int {
	m := map[string]int{}
	for _, e := range entries {
		m[e.text]++
	}
	return m
}

func recEvent(session, typ, content string, extra ...string) string {
	s := fmt.Sprintf(`{"session_id":%q,"event_type":%q,"content":%q`, session, typ, content)
	for i := 0; i+1 < len(extra); i += 2 {
		s += fmt.Sprintf(",%q:%q", extra[i], extra[i+1])
	}
	return s + "}\n"
}

// recDeadURL is a loopback URL that nothing listens on.
func recDeadURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

func TestRecorderIngest(t *testing.T) {
	srv := startServer(t, t.TempDir())
	spoolDir := filepath.Join(t.TempDir(), "spool")
	in := recEvent("rec-1", "user_message", "please deploy; the key is api_key=zz-abcdefgh12345678", "turn_id", "t1", "source", "cli") +
		`{"session_id":"rec-1","event_type":"tool_call","content":{"cmd":"psql","env":{"PGPASSWORD":"hunter2hunter2"}},"action_id":"call-1","timestamp":"2026-11-01T13:00:00+01:00","metadata":{"client_secret":"s3cr3t-value-123"},"visibility":"private_scratch","secrecy_level":"secret"}` + "\n" +
		recEvent("rec-1", "assistant_message", "done", "speaker", "system") +
		recEvent("rec-1", "user_message", "please deploy; the key is api_key=zz-abcdefgh12345678", "turn_id", "t1", "source", "cli") // duplicate
	r := runRecorder(t, in, []string{"MEMSVC_RECORDER_SPOOL_DIR=" + spoolDir}, "ingest", "--server-url", srv.url(""))
	if r.code != 0 || !strings.Contains(r.stderr, "memsvc-recorder: accepted=3 duplicate=1 rejected=0 sent=3 spooled=0") {
		t.Fatalf("ingest: exit %d\n%s", r.code, r.stderr)
	}
	entries := recRecallRaw(t, srv.url(""), "", "rec-1")
	if len(entries) != 3 {
		t.Fatalf("%d entries", len(entries))
	}
	byText := map[string]recEntry{}
	for _, e := range entries {
		byText[e.text] = e
		if e.md["recorder"] != "memsvc-recorder" {
			t.Errorf("metadata %v", e.md)
		}
	}
	u, ok := byText["please deploy; the key is api_key=[REDACTED]"]
	if !ok || u.Source != memory.SourceConversation || u.Speaker != memory.SpeakerUser || u.Visibility != memory.VisibilityNormal ||
		u.SecrecyLevel != memory.SecrecySensitive || u.TurnID == nil || *u.TurnID != "t1" || u.md["capture_source"] != "cli" {
		t.Fatalf("user message: %+v (entries %v)", u, recTexts(entries))
	}
	tc, ok := byText[`{"cmd":"psql","env":{"PGPASSWORD":"[REDACTED]"}}`]
	if !ok || tc.Source != memory.SourceToolIO || tc.Speaker != memory.SpeakerTool || tc.Visibility != memory.VisibilityPrivateScratch ||
		tc.SecrecyLevel != memory.SecrecySecret || tc.md["action_id"] != "call-1" || tc.md["observed_at"] != "2026-11-01T12:00:00Z" {
		t.Fatalf("tool call: %+v %v", tc, recTexts(entries))
	}
	if cm := tc.md["capture_metadata"].(map[string]any); cm["client_secret"] != "[REDACTED]" {
		t.Fatalf("capture_metadata %v", cm)
	}
	if a := byText["done"]; a.Speaker != memory.SpeakerSystem {
		t.Fatalf("explicit speaker: %+v", a)
	}
}

// TestRecorderServerDown: with the server down the events are spooled and
// the run succeeds; the next run, with the server up, sends them once.
func TestRecorderServerDown(t *testing.T) {
	spoolDir := filepath.Join(t.TempDir(), "spool")
	env := []string{"MEMSVC_RECORDER_SPOOL_DIR=" + spoolDir}
	in := recEvent("down", "user_message", "one") + recEvent("down", "user_message", "two token=abcdefgh12345678") + recEvent("down", "command", "three")
	r := runRecorder(t, in, env, "ingest", "--server-url", recDeadURL(t))
	if r.code != 0 || !strings.Contains(r.stderr, "spooled=3") {
		t.Fatalf("server down: exit %d\n%s", r.code, r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(spoolDir, "batch-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("spool files %v", files)
	}
	if raw, _ := os.ReadFile(files[0]); bytes.Contains(raw, []byte("abcdefgh12345678")) {
		t.Fatal("secret in the spool file")
	}
	if fi, _ := os.Stat(files[0]); fi.Mode().Perm() != 0o600 {
		t.Fatalf("spool file mode %v", fi.Mode())
	}
	if fi, _ := os.Stat(spoolDir); fi.Mode().Perm() != 0o700 {
		t.Fatalf("spool directory mode %v", fi.Mode())
	}

	srv := startServer(t, t.TempDir())
	r = runRecorder(t, recEvent("down", "user_message", "four"), env, "ingest", "--server-url", srv.url(""))
	if r.code != 0 || !strings.Contains(r.stderr, "sent=1 spooled=0 replayed=3") {
		t.Fatalf("next run: exit %d\n%s", r.code, r.stderr)
	}
	for i := 0; i < 2; i++ { // runs without input change nothing
		if r = runRecorder(t, "", env, "ingest", "--server-url", srv.url("")); r.code != 0 || !strings.Contains(r.stderr, "replayed=0") {
			t.Fatalf("idle run: exit %d\n%s", r.code, r.stderr)
		}
	}
	got := recTexts(recRecallRaw(t, srv.url(""), "", "down"))
	want := map[string]int{"one": 1, "two token=[REDACTED]": 1, "three": 1, "four": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("entries %v, want %v", got, want)
	}
}

// recFaultProxy forwards to the server, or fails raw batches on demand.
type recFaultProxy struct {
	mu    sync.Mutex
	mode  string // "", "429", "500", "commit-then-500", "hold"
	proxy *httputil.ReverseProxy
	// hold: a batch holding a record whose text contains holdText waits
	// until release is called; release is also called when another batch
	// has passed, so that one is stored first
	holdText string
	hold     chan struct{}
	release  func()
}

func newRecFaultProxy(t *testing.T, target string) (*recFaultProxy, string) {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &recFaultProxy{proxy: httputil.NewSingleHostReverseProxy(u)}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return p, srv.URL
}

func (p *recFaultProxy) set(mode string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode = mode
}

func (p *recFaultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	mode := p.mode
	p.mu.Unlock()
	if r.URL.Path != "/v1/encode/raw/batch" || mode == "" {
		p.proxy.ServeHTTP(w, r)
		return
	}
	switch mode {
	case "hold":
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var req memory.EncodeBatchStoreRawRequest
		_ = json.Unmarshal(body, &req)
		held := false
		for _, rec := range req.Records {
			text, _ := rec.Content.Text()
			held = held || strings.Contains(text, p.holdText)
		}
		if !held {
			p.proxy.ServeHTTP(w, r)
			p.release()
			return
		}
		select {
		case <-p.hold:
		case <-r.Context().Done():
			return
		}
		p.proxy.ServeHTTP(w, r)
	case "429":
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"code":"RATE_LIMITED","message":"Rate limit exceeded","details":null,"retry_after":1}`)
	case "500":
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, "<html>upstream failed</html>")
	case "commit-then-500":
		// The server stores the batch; the answer is lost on the way.
		p.proxy.ServeHTTP(httptest.NewRecorder(), r)
		w.WriteHeader(http.StatusBadGateway)
	}
}

// TestRecorderFaultInjection: 429 and 5xx answers spool the batch and the
// run succeeds; the next run sends it, and a batch the server had stored
// before the failure is not stored twice.
func TestRecorderFaultInjection(t *testing.T) {
	srv := startServer(t, t.TempDir())
	for _, mode := range []string{"429", "500", "commit-then-500"} {
		t.Run(mode, func(t *testing.T) {
			proxy, proxyURL := newRecFaultProxy(t, srv.url(""))
			session := "fault-" + mode
			env := []string{"MEMSVC_RECORDER_SPOOL_DIR=" + filepath.Join(t.TempDir(), "spool")}
			proxy.set(mode)
			in := recEvent(session, "user_message", "a") + recEvent(session, "user_message", "b") + recEvent(session, "tool_result", "c")
			r := runRecorder(t, in, env, "ingest", "--server-url", proxyURL)
			if r.code != 0 || !strings.Contains(r.stderr, "sent=0 spooled=3") || !strings.Contains(r.stderr, "send failed; spooled batch") {
				t.Fatalf("%s: exit %d\n%s", mode, r.code, r.stderr)
			}
			before := len(recRecallRaw(t, srv.url(""), "", session))
			if want := map[bool]int{true: 3, false: 0}[mode == "commit-then-500"]; before != want {
				t.Fatalf("%d entries stored during the failure, want %d", before, want)
			}
			proxy.set("")
			r = runRecorder(t, "", env, "ingest", "--server-url", proxyURL)
			if r.code != 0 || !strings.Contains(r.stderr, "replayed=3") {
				t.Fatalf("replay: exit %d\n%s", r.code, r.stderr)
			}
			if got := recTexts(recRecallRaw(t, srv.url(""), "", session)); fmt.Sprint(got) != "map[a:1 b:1 c:1]" {
				t.Fatalf("entries %v: lost or duplicated", got)
			}
		})
	}
}

// TestRecorderUnauthorized: a wrong key fails the run with the batch
// spooled; the right key sends it. doctor reports the same.
func TestRecorderUnauthorized(t *testing.T) {
	srv := startServer(t, t.TempDir(), "MEMSVC_AUTH__ENABLED=true", "MEMSVC_AUTH_API_KEYS=right-key-1,right-key-2")
	spoolDir := filepath.Join(t.TempDir(), "spool")
	env := func(key string) []string {
		return []string{"MEMSVC_RECORDER_SPOOL_DIR=" + spoolDir, "MEMSVC_SERVER_API_KEY=" + key}
	}
	r := runRecorder(t, recEvent("auth", "user_message", "hello"), env("wrong"), "ingest", "--server-url", srv.url(""))
	if r.code != 1 || !strings.Contains(r.stderr, "server refused the API key (HTTP 401)") || !strings.Contains(r.stderr, "spooled=1") {
		t.Fatalf("wrong key: exit %d\n%s", r.code, r.stderr)
	}
	r = runRecorder(t, "", env("wrong"), "doctor", "--server-url", srv.url(""))
	if r.code != 1 || !strings.Contains(r.stdout, "fail auth - server rejected MEMSVC_SERVER_API_KEY (HTTP 401)") || !strings.Contains(r.stdout, "ok health") {
		t.Fatalf("doctor with the wrong key: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runRecorder(t, "", env("right-key-2"), "ingest", "--server-url", srv.url(""))
	if r.code != 0 || !strings.Contains(r.stderr, "replayed=1") {
		t.Fatalf("right key: exit %d\n%s", r.code, r.stderr)
	}
	if got := recTexts(recRecallRaw(t, srv.url(""), "right-key-1", "auth")); got["hello"] != 1 || len(got) != 1 {
		t.Fatalf("entries %v", got)
	}
	for _, skip := range []bool{false, true} {
		args := []string{"doctor", "--server-url", srv.url("")}
		if skip {
			args = append(args, "--skip-raw-ingest-probe")
		}
		r = runRecorder(t, "", env("right-key-1"), args...)
		if r.code != 0 || strings.Count(r.stdout, "ok ") != 4+recBoolInt(skip) || strings.Contains(r.stdout, "fail") {
			t.Fatalf("doctor (skip=%v): exit %d\n%s%s", skip, r.code, r.stdout, r.stderr)
		}
	}
}

func recBoolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestRecorderQuarantine: a malformed spool file is quarantined as *.bad-*
// and the rest goes through.
func TestRecorderQuarantine(t *testing.T) {
	srv := startServer(t, t.TempDir())
	spoolDir := filepath.Join(t.TempDir(), "spool")
	env := []string{"MEMSVC_RECORDER_SPOOL_DIR=" + spoolDir}
	// A good spooled batch, from a run while the server was away.
	if r := runRecorder(t, recEvent("q", "user_message", "spooled"), env, "ingest", "--server-url", recDeadURL(t)); r.code != 0 {
		t.Fatalf("spooling run: %d\n%s", r.code, r.stderr)
	}
	bad := filepath.Join(spoolDir, "batch-0000000000001-0190b6a47c1e7a559f1a5f2b3c4d5e6f.jsonl")
	if err := os.WriteFile(bad, []byte("{\"record_id\": this is not JSON\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runRecorder(t, recEvent("q", "user_message", "new"), env, "ingest", "--server-url", srv.url(""))
	if r.code != 0 || !strings.Contains(r.stderr, "replayed=1 quarantined=1") || !strings.Contains(r.stderr, "quarantined malformed spool file") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	q, _ := filepath.Glob(bad + ".bad-*")
	if len(q) != 1 {
		t.Fatalf("quarantined files %v", q)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Fatal("the malformed file is still pending")
	}
	if got := recTexts(recRecallRaw(t, srv.url(""), "", "q")); fmt.Sprint(got) != "map[new:1 spooled:1]" {
		t.Fatalf("entries %v", got)
	}
}

// TestRecorderOversizeLine: a line over 256 KiB is rejected with its line
// number; the lines before and after it go through.
func TestRecorderOversizeLine(t *testing.T) {
	srv := startServer(t, t.TempDir())
	huge := recEvent("big", "tool_result", strings.Repeat("x", 300<<10))
	exact := `{"session_id":"big","event_type":"tool_result","content":"` // padded to exactly 256 KiB below
	exact += strings.Repeat("y", 256<<10-len(exact)-2) + `"}`
	in := recEvent("big", "user_message", "before 1") + recEvent("big", "user_message", "before 2") + huge +
		"  " + exact + "\n" + recEvent("big", "user_message", "after")
	r := runRecorder(t, in, []string{"MEMSVC_RECORDER_SPOOL_DIR=" + filepath.Join(t.TempDir(), "s")}, "ingest", "--server-url", srv.url(""))
	if r.code != 1 || !strings.Contains(r.stderr, "line 3: event is 307") || !strings.Contains(r.stderr, "line 4: event is 262146 bytes") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	got := recTexts(recRecallRaw(t, srv.url(""), "", "big"))
	if len(got) != 3 || got["before 1"] != 1 || got["before 2"] != 1 || got["after"] != 1 {
		t.Fatalf("entries %d: %v", len(got), got)
	}
	// Exactly 256 KiB is accepted.
	r = runRecorder(t, exact+"\r\n", []string{"MEMSVC_RECORDER_SPOOL_DIR=" + filepath.Join(t.TempDir(), "s")}, "ingest", "--server-url", srv.url(""))
	if r.code != 0 || !strings.Contains(r.stderr, "sent=1") {
		t.Fatalf("exactly 256 KiB: exit %d\n%s", r.code, r.stderr)
	}
}

// TestRecorderHooks feeds real-shaped Claude Code and Codex hook payloads
// through the installed helper scripts, as the agents would, and finds the
// entries on the server, secrets redacted.
func TestRecorderHooks(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	srv := startServer(t, t.TempDir())
	// The helper records into the namespace named after the project's
	// directory.
	const ns = "shop-app"
	project := filepath.Join(t.TempDir(), ns)
	if err := os.Mkdir(project, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, agent := range []string{"claude", "codex"} {
		r := runRecorder(t, "", nil, "install-hook", agent, "--server-url", srv.url(""), "--target-dir", project)
		if r.code != 0 {
			t.Fatalf("install-hook %s: %d\n%s", agent, r.code, r.stderr)
		}
		if !strings.Contains(r.stdout, "namespace: "+ns+"\n") {
			t.Fatalf("install-hook %s does not name the project's namespace %q:\n%s", agent, ns, r.stdout)
		}
	}
	spoolDir := filepath.Join(t.TempDir(), "spool")
	hookLog := filepath.Join(t.TempDir(), "hook.log")
	runs := 0
	hook := func(agent, stdin string, args ...string) {
		t.Helper()
		script := filepath.Join(project, "."+agent, "hooks", "memsvc-recorder-"+agent+"-hook.sh")
		cmd := exec.Command("sh", append([]string{script}, args...)...)
		cmd.Dir = project
		cmd.Env = cleanEnv(t, "MEMSVC_RECORDER_BIN="+filepath.Join(binDir, "memsvc-recorder"),
			"MEMSVC_RECORDER_SPOOL_DIR="+spoolDir, "MEMSVC_RECORDER_HOOK_LOG="+hookLog)
		cmd.Stdin = strings.NewReader(stdin)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil || len(out) != 0 {
			t.Fatalf("hook script: %v %q", err, out)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Fatalf("the hook script kept the agent waiting %v", took)
		}
		runs++
	}

	const cs = "3b7c6d1e-0f2a-4b5c-9d8e-7f6a5b4c3d2e"
	claudeBase := `"session_id":"` + cs + `","transcript_path":"/home/dev/.claude/projects/app/` + cs + `.jsonl","cwd":"` + project + `","permission_mode":"default"`
	hook("claude", `{`+claudeBase+`,"hook_event_name":"UserPromptSubmit","prompt":"deploy it; the token is ghp_0123456789abcdefghijklmnopqrstuvwxyz"}`)
	hook("claude", `{`+claudeBase+`,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"PGPASSWORD=hunter2hunter2 psql -c 'select 1'","description":"check db"},"tool_use_id":"toolu_01A"}`)
	hook("claude", `{`+claudeBase+`,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"PGPASSWORD=hunter2hunter2 psql -c 'select 1'"},"tool_response":{"stdout":"1\n","stderr":"","interrupted":false},"tool_use_id":"toolu_01A"}`)
	hook("claude", `{`+claudeBase+`,"hook_event_name":"Notification","message":"Claude needs your permission to use Bash"}`)
	hook("claude", `{`+claudeBase+`,"hook_event_name":"SubagentStop","stop_hook_active":false,"agent_id":"a1","last_assistant_message":"Subagent: the schema is fine."}`)
	hook("claude", `{`+claudeBase+`,"hook_event_name":"Stop","stop_hook_active":false}`)
	// The agent fires the same PreToolUse twice (a retry): recorded once.
	hook("claude", `{`+claudeBase+`,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"PGPASSWORD=hunter2hunter2 psql -c 'select 1'","description":"check db"},"tool_use_id":"toolu_01A"}`)

	const xs = "0199c1d2-e3f4-7a5b-8c6d-7e8f9a0b1c2d"
	codexBase := `"session_id":"` + xs + `","turn_id":"4","cwd":"` + project + `","model":"gpt-5-codex"`
	hook("codex", `{`+codexBase+`,"hook_event_name":"UserPromptSubmit","prompt":"rotate the Stripe key sk_live_abcdefghijklmnop12345678"}`)
	hook("codex", `{`+codexBase+`,"hook_event_name":"PreToolUse","tool_name":"shell","tool_input":{"command":["curl","-H","Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlLXNpZ25hdHVyZQ","https://api.example.com"]},"call_id":"call_7"}`)
	hook("codex", `{`+codexBase+`,"hook_event_name":"PostToolUse","tool_name":"shell","tool_input":{"command":["ls"]},"tool_response":"README.md\n","call_id":"call_8"}`)
	hook("codex", `{`+codexBase+`,"hook_event_name":"Stop","last_assistant_message":"Rotated the key."}`)
	hook("codex", "", `{"type":"agent-turn-complete","thread-id":"`+xs+`","turn-id":"5","cwd":"`+project+`","input-messages":["and the webhook secret whsec_abcdefghijklmnopqrstuvwx"],"last-assistant-message":"Done."}`)
	hook("codex", "this is not JSON: password=correcthorsebattery9")

	// Each run queued its events in the foreground and sent them in the
	// background: wait for every sender to finish.
	waitFor(t, nil, 60*time.Second, "every hook run to finish", func() bool {
		data, _ := os.ReadFile(hookLog)
		return strings.Count(string(data), "memsvc-recorder hook: accepted=") == runs &&
			strings.Count(string(data), "memsvc-recorder flush: ") == runs
	})
	logData, _ := os.ReadFile(hookLog)
	claude := recRecallRawIn(t, srv.url(""), "", ns, cs)
	codex := recRecallRawIn(t, srv.url(""), "", ns, xs)
	local := recRecallRawIn(t, srv.url(""), "", ns, "codex-local")

	type want struct {
		typ     string
		speaker memory.RawSpeaker
		text    string // substring
	}
	check := func(entries []recEntry, wants []want) {
		t.Helper()
		if len(entries) != len(wants) {
			t.Fatalf("%d entries, want %d: %v\nhook log:\n%s", len(entries), len(wants), recTexts(entries), logData)
		}
		for _, w := range wants {
			found := false
			for _, e := range entries {
				found = found || (e.md["event_type"] == w.typ && e.Speaker == w.speaker && strings.Contains(e.text, w.text))
			}
			if !found {
				t.Errorf("no %s entry containing %q in %v", w.typ, w.text, recTexts(entries))
			}
		}
	}
	check(claude, []want{
		{"user_message", memory.SpeakerUser, "deploy it; the token is [REDACTED]"},
		{"tool_call", memory.SpeakerTool, `{"tool_name":"Bash","tool_input":{"command":"PGPASSWORD=[REDACTED] psql`},
		{"tool_result", memory.SpeakerTool, `"tool_response":{"stdout":"1\n"`},
		{"session_summary", memory.SpeakerSystem, "Claude needs your permission to use Bash"},
		{"session_summary", memory.SpeakerAssistant, "Subagent: the schema is fine."},
		{"session_summary", memory.SpeakerSystem, `{"stop_hook_active":false}`},
	})
	check(codex, []want{
		{"user_message", memory.SpeakerUser, "rotate the Stripe key [REDACTED]"},
		{"tool_call", memory.SpeakerTool, `"Authorization: Bearer [REDACTED]"`},
		{"tool_result", memory.SpeakerTool, `README.md`},
		{"session_summary", memory.SpeakerAssistant, "Rotated the key."},
		{"user_message", memory.SpeakerUser, "and the webhook secret [REDACTED]"},
		{"assistant_message", memory.SpeakerAssistant, "Done."},
	})
	check(local, []want{{"session_summary", memory.SpeakerSystem, "this is not JSON: password=[REDACTED]"}})
	for _, e := range append(append(claude, codex...), local...) {
		all := e.text + fmt.Sprint(e.md)
		for _, secret := range []string{"ghp_0123", "hunter2", "sk_live_", "eyJhbGci", "whsec_", "correcthorse"} {
			if strings.Contains(all, secret) {
				t.Errorf("%q reached the journal: %s", secret, all)
			}
		}
		if e.Source != memory.SourceConversation && e.Source != memory.SourceToolIO && e.Source != memory.SourceSummary {
			t.Errorf("source %v", e.Source)
		}
	}
	for _, e := range claude {
		cm, _ := e.md["capture_metadata"].(map[string]any)
		if e.md["capture_source"] != "claude-code" || cm["agent"] != "claude" || cm["transcript_path"] == nil {
			t.Errorf("claude metadata %v", e.md)
		}
		if e.md["event_type"] == "tool_call" && e.md["action_id"] != "toolu_01A" {
			t.Errorf("tool_use_id not kept as action_id: %v", e.md)
		}
	}
	if !strings.Contains(string(logData), "duplicate=1") {
		t.Errorf("the repeated PreToolUse was not dropped as a duplicate:\n%s", logData)
	}

	// Without a recorder binary the hook still exits 0 at once.
	cmd := exec.Command("sh", filepath.Join(project, ".claude", "hooks", "memsvc-recorder-claude-hook.sh"))
	cmd.Env = []string{"PATH=/nonexistent", "MEMSVC_RECORDER_BIN=/nonexistent/memsvc-recorder"}
	cmd.Stdin = strings.NewReader(`{"hook_event_name":"Stop"}`)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "not found; event not recorded") {
		t.Fatalf("missing binary: %v %q", err, out)
	}
}

// TestRecorderHookOrder: events the agent fires in quick succession (it
// waits for each hook to return before the next) reach the server in that
// order, although the helper sends them in the background.
func TestRecorderHookOrder(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	srv := startServer(t, t.TempDir())
	// The server is slow to take the first event: it holds it until a later
	// one has passed (or every hook has run). Whatever is sent after it
	// must still be stored after it.
	proxy, proxyURL := newRecFaultProxy(t, srv.url(""))
	proxy.holdText = "step 00"
	proxy.hold = make(chan struct{})
	proxy.release = sync.OnceFunc(func() { close(proxy.hold) })
	proxy.set("hold")
	project := t.TempDir()
	if r := runRecorder(t, "", nil, "install-hook", "claude", "--server-url", proxyURL, "--target-dir", project, "--namespace", "order"); r.code != 0 {
		t.Fatalf("install-hook: %d\n%s", r.code, r.stderr)
	}
	script := filepath.Join(project, ".claude", "hooks", "memsvc-recorder-claude-hook.sh")
	spoolDir := filepath.Join(t.TempDir(), "spool")
	hookLog := filepath.Join(t.TempDir(), "hook.log")
	const session, n = "order-1", 16
	var want []string
	for i := range n {
		text := fmt.Sprintf("step %02d", i)
		want = append(want, text)
		event := "PreToolUse"
		payload := `{"session_id":"` + session + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"` + text + `"},"tool_use_id":"toolu_` + fmt.Sprint(i) + `"}`
		if i%4 == 0 {
			event = "UserPromptSubmit"
			payload = `{"session_id":"` + session + `","hook_event_name":"UserPromptSubmit","prompt":"` + text + `"}`
		}
		cmd := exec.Command("sh", script)
		cmd.Dir = project
		cmd.Env = cleanEnv(t, "MEMSVC_RECORDER_BIN="+filepath.Join(binDir, "memsvc-recorder"),
			"MEMSVC_RECORDER_SPOOL_DIR="+spoolDir, "MEMSVC_RECORDER_HOOK_LOG="+hookLog, "CLAUDE_PROJECT_DIR="+project)
		cmd.Stdin = strings.NewReader(payload)
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil || len(out) != 0 {
			t.Fatalf("%s hook: %v %q", event, err, out)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Fatalf("the hook kept the agent waiting %v (for the held send?)", took)
		}
	}
	proxy.release()
	var entries []recEntry
	waitFor(t, nil, 60*time.Second, "every event on the server", func() bool {
		entries = recRecallRawIn(t, srv.url(""), "", "order", session)
		return len(entries) >= n
	})
	// Newest first, by the server's arrival time.
	var got []string
	for i := len(entries) - 1; i >= 0; i-- {
		text := entries[i].text
		if j := strings.Index(text, "step "); j >= 0 {
			text = text[j : j+len("step 00")]
		}
		got = append(got, text)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		logData, _ := os.ReadFile(hookLog)
		t.Fatalf("arrival order\n%v\nwant\n%v\nhook log:\n%s", got, want, logData)
	}
}
