package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/peterbourgon/ff/v4"
)

// TestParseErrorsArePlain: a bad flag value is a usage error (exit 2)
// whose message names the flag and the value in plain words, without the
// Go parser's names.
func TestParseErrorsArePlain(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--limit", "-1"}, `t: --limit must be a whole number of 0 or more, not "-1"`},
		{[]string{"--limit=abc"}, `t: --limit must be a whole number of 0 or more, not "abc"`},
		{[]string{"--limit", "99999999999999999999999"}, `t: --limit "99999999999999999999999" is out of range`},
		{[]string{"--keep", "x"}, `t: --keep must be a whole number, not "x"`},
		{[]string{"--ratio", "x"}, `t: --ratio must be a number, not "x"`},
		{[]string{"--wait", "soon"}, `t: --wait must be a duration such as 90s, 5m or 2h, not "soon"`},
		{[]string{"--port", "70000"}, `t: --port "70000" is out of range`},
		{[]string{"--bogus"}, `t: unknown flag --bogus`},
		{[]string{"--limit"}, `t: flag --limit needs a value`},
	} {
		fs := ff.NewFlagSet("t")
		fs.UintLong("limit", 10, "")
		fs.IntLong("keep", 1, "")
		fs.Float64Long("ratio", 1, "")
		fs.DurationLong("wait", 0, "")
		Port(fs, "port", "")
		cmd := &ff.Command{Name: "t", Flags: fs, Exec: func(context.Context, []string) error { return nil }}
		var stderr bytes.Buffer
		code := Run(t.Context(), cmd, tc.args, &stderr)
		first, _, _ := strings.Cut(stderr.String(), "\n")
		if code != ExitUsage || !strings.HasPrefix(first, "Error: "+tc.want) || strings.Contains(first, "strconv") || strings.Contains(first, "parse error") {
			t.Errorf("%q: exit %d, %q; want exit 2 and %q", tc.args, code, first, tc.want)
		}
	}
}

func TestPortFlag(t *testing.T) {
	fs := ff.NewFlagSet("t")
	port := Port(fs, "port", "HTTP port")
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if _, set := port(); set {
		t.Error("port set without the flag")
	}
	fs = ff.NewFlagSet("t")
	port = Port(fs, "port", "HTTP port")
	if err := fs.Parse([]string{"--port", "0"}); err != nil {
		t.Fatal(err)
	}
	if p, set := port(); !set || p != 0 {
		t.Errorf("--port 0 gave %d, %v", p, set)
	}
}

func TestCheckVerifiable(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	full := filepath.Join(dir, "full")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		filepath.Join(dir, "none"): "no audit log at " + filepath.Join(dir, "none"),
		empty:                      "audit log " + empty + " is empty",
		dir:                        "audit log " + dir + " is not a regular file",
	} {
		if err := CheckVerifiable("audit log", path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
	if err := CheckVerifiable("audit log", full); err != nil {
		t.Errorf("a file with content: %v", err)
	}
}

// TestNoArgs: an argument is a usage error with the refusal and run is not
// called; without arguments run runs and its error comes back.
func TestNoArgs(t *testing.T) {
	boom := errors.New("boom")
	calls := 0
	exec := NoArgs("stats takes no arguments", func(context.Context) error { calls++; return boom })
	err := exec(context.Background(), []string{"x"})
	var usage *UsageError
	if !errors.As(err, &usage) || err.Error() != "stats takes no arguments" || calls != 0 {
		t.Fatalf("with an argument: %v (usage %v), %d calls", err, usage != nil, calls)
	}
	if err := exec(context.Background(), nil); err != boom || calls != 1 {
		t.Fatalf("without arguments: %v, %d calls", err, calls)
	}
}

// TestGroupExec: a group without arguments shows its help; an argument is
// a usage error naming the group, or no group for a tree's root.
func TestGroupExec(t *testing.T) {
	for kind, want := range map[string]string{"namespace": `unknown namespace command "x"`, "": `unknown command "x"`} {
		exec := GroupExec(kind)
		if err := exec(context.Background(), nil); !errors.Is(err, ff.ErrHelp) {
			t.Errorf("%q without arguments: %v, want the help", kind, err)
		}
		err := exec(context.Background(), []string{"x"})
		var usage *UsageError
		if !errors.As(err, &usage) || err.Error() != want {
			t.Errorf("%q with an argument: %v, want the usage error %q", kind, err, want)
		}
	}
}
