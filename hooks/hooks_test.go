package hooks

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// registration is the part of an example the agents read.
type registration struct {
	Hooks map[string][]struct {
		Matcher *string
		Hooks   []struct {
			Type    string
			Command string
			Timeout int
		}
	}
}

func TestExamplesAreValidJSON(t *testing.T) {
	events := map[string][]string{
		"claude": {"UserPromptSubmit", "PreToolUse", "PostToolUse", "Notification", "Stop", "SubagentStop"},
		// Codex has no Notification event.
		"codex": {"UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SubagentStop"},
	}
	for agent, want := range events {
		cmd, err := Command(agent, `it's "sub" $HOME`)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Example(Params{Agent: agent, AgentName: agent, ServerURL: "http://127.0.0.1:8420", Command: cmd})
		if err != nil {
			t.Fatalf("%s: %v", agent, err)
		}
		var doc registration
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatalf("%s: %v\n%s", agent, err, out)
		}
		var got []string
		for ev, entries := range doc.Hooks {
			got = append(got, ev)
			if len(entries) != 1 || len(entries[0].Hooks) != 1 {
				t.Fatalf("%s: %s registered %d times: %+v", agent, ev, len(entries), entries)
			}
			h := entries[0].Hooks[0]
			if h.Type != "command" || h.Command != cmd || h.Timeout <= 0 {
				t.Fatalf("%s: %s hook %+v", agent, ev, h)
			}
			if m := entries[0].Matcher; agent == "codex" && m != nil {
				t.Errorf("codex: %s has matcher %q; Codex matchers are regular expressions, and none matches every tool", ev, *m)
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: events %v, want %v", agent, got, want)
		}
	}
	// Codex refuses a hooks.json with any top-level member but "hooks".
	cmd, _ := Command("codex", "")
	out, _ := Example(Params{Agent: "codex", AgentName: "Codex", Command: cmd})
	var top map[string]json.RawMessage
	if err := json.Unmarshal(out, &top); err != nil || len(top) != 1 || top["hooks"] == nil {
		t.Fatalf("codex example is not a hooks.json: %v\n%s", err, out)
	}
	if _, err := Example(Params{Agent: "vim"}); err == nil {
		t.Fatal("example for an unknown agent")
	}
}

