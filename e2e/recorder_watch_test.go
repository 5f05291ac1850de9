package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testkit"
)

// watchProc is a running `memsvc-recorder watch`.
type watchProc struct {
	*child
	t *testing.T
}

// startWatch runs memsvc-recorder watch with env and waits until it follows
// both agents' directories (its first walk is done).
func startWatch(t *testing.T, env []string, args ...string) *watchProc {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "memsvc-recorder"), append([]string{"watch"}, args...)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	w := &watchProc{child: startChild(t, cmd, nil), t: t}
	waitFor(t, nil, 30*time.Second, "watch to follow both directories", func() bool {
		return strings.Count(w.log(), "following transcripts") == 2
	})
	return w
}

// stop interrupts the watcher and checks it exits 0.
func (w *watchProc) stop() {
	w.t.Helper()
	if err := w.signalExit(w.t, os.Interrupt); err != nil {
		w.t.Fatalf("watch exited with %v:\n%s", err, w.log())
	}
}

// TestRecorderWatch follows a Claude Code transcript written in pieces (a
// partial last line each time), across restarts and a rotation, and a
// Codex rollout in a day directory that appears later: every assistant
// message and tool call reaches the server exactly once, redacted, linked
// to its call id.
func TestRecorderWatch(t *testing.T) {
	srv := startServer(t, t.TempDir())
	home := t.TempDir()
	spoolDir := filepath.Join(t.TempDir(), "spool")
	env := []string{"HOME=" + home, "MEMSVC_RECORDER_SPOOL_DIR=" + spoolDir}
	projects := filepath.Join(home, ".claude", "projects")
	if err := os.MkdirAll(projects, 0o700); err != nil {
		t.Fatal(err)
	}
	const session = "6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	path := filepath.Join(projects, "-home-dev-shop", session+".jsonl")
	n := 0
	line := func(text string) string {
		n++
		content := []any{map[string]any{"type": "text", "text": text}}
		if name, ok := strings.CutPrefix(text, "tool:"); ok {
			content = []any{map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%02d", n), "name": name, "input": map[string]any{"command": "make test"}}}
		}
		b, _ := json.Marshal(map[string]any{"type": "assistant", "uuid": fmt.Sprintf("00000000-0000-4000-8000-%012d", n), "sessionId": session,
			"timestamp": time.Date(2026, 11, 3, 9, 0, n, 0, time.UTC).Format(time.RFC3339Nano),
			"message":   map[string]any{"id": fmt.Sprintf("msg_%d", n), "role": "assistant", "content": content}})
		return string(b) + "\n"
	}
	user := `{"type":"user","uuid":"u-0","sessionId":"` + session + `","message":{"role":"user","content":"why does checkout fail?"}}` + "\n"
	want := map[string]int{}
	expect := func(texts ...string) {
		t.Helper()
		for _, s := range texts {
			want[s] = 1
		}
		waitFor(t, nil, 60*time.Second, fmt.Sprint("the server to hold ", texts), func() bool {
			got := recTexts(recRecallRaw(t, srv.url(""), "", session))
			for s := range want {
				if got[s] == 0 {
					return false
				}
			}
			return true
		})
		entries := recRecallRaw(t, srv.url(""), "", session)
		if got := recTexts(entries); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("session holds\n%v\nwant\n%v", got, want)
		}
	}

	w := startWatch(t, env, "--server-url", srv.url(""))
	a, b := line("A: the cart expires; the key GITHUB_TOKEN=ghp_0123456789abcdefghijklmnopqrstuvwxyz was in .env"), line("B: made the clock injectable")
	testkit.AppendFile(t, path, user+a+b[:30])
	expect("A: the cart expires; the key GITHUB_TOKEN=[REDACTED] was in .env")
	testkit.AppendFile(t, path, b[30:]+line("tool:Bash"))
	expect("B: made the clock injectable", `{"tool_name":"Bash","tool_input":{"command":"make test"}}`)
	w.stop()

	// Written while stopped, the last line partial.
	d := line("D: 200 runs pass")
	testkit.AppendFile(t, path, line("C: patched cart.go")+d[:20])
	w = startWatch(t, env, "--server-url", srv.url(""))
	expect("C: patched cart.go")
	testkit.AppendFile(t, path, d[20:])
	expect("D: 200 runs pass")
	w.stop()

	// Rotated while stopped: the new file at the path is read whole.
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	testkit.AppendFile(t, path, line("E: after the rotation"))
	w = startWatch(t, env, "--server-url", srv.url(""))
	expect("E: after the rotation")

	// Codex: a day directory appears; the rollout is read whole.
	const codexSession = "0199f2a4-6b1c-7d3e-8f50-a1b2c3d4e5f6"
	rollout := filepath.Join(home, ".codex", "sessions", "2026", "11", "03", "rollout-2026-11-03T10-02-11-"+codexSession+".jsonl")
	testkit.AppendFile(t, rollout, `{"timestamp":"2026-11-03T10:02:11.400Z","type":"session_meta","payload":{"id":"`+codexSession+`","cwd":"/home/dev/shop"}}`+"\n"+
		`{"timestamp":"2026-11-03T10:02:19.060Z","type":"turn_context","payload":{"turn_id":"turn-1","model":"gpt-5.1-codex"}}`+"\n"+
		`{"timestamp":"2026-11-03T10:02:23.310Z","type":"response_item","payload":{"type":"function_call","name":"shell_command","arguments":"{\"command\":\"go test ./...\"}","call_id":"call_1"}}`+"\n"+
		`{"timestamp":"2026-11-03T10:02:35.001Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"All green."}]}}`+"\n")
	waitFor(t, nil, 60*time.Second, "the Codex events", func() bool { return len(recRecallRaw(t, srv.url(""), "", codexSession)) == 2 })
	w.stop()

	codex := recRecallRaw(t, srv.url(""), "", codexSession)
	if got := fmt.Sprint(recTexts(codex)); got != `map[All green.:1 {"tool_name":"shell_command","tool_input":{"command":"go test ./..."}}:1]` {
		t.Fatalf("codex entries %s", got)
	}
	for _, e := range codex {
		if e.md["event_type"] == "tool_call" && (e.md["action_id"] != "call_1" || e.TurnID == nil || *e.TurnID != "turn-1" || e.Speaker.String() != "assistant") {
			t.Fatalf("tool call %+v %v", e.RawJournalRecord, e.md)
		}
	}
	for _, e := range recRecallRaw(t, srv.url(""), "", session) {
		if strings.Contains(e.text, "ghp_0123") || e.md["capture_source"] != "claude-code" {
			t.Fatalf("entry %q %v", e.text, e.md)
		}
	}
	// A restart with nothing new records nothing.
	w = startWatch(t, env, "--server-url", srv.url(""))
	w.stop()
	if !strings.Contains(w.log(), "events=0") {
		t.Fatalf("the idle restart recorded something:\n%s", w.log())
	}
	expect()
}
