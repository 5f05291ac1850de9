package recorder

import (
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
			if !strings.HasPrefix(string(script), "#!/bin/sh\n") || !strings.Contains(string(script), "hook "+string(agent)+" --server-url") ||
				!strings.Contains(string(script), "server_url='http://127.0.0.1:8420'") {
				t.Fatalf("script:\n%s", script)
			}
			if fi, _ := os.Stat(inst.Script); fi.Mode().Perm() != 0o755 {
				t.Fatalf("script mode %v", fi.Mode())
			}
			example, _ := os.ReadFile(inst.Example)
			if !strings.Contains(string(example), inst.Script) {
				t.Fatalf("example does not name the script:\n%s", example)
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
		})
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
