package hooks

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// awkward is a path and URL with every character that could break out of
// the quoting.
const awkward = `/tmp/it's a "dir" $HOME ` + "`x`" + `\n/.claude/hooks/memsvc-recorder-claude-hook.sh`

func TestExamplesAreValidJSON(t *testing.T) {
	for _, agent := range []string{"claude", "codex"} {
		out, err := Example(Params{Agent: agent, AgentName: agent, ServerURL: "http://127.0.0.1:8420", ScriptPath: awkward})
		if err != nil {
			t.Fatalf("%s: %v", agent, err)
		}
		var doc struct {
			Hooks map[string][]struct {
				Hooks []struct{ Type, Command string }
			}
		}
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatalf("%s: %v\n%s", agent, err, out)
		}
		for _, ev := range []string{"UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SubagentStop", "Notification"} {
			entries := doc.Hooks[ev]
			if len(entries) != 1 || len(entries[0].Hooks) != 1 {
				t.Fatalf("%s: %s not registered: %+v", agent, ev, entries)
			}
			h := entries[0].Hooks[0]
			if h.Type != "command" || h.Command != `'/tmp/it'\''s a "dir" $HOME `+"`x`"+`\n/.claude/hooks/memsvc-recorder-claude-hook.sh'` {
				t.Fatalf("%s: %s command %q", agent, ev, h.Command)
			}
		}
	}
	if _, err := Example(Params{Agent: "vim"}); err == nil {
		t.Fatal("example for an unknown agent")
	}
}

// TestScriptQuoting: whatever the server URL holds, the script passes it
// to the recorder as one argument, unexpanded.
func TestScriptQuoting(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	url := `http://127.0.0.1:8420/it's $(touch pwned) "x" ` + "`y`"
	script, err := Script(Params{Agent: "claude", AgentName: "Claude Code", ServerURL: url})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(sh, "-n", "-c", string(script)).CombinedOutput(); err != nil {
		t.Fatalf("sh -n: %v\n%s", err, out)
	}
	path := filepath.Join(dir, ScriptName("claude"))
	if err := os.WriteFile(path, script, 0o755); err != nil {
		t.Fatal(err)
	}
	fake := filepath.Join(dir, "fake-recorder")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\ncat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sh, path, "notify-arg")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "MEMSVC_RECORDER_BIN=" + fake, "MEMSVC_RECORDER_HOOK_FOREGROUND=1"}
	cmd.Stdin = strings.NewReader(`{"payload":1}`)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("script: %v", err)
	}
	want := "hook\nclaude\n--server-url\n" + url + "\nnotify-arg\n" + `{"payload":1}`
	if string(out) != want {
		t.Fatalf("recorder got\n%s\nwant\n%s", out, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Fatal("the URL was expanded by the shell")
	}
}

// TestScriptNamespace: the script runs the recorder with the namespace it
// was written with, whatever MEMSVC_NAMESPACE the agent has.
func TestScriptNamespace(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	script, err := Script(Params{Agent: "claude", AgentName: "Claude Code", ServerURL: "http://127.0.0.1:8420", Namespace: "proj-a"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, ScriptName("claude"))
	if err := os.WriteFile(path, script, 0o755); err != nil {
		t.Fatal(err)
	}
	seen := filepath.Join(dir, "seen")
	fake := filepath.Join(dir, "fake-recorder")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nprintf 'ns=%s\\n' \"$MEMSVC_NAMESPACE\" >>\"$SEEN\"\ncat >/dev/null\n"), 0o755); err != nil {
		t.Fatal(err)
	}
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
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	for _, l := range lines {
		if l != "ns=proj-a" {
			t.Fatalf("the recorder ran with %q, want ns=proj-a (all runs: %q)", l, lines)
		}
	}
}
