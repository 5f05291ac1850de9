package e2e

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// exitCase is one command line and the exit code it must give.
type exitCase struct {
	args  []string
	stdin string // a path opened as stdin; empty for none
	code  int
}

// commandCases are the cases of one command: a bad flag value and, where
// the command takes arguments, a missing or extra one (both exit 2), and
// a failure at run time (exit 1). Every command also gets an unknown flag
// (exit 2) without being listed.
type commandCases struct {
	badValue []string
	badArgs  []string
	failure  []string
	stdin    string // stdin of the failure case
	// group marks a command that only holds subcommands: it has nothing
	// to fail at run time.
	group bool
}

// exitFixture holds what the failure cases need.
type exitFixture struct {
	dir, file, garbage, busyPort, deadURL, deadPort string
}

func newExitFixture(t *testing.T) exitFixture {
	t.Helper()
	dir := t.TempDir()
	f := exitFixture{dir: dir, file: filepath.Join(dir, "a-file"), garbage: filepath.Join(dir, "garbage.cma")}
	for _, p := range []string{f.file, f.garbage} {
		if err := os.WriteFile(p, []byte("not an archive\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A port something listens on, and one nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	f.busyPort = strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.deadPort = strconv.Itoa(dead.Addr().(*net.TCPAddr).Port)
	dead.Close()
	f.deadURL = "http://127.0.0.1:" + f.deadPort
	return f
}

// TestExitCodes pins one exit-code contract for all four binaries: 0 ok,
// 1 the command ran and failed, 2 the command line was wrong (unknown
// flag, bad flag value, missing or extra argument). It walks every
// command each binary lists in its help, so a new command without cases
// here fails the test. `memsvc-recorder hook` is the one documented
// exception: it always exits 0, because an agent may read a hook's exit
// status as a verdict on its own action.
func TestExitCodes(t *testing.T) {
	f := newExitFixture(t)
	d := filepath.Join(f.dir, "data")
	dead := []string{"--server-url", f.deadURL}
	memsvc := map[string]commandCases{
		"serve":                    {badValue: []string{"serve", "--port", "x"}, badArgs: []string{"serve", "now"}, failure: []string{"serve", "--data-dir", d, "--port", f.busyPort}},
		"store":                    {badValue: []string{"store", "x", "--store", "attic"}, badArgs: []string{"store"}, failure: append(dead, "store", "x")},
		"store-raw":                {badValue: []string{"store-raw", "x", "--session-id", "s", "--visibility", "public"}, badArgs: []string{"store-raw", "--session-id", "s"}, failure: append(dead, "store-raw", "x", "--session-id", "s")},
		"recall":                   {badValue: []string{"recall", "--limit", "-1"}, badArgs: []string{"recall", "a", "b"}, failure: append(dead, "recall", "x")},
		"recall-raw":               {badValue: []string{"recall-raw", "--secrecy-levels", "top"}, badArgs: []string{"recall-raw", "a", "b"}, failure: append(dead, "recall-raw")},
		"inspect":                  {badValue: []string{"inspect", "not-a-uuid"}, badArgs: []string{"inspect"}, failure: append(dead, "inspect", "0190b6a4-7c1e-7a55-9f1a-5f2b3c4d5e6f")},
		"stats":                    {badValue: []string{"stats", "--json=maybe"}, badArgs: []string{"stats", "x"}, failure: append(dead, "stats")},
		"forget":                   {badValue: []string{"forget", "0190b6a4-7c1e-7a55-9f1a-5f2b3c4d5e6f", "--cascade=maybe"}, badArgs: []string{"forget"}, failure: append(dead, "forget", "0190b6a4-7c1e-7a55-9f1a-5f2b3c4d5e6f", "--confirm")},
		"set-mode":                 {badValue: []string{"set-mode", "fuzzy"}, badArgs: []string{"set-mode"}, failure: append(dead, "set-mode", "perfect")},
		"decay-tick":               {badValue: []string{"decay-tick", "--duration", "-5"}, badArgs: []string{"decay-tick", "x"}, failure: append(dead, "decay-tick")},
		"dream-tick":               {badValue: []string{"dream-tick", "--max-groups", "x"}, badArgs: []string{"dream-tick", "x"}, failure: append(dead, "dream-tick")},
		"consolidate":              {badValue: []string{"consolidate", "--strategy", "greedy"}, badArgs: []string{"consolidate", "x"}, failure: append(dead, "consolidate")},
		"export":                   {badValue: []string{"export", "--stores", "attic"}, badArgs: []string{"export", "x"}, failure: append(dead, "export", "--output", filepath.Join(f.dir, "out.cma"))},
		"import":                   {badValue: []string{"import", f.garbage, "--strategy", "sideways"}, badArgs: []string{"import"}, failure: []string{"--data-dir", d, "import", f.garbage}},
		"namespaces":               {badValue: []string{"namespaces", "--json=maybe"}, badArgs: []string{"namespaces", "x"}, failure: append(dead, "namespaces")},
		"namespace":                {badValue: []string{"namespace", "--version=maybe"}, badArgs: []string{"namespace", "frobnicate"}, group: true},
		"namespace drop":           {badValue: []string{"namespace", "drop", "Not_A_Name", "--confirm"}, badArgs: []string{"namespace", "drop", "--confirm"}, failure: append(dead, "namespace", "drop", "old", "--confirm")},
		"healthcheck":              {badValue: []string{"healthcheck", "--port", "x"}, badArgs: []string{"healthcheck", "x"}, failure: []string{"healthcheck", "--port", f.deadPort}},
		"audit-verify":             {badValue: []string{"audit-verify", "--path"}, badArgs: []string{"audit-verify", "x"}, failure: []string{"audit-verify", "--path", filepath.Join(f.dir, "none.jsonl")}},
		"migrate-store-encryption": {badValue: []string{"migrate-store-encryption", "--confirm=maybe"}, badArgs: []string{"migrate-store-encryption", "x"}, failure: []string{"--data-dir", d, "migrate-store-encryption", "--confirm"}},
		"mcp":                      {badValue: []string{"mcp", "--server-url", f.deadURL, "--server-timeout-secs", "0"}, badArgs: []string{"mcp", "x"}, failure: []string{"mcp", "--server-url", f.deadURL}, stdin: f.dir},
	}
	admin := map[string]commandCases{
		"archive":         {badValue: []string{"archive", "--quiet=maybe"}, badArgs: []string{"archive", "frobnicate"}, group: true},
		"archive verify":  {badValue: []string{"archive", "verify", f.garbage, "--decryption-key-stdin=maybe"}, badArgs: []string{"archive", "verify"}, failure: []string{"archive", "verify", f.garbage}},
		"archive inspect": {badValue: []string{"archive", "inspect", f.garbage, "--decryption-key-stdin=maybe"}, badArgs: []string{"archive", "inspect"}, failure: []string{"archive", "inspect", f.garbage}},
		"audit":           {badValue: []string{"audit", "--quiet=maybe"}, badArgs: []string{"audit", "frobnicate"}, group: true},
		"audit verify":    {badValue: []string{"audit", "verify", "--path"}, badArgs: []string{"audit", "verify", "x"}, failure: []string{"audit", "verify", "--path", filepath.Join(f.dir, "none.jsonl")}},
		"backup":          {badValue: []string{"backup", "--server-url", f.deadURL, "--dir", f.dir, "--keep", "x"}, badArgs: []string{"backup", "--server-url", f.deadURL}, failure: []string{"backup", "--server-url", f.deadURL, "--dir", filepath.Join(f.dir, "backups")}},
		"restore":         {badValue: []string{"restore", "--server-url", f.deadURL, f.garbage, "--strategy", "sideways"}, badArgs: []string{"restore", "--server-url", f.deadURL}, failure: []string{"restore", "--server-url", f.deadURL, f.garbage}},
	}
	spool := []string{"--spool-dir", filepath.Join(f.dir, "spool")}
	recorder := map[string]commandCases{
		"ingest":       {badValue: []string{"ingest", "--batch-max-records", "0"}, badArgs: []string{"ingest", "x"}, failure: append([]string{"ingest", "--server-url", f.deadURL}, spool...), stdin: f.file},
		"doctor":       {badValue: []string{"doctor", "--skip-raw-ingest-probe=maybe"}, badArgs: []string{"doctor", "x"}, failure: append([]string{"doctor", "--server-url", f.deadURL}, spool...)},
		"install-hook": {badValue: []string{"install-hook", "vim"}, badArgs: []string{"install-hook"}, failure: []string{"install-hook", "claude", "--target-dir", f.file}},
		"flush":        {badValue: []string{"flush", "--wait", "soon"}, badArgs: []string{"flush", "x"}, failure: []string{"flush", "--server-url", f.deadURL, "--spool-dir", f.file}},
		"watch": {badValue: []string{"watch", "--agent", "vim"}, badArgs: []string{"watch", "x"},
			failure: []string{"watch", "--server-url", f.deadURL, "--spool-dir", f.file, "--claude-dir", f.dir, "--codex-dir", f.dir}},
	}
	mcp := map[string]commandCases{
		"": {badValue: []string{"--server-url", f.deadURL, "--server-timeout-secs", "0"}, badArgs: []string{"--server-url", f.deadURL, "x"}, failure: []string{"--server-url", f.deadURL}, stdin: f.dir},
	}

	for _, bin := range []struct {
		name  string
		cases map[string]commandCases
	}{{"memsvc", memsvc}, {"memsvc-admin", admin}, {"memsvc-recorder", recorder}, {"memsvc-mcp", mcp}} {
		t.Run(bin.name, func(t *testing.T) {
			commands := listCommands(t, bin.name, nil)
			if bin.name == "memsvc-recorder" {
				commands = slices.DeleteFunc(commands, func(c string) bool { return c == "hook" })
			}
			for _, c := range commands {
				if _, ok := bin.cases[c]; !ok {
					t.Errorf("%s %s: no exit-code cases; add them to TestExitCodes", bin.name, c)
				}
			}
			for c := range bin.cases {
				if !slices.Contains(commands, c) {
					t.Errorf("%s %q has cases but is not in the help's command list %q", bin.name, c, commands)
				}
			}
			for _, name := range commands {
				cc, ok := bin.cases[name]
				if !ok {
					continue
				}
				path := strings.Fields(name)
				cases := []exitCase{
					{args: append(slices.Clone(path), "--no-such-flag"), code: 2},
					{args: cc.badValue, code: 2},
					{args: cc.badArgs, code: 2},
				}
				if cc.failure != nil {
					cases = append(cases, exitCase{args: cc.failure, stdin: cc.stdin, code: 1})
				} else if !cc.group {
					t.Errorf("%s %s: no failure case", bin.name, name)
				}
				for _, ec := range cases {
					r := runExit(t, f.dir, bin.name, ec)
					if r.code != ec.code {
						t.Errorf("%s %q: exit %d, want %d\nstdout: %s\nstderr: %s", bin.name, ec.args, r.code, ec.code, r.stdout, r.stderr)
					}
				}
			}
		})
	}

	// The documented exception: whatever goes wrong, hook exits 0.
	t.Run("memsvc-recorder hook", func(t *testing.T) {
		for _, args := range [][]string{
			{"hook", "--no-such-flag"}, {"hook", "vim"}, {"hook"},
			append([]string{"hook", "claude", "--server-url", f.deadURL}, spool...),
		} {
			if r := runExit(t, f.dir, "memsvc-recorder", exitCase{args: args, stdin: f.file}); r.code != 0 {
				t.Errorf("%q: exit %d, want 0\n%s", args, r.code, r.stderr)
			}
		}
	})
}

var subcommandLineRE = regexp.MustCompile(`^  (\S+)\s`)

// listCommands returns the commands a binary's help lists under
// SUBCOMMANDS, with the commands of groups as "group sub" and the group
// itself; for a binary without subcommands it returns [""].
func listCommands(t *testing.T, bin string, prefix []string) []string {
	t.Helper()
	r := runExit(t, t.TempDir(), bin, exitCase{args: append(slices.Clone(prefix), "--help")})
	help := r.stdout + r.stderr
	_, section, ok := strings.Cut(help, "\nSUBCOMMANDS\n")
	if !ok {
		if len(prefix) == 0 {
			return []string{""}
		}
		return nil
	}
	section, _, _ = strings.Cut(section, "\n\n")
	var out []string
	for _, line := range strings.Split(section, "\n") {
		m := subcommandLineRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		path := append(slices.Clone(prefix), m[1])
		out = append(out, strings.Join(path, " "))
		out = append(out, listCommands(t, bin, path)...)
	}
	return out
}

// runExit runs a binary in dir with an empty environment (plus HOME and
// PATH) and the case's stdin.
func runExit(t *testing.T, dir, bin string, ec exitCase) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, bin), ec.args...)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + filepath.Join(dir, "home"), "PATH=" + os.Getenv("PATH")}
	if ec.stdin != "" {
		in, err := os.Open(ec.stdin)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		cmd.Stdin = in
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %q did not finish within 30s", bin, ec.args)
	}
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %s: %v", bin, err)
	}
	return r
}
