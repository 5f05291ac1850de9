package recorder

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInstallHook(t *testing.T) {
	for _, agent := range Agents() {
		t.Run(string(agent), func(t *testing.T) {
			project := t.TempDir()
			inst, err := InstallHook(InstallOptions{Agent: agent, ServerURL: "http://127.0.0.1:8420", TargetDir: project})
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(project, "."+string(agent), "hooks")
			if inst.Script != filepath.Join(dir, "memsvc-recorder-"+string(agent)+"-hook.sh") || inst.Example != filepath.Join(dir, "memsvc-recorder.example.json") {
				t.Fatalf("paths %+v", inst)
			}
			script, err := os.ReadFile(inst.Script)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(script), "#!/bin/sh\n") || !strings.Contains(string(script), "hook "+string(agent)+" --queue-only") ||
				!strings.Contains(string(script), "server_url='http://127.0.0.1:8420'") {
				t.Fatalf("script:\n%s", script)
			}
			if fi, _ := os.Stat(inst.Script); fi.Mode().Perm() != 0o755 {
				t.Fatalf("script mode %v", fi.Mode())
			}
			example, _ := os.ReadFile(inst.Example)
			cmd, _ := json.Marshal(inst.Command)
			if inst.Command == "" || !bytes.Contains(example, cmd) || !strings.Contains(inst.Command, "/."+string(agent)+"/hooks/memsvc-recorder-"+string(agent)+"-hook.sh") {
				t.Fatalf("example does not register the script (%s):\n%s", inst.Command, example)
			}
			// A checked-in registration must work in every clone: no
			// absolute path of this one.
			if bytes.Contains(example, []byte(project)) {
				t.Fatalf("example holds the project path %s:\n%s", project, example)
			}
			switch agent {
			case Codex:
				reg, err := os.ReadFile(filepath.Join(project, ".codex", "hooks.json"))
				if err != nil || !bytes.Equal(reg, example) || !inst.RegistrationWritten || inst.Registration != filepath.Join(project, ".codex", "hooks.json") {
					t.Fatalf("codex registration %+v: %v\n%s", inst, err, reg)
				}
			case Claude:
				if inst.Registration != "" || inst.RegistrationWritten {
					t.Fatalf("claude registration %+v", inst)
				}
				if _, err := os.Stat(filepath.Join(project, ".claude", "settings.json")); err == nil {
					t.Fatal("install-hook claude wrote settings.json")
				}
			}

			// Again: refused, and nothing changes.
			if err := os.WriteFile(inst.Example, []byte("mine"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = InstallHook(InstallOptions{Agent: agent, ServerURL: "http://127.0.0.1:9999", TargetDir: project})
			if !errors.Is(err, ErrInstallRefused) || !strings.Contains(err.Error(), "--force") {
				t.Fatalf("second install: %v", err)
			}
			if b, _ := os.ReadFile(inst.Example); string(b) != "mine" {
				t.Fatal("refused install changed the example")
			}
			// With --force: both replaced.
			if _, err := InstallHook(InstallOptions{Agent: agent, ServerURL: "http://127.0.0.1:9999", TargetDir: project, Force: true}); err != nil {
				t.Fatal(err)
			}
			script, _ = os.ReadFile(inst.Script)
			example, _ = os.ReadFile(inst.Example)
			if !strings.Contains(string(script), "127.0.0.1:9999") || string(example) == "mine" {
				t.Fatal("--force did not overwrite")
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 2 {
				t.Fatalf("leftovers in %s: %v", dir, entries)
			}
			if agent == Codex {
				// The registration written the first time is the user's
				// now: --force leaves it alone.
				again, err := InstallHook(InstallOptions{Agent: agent, ServerURL: "http://127.0.0.1:9999", TargetDir: project, Force: true})
				if err != nil || again.RegistrationWritten {
					t.Fatalf("third install: %+v %v", again, err)
				}
			}
		})
	}
}

// TestInstallHookCodexBelowWorkTreeTop: a project below the top of its git
// work tree registers the script through its path in the tree.
func TestInstallHookCodexBelowWorkTreeTop(t *testing.T) {
	top := t.TempDir()
	if err := os.Mkdir(filepath.Join(top, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(top, "services", "api")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	inst, err := InstallHook(InstallOptions{Agent: Codex, ServerURL: "http://127.0.0.1:8420", TargetDir: project})
	if err != nil {
		t.Fatal(err)
	}
	want := `sh "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"/'services/api'/.codex/hooks/memsvc-recorder-codex-hook.sh`
	if inst.Command != want {
		t.Fatalf("command %s, want %s", inst.Command, want)
	}
	if got := workTreeSub(top); got != "" {
		t.Fatalf("sub of the top: %q", got)
	}
	if got := workTreeSub(t.TempDir()); got != "" {
		t.Fatalf("sub outside a work tree: %q", got)
	}
}

// TestInstallHookChecksBothFirst: when the second target is in the way,
// the first is not written either.
func TestInstallHookChecksBothFirst(t *testing.T) {
	project := t.TempDir()
	dir := filepath.Join(project, ".claude", "hooks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	example := filepath.Join(dir, "memsvc-recorder.example.json")
	if err := os.WriteFile(example, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := InstallHook(InstallOptions{Agent: Claude, ServerURL: "http://127.0.0.1:8420", TargetDir: project})
	if !errors.Is(err, ErrInstallRefused) {
		t.Fatalf("install: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "memsvc-recorder-claude-hook.sh")); !os.IsNotExist(err) {
		t.Fatalf("script written although the example was in the way: %v", err)
	}
}

// TestInstallHookRefusesSymlinks: a symlinked target is refused even with
// --force, and the link target is untouched.
func TestInstallHookRefusesSymlinks(t *testing.T) {
	for _, which := range []string{"memsvc-recorder-codex-hook.sh", "memsvc-recorder.example.json"} {
		t.Run(which, func(t *testing.T) {
			project := t.TempDir()
			dir := filepath.Join(project, ".codex", "hooks")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			victim := filepath.Join(t.TempDir(), "victim")
			if err := os.WriteFile(victim, []byte("precious"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(victim, filepath.Join(dir, which)); err != nil {
				t.Fatal(err)
			}
			for _, force := range []bool{false, true} {
				_, err := InstallHook(InstallOptions{Agent: Codex, ServerURL: "http://127.0.0.1:8420", TargetDir: project, Force: force})
				if !errors.Is(err, ErrInstallRefused) || !strings.Contains(err.Error(), "symlink") {
					t.Fatalf("force=%v: %v", force, err)
				}
			}
			if b, _ := os.ReadFile(victim); string(b) != "precious" {
				t.Fatal("wrote through the symlink")
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Fatalf("files written next to a refused symlink: %v", entries)
			}
		})
	}
}

func TestInstallHookBadInput(t *testing.T) {
	if _, err := InstallHook(InstallOptions{Agent: Claude, ServerURL: "ftp://x", TargetDir: t.TempDir()}); err == nil {
		t.Fatal("bad URL accepted")
	}
	if _, err := InstallHook(InstallOptions{Agent: Claude, ServerURL: "http://127.0.0.1:8420", TargetDir: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Fatal("missing target directory accepted")
	}
}

// TestInstallHookRefusesSymlinkedDirectories: a symlink in place of the
// agent's hidden directory or of its hooks directory is refused, with or
// without --force, before anything is created on either side of the link.
func TestInstallHookRefusesSymlinkedDirectories(t *testing.T) {
	for _, agent := range Agents() {
		for _, linked := range []string{agent.HiddenDir(), filepath.Join(agent.HiddenDir(), "hooks")} {
			t.Run(string(agent)+"/"+filepath.ToSlash(linked), func(t *testing.T) {
				project := t.TempDir()
				elsewhere := t.TempDir()
				link := filepath.Join(project, linked)
				if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(elsewhere, link); err != nil {
					t.Fatal(err)
				}
				for _, force := range []bool{false, true} {
					_, err := InstallHook(InstallOptions{Agent: agent, ServerURL: "http://127.0.0.1:8420", TargetDir: project, Force: force})
					if !errors.Is(err, ErrInstallRefused) || !strings.Contains(err.Error(), link) || !strings.Contains(err.Error(), "symlink") {
						t.Fatalf("force=%v: got %v, want a refusal naming %s as a symlink", force, err, link)
					}
				}
				if entries, err := os.ReadDir(elsewhere); err != nil || len(entries) != 0 {
					t.Fatalf("written through the link into %s: %v %v", elsewhere, entries, err)
				}
				if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
					t.Fatalf("the link itself was replaced: %v %v", fi, err)
				}
			})
		}
	}
}

// TestInstallHookRefusesFileAsDirectory: a regular file where a hook
// directory belongs is refused with a message naming it.
func TestInstallHookRefusesFileAsDirectory(t *testing.T) {
	project := t.TempDir()
	blocker := filepath.Join(project, ".claude")
	if err := os.WriteFile(blocker, []byte("not a dir"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := InstallHook(InstallOptions{Agent: Claude, ServerURL: "http://127.0.0.1:8420", TargetDir: project, Force: true})
	if !errors.Is(err, ErrInstallRefused) || !strings.Contains(err.Error(), blocker) || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("got %v, want a refusal naming %s", err, blocker)
	}
	if b, _ := os.ReadFile(blocker); string(b) != "not a dir" {
		t.Fatal("the blocking file changed")
	}
}

// TestInstallHookLeavesSettingsAlone: install-hook promises never to edit
// the agent's settings, so every settings file the agent reads from the
// project directory is byte-for-byte the same afterwards, with and
// without --force.
func TestInstallHookLeavesSettingsAlone(t *testing.T) {
	settings := map[Agent][]string{
		Claude: {"settings.json", "settings.local.json"},
		Codex:  {"config.toml", "hooks.json"},
	}
	for _, agent := range Agents() {
		t.Run(string(agent), func(t *testing.T) {
			names := settings[agent]
			if len(names) == 0 {
				t.Fatalf("no settings files listed for agent %s", agent)
			}
			project := t.TempDir()
			hidden := filepath.Join(project, agent.HiddenDir())
			if err := os.Mkdir(hidden, 0o700); err != nil {
				t.Fatal(err)
			}
			want := map[string][]byte{}
			for i, name := range names {
				// Odd bytes on purpose: no trailing newline, a BOM, CRLF.
				content := []byte("\ufeff{\"hooks\": {\"Stop\": []},\r\n \"n\": " + string(rune('0'+i)) + "}")
				path := filepath.Join(hidden, name)
				if err := os.WriteFile(path, content, 0o600); err != nil {
					t.Fatal(err)
				}
				want[path] = content
			}
			for _, force := range []bool{false, true} {
				if _, err := InstallHook(InstallOptions{Agent: agent, ServerURL: "http://127.0.0.1:8420", TargetDir: project, Force: force}); err != nil {
					t.Fatalf("force=%v: %v", force, err)
				}
			}
			for path, content := range want {
				got, err := os.ReadFile(path)
				if err != nil || !bytes.Equal(got, content) {
					t.Errorf("%s changed: %q, %v", path, got, err)
				}
				if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
					t.Errorf("%s mode changed: %v, %v", path, fi.Mode(), err)
				}
			}
			if fi, err := os.Stat(hidden); err != nil || fi.Mode().Perm() != 0o700 {
				t.Errorf("%s mode changed: %v, %v", hidden, fi.Mode(), err)
			}
			entries, err := os.ReadDir(hidden)
			if err != nil || len(entries) != len(names)+1 {
				t.Errorf("%s holds %v, want the settings files plus hooks/", hidden, entries)
			}
		})
	}
}

// TestHookFilesStayInsideTarget: the writes themselves go through a Root at
// the target, so a directory swapped for a link to elsewhere after the
// checks (simulated here by calling the writers directly) still cannot
// carry a file out of the target.
func TestHookFilesStayInsideTarget(t *testing.T) {
	target, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(target, ".claude")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(target)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, replace := range []bool{false, true} {
		err := writeHookFile(root, filepath.Join(".claude", "hook.sh"), "hook.sh", []byte("#!/bin/sh\n"), 0o755, replace)
		if err == nil {
			t.Errorf("replace=%v: a write through a link out of the target succeeded", replace)
		}
	}
	if err := makeHookDir(root, filepath.Join(".claude", "hooks"), "hooks"); err == nil {
		t.Error("a directory was made through a link out of the target")
	}
	if entries, err := os.ReadDir(outside); err != nil || len(entries) != 0 {
		t.Fatalf("outside the target: %v (%v)", entries, err)
	}
}