// TestCommandFindsTheScriptInTheProject runs the registered commands the
// way the agents do, from a clone at a path nobody wrote down: Claude Code
// with $CLAUDE_PROJECT_DIR, Codex from a directory below the project, in a
// git work tree (a stand-in git answers rev-parse) and outside one.
func TestCommandFindsTheScriptInTheProject(t *testing.T) {
	sh := lookSh(t)
	clone := filepath.Join(t.TempDir(), `it's a "clone" $HOME`)
	project := filepath.Join(clone, "svc", `o'dd`)
	for _, agent := range []string{"claude", "codex"} {
		dir := filepath.Join(project, "."+agent, "hooks")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ScriptName(agent)), []byte("echo ran "+agent+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(cmdline, dir string, env ...string) string {
		t.Helper()
		c := exec.Command(sh, "-c", cmdline)
		c.Dir = dir
		c.Env = env
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("%s in %s: %v\n%s", cmdline, dir, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	path := "PATH=" + os.Getenv("PATH")

	claude, _ := Command("claude", "")
	if strings.Contains(claude, project) {
		t.Fatalf("claude command holds the path: %s", claude)
	}
	if got := run(claude, t.TempDir(), path, "CLAUDE_PROJECT_DIR="+project); got != "ran claude" {
		t.Fatalf("claude: %q", got)
	}

	// In a git work tree whose top is the clone: the project is svc/o'dd.
	bin := t.TempDir()
	fakeGit := "#!/bin/sh\n[ \"$1 $2\" = 'rev-parse --show-toplevel' ] && printf '%s\\n' \"$GIT_TOP\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(fakeGit), 0o755); err != nil {
		t.Fatal(err)
	}
	sub, _ := filepath.Rel(clone, project)
	codex, _ := Command("codex", sub)
	if strings.Contains(codex, clone) {
		t.Fatalf("codex command holds the path: %s", codex)
	}
	below := filepath.Join(project, "deeper")
	if err := os.Mkdir(below, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := run(codex, below, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "GIT_TOP="+clone); got != "ran codex" {
		t.Fatalf("codex in a work tree: %q", got)
	}
	// Outside a work tree (git fails): the session directory is the project.
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte("#!/bin/sh\nexit 128\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	top, _ := Command("codex", "")
	if got := run(top, project, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH")); got != "ran codex" {
		t.Fatalf("codex outside a work tree: %q", got)
	}
	if _, err := Command("x'y", ""); err == nil {
		t.Fatal("a quote in the agent name was accepted")
	}
}

// TestScriptQueuesThenFlushes: whatever the server URL holds, the script
// passes it to the recorder as one argument, unexpanded; the payload goes to
// the queueing step; nothing reaches the agent's stdout.
func TestScriptQueuesThenFlushes(t *testing.T) {
	url := `http://127.0.0.1:8420/it's $(touch pwned) "x" ` + "`y`"
	sh, dir, path := writeScript(t, Params{Agent: "claude", AgentName: "Claude Code", ServerURL: url})
	if out, err := exec.Command(sh, "-n", path).CombinedOutput(); err != nil {
		t.Fatalf("sh -n: %v\n%s", err, out)
	}
	fake := writeFakeRecorder(t, dir, "#!/bin/sh\necho \"[$#]\"; for a in \"$@\"; do printf '%s\\n' \"$a\"; done\ncat\necho\n")
	logFile := filepath.Join(dir, "hook.log")
	cmd := exec.Command(sh, path, "notify-arg")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "MEMSVC_RECORDER_BIN=" + fake, "MEMSVC_RECORDER_HOOK_FOREGROUND=1", "MEMSVC_RECORDER_HOOK_LOG=" + logFile}
	cmd.Stdin = strings.NewReader(`{"payload":1}`)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("script: %v\n%s", err, stderr.Bytes())
	}
	if stdout.Len() != 0 || stderr.Len() != 0 {
		t.Fatalf("the script talked to the agent: stdout %q stderr %q", stdout.Bytes(), stderr.Bytes())
	}
	got, _ := os.ReadFile(logFile)
	want := "[4]\nhook\nclaude\n--queue-only\nnotify-arg\n" + `{"payload":1}` + "\n" +
		"[3]\nflush\n--server-url\n" + url + "\n\n"
	if string(got) != want {
		t.Fatalf("recorder got\n%s\nwant\n%s", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Fatal("the URL was expanded by the shell")
	}
}

// TestScriptDoesNotWaitForTheSender: the script returns, and closes its
// output (which the agent reads to the end), while the background sender
// still runs.
func TestScriptDoesNotWaitForTheSender(t *testing.T) {
	sh, dir, path := writeScript(t, Params{Agent: "codex", AgentName: "Codex", ServerURL: "http://127.0.0.1:8420"})
	release, started, finished := filepath.Join(dir, "release"), filepath.Join(dir, "started"), filepath.Join(dir, "finished")
	// The stand-in sender runs until the test releases it (polling a file:
	// it is the stand-in that waits, not the test).
	fake := "#!/bin/sh\ncat >/dev/null\n[ \"$1\" = flush ] || exit 0\n: > " + started + "\n" +
		"n=0; while [ ! -e " + release + " ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n+1)); done\n: > " + finished + "\n"
	bin := writeFakeRecorder(t, dir, fake)
	cmd := exec.Command(sh, path)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "MEMSVC_RECORDER_BIN=" + bin}
	cmd.Stdin = strings.NewReader(`{"hook_event_name":"Stop"}`)
	done := make(chan error, 1)
	go func() { _, err := cmd.Output(); done <- err }() // Output waits for stdout to close
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		_ = os.WriteFile(release, nil, 0o644)
		t.Fatal("the script waited for the background sender")
	}
	if _, err := os.Stat(finished); err == nil {
		t.Fatal("the sender had finished: the test proves nothing")
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, errS := os.Stat(started)
		_, errF := os.Stat(finished)
		if errS == nil && errF == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the background sender never ran")
		}
		time.Sleep(20 * time.Millisecond) // polling with a deadline
	}
}

// TestScriptNamespace: the script runs both steps of the recorder (queue
// and flush) with the namespace it was written with, whatever
// MEMSVC_NAMESPACE the agent has.
func TestScriptNamespace(t *testing.T) {
	sh, dir, path := writeScript(t, Params{Agent: "claude", AgentName: "Claude Code", ServerURL: "http://127.0.0.1:8420", Namespace: "proj-a"})
	seen := filepath.Join(dir, "seen")
	fake := writeFakeRecorder(t, dir, "#!/bin/sh\nprintf '%s ns=%s\\n' \"$1\" \"$MEMSVC_NAMESPACE\" >>\"$SEEN\"\ncat >/dev/null\n")
	cmd := exec.Command(sh, path)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "MEMSVC_RECORDER_BIN=" + fake, "MEMSVC_RECORDER_HOOK_FOREGROUND=1", "SEEN=" + seen, "MEMSVC_NAMESPACE=the-agents-own"}
	cmd.Stdin = strings.NewReader(`{"payload":1}`)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("script: %v\n%s", err, out)
	}
	got, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	if want := "hook ns=proj-a\nflush ns=proj-a\n"; string(got) != want {
		t.Fatalf("the recorder ran as\n%s\nwant\n%s", got, want)
	}
}

// lookSh finds sh, or skips the test on a machine without one.
func lookSh(t *testing.T) string {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	return sh
}

// writeScript writes the hook script of p into a fresh directory and
// returns sh, the directory and the script's path.
func writeScript(t *testing.T, p Params) (sh, dir, path string) {
	t.Helper()
	sh = lookSh(t)
	script, err := Script(p)
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	path = filepath.Join(dir, ScriptName(p.Agent))
	if err := os.WriteFile(path, script, 0o755); err != nil {
		t.Fatal(err)
	}
	return sh, dir, path
}

// writeFakeRecorder writes an executable stand-in for memsvc-recorder into
// dir and returns its path.
func writeFakeRecorder(t *testing.T, dir, body string) string {
	t.Helper()
	path := filepath.Join(dir, "fake-recorder")
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}
