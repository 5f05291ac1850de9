package admincmd

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/cli"
)

// t0 is the start of every test clock and the engines' fixed time.
var t0 = time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)

// clock is a test clock that moves forward by step on every reading, so
// each backup run gets its own name and progress lines appear at once.
type clock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	c.t = c.t.Add(c.step)
	return t
}

type result struct {
	stdout, stderr string
	code           int
}

// invocation configures one run of the command tree.
type invocation struct {
	env   []string
	stdin string
	clock *clock
	// terminal makes the run believe stdout and stderr are terminals.
	terminal bool
}

func (in invocation) run(t *testing.T, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	c := in.clock
	if c == nil {
		c = &clock{t: t0, step: time.Second}
	}
	r := newRoot(strings.NewReader(in.stdin), &stdout, &stderr, in.env, c.now)
	r.terminal = func(any) bool { return in.terminal }
	code := cli.Run(t.Context(), r.cmd, args, &stderr)
	return result{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

// run runs the command tree with no environment and empty stdin.
func run(t *testing.T, args ...string) result {
	t.Helper()
	return invocation{}.run(t, args...)
}

// decode parses the JSON on stdout into a map, failing the test when it is
// not one JSON object.
func decode(t *testing.T, r result) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("stdout is not JSON (%v):\n%s\nstderr:\n%s", err, r.stdout, r.stderr)
	}
	return m
}

// num returns a JSON number field as an int.
func num(t *testing.T, m map[string]any, key string) int {
	t.Helper()
	n, ok := m[key].(json.Number)
	if !ok {
		t.Fatalf("%s is %v, not a number", key, m[key])
	}
	i, err := n.Int64()
	if err != nil {
		t.Fatal(err)
	}
	return int(i)
}

func TestHelpAndUsage(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		code     int
		stdout   string
		inStderr string
	}{
		{nil, 0, "", "SUBCOMMANDS"},
		{[]string{"--help"}, 0, "", "backup"},
		{[]string{"--version"}, 0, "memsvc-admin " + cli.Version + "\n", ""},
		{[]string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{[]string{"archive"}, 0, "", "inspect"},
		{[]string{"archive", "scan"}, 2, "", `unknown archive command "scan"`},
		{[]string{"archive", "verify"}, 2, "", "missing FILE"},
		{[]string{"archive", "verify", "a", "b"}, 2, "", "want one FILE"},
		{[]string{"archive", "verify", "a.cma", "--decryption-key", "x", "--decryption-key-stdin"}, 2, "", "not both"},
		{[]string{"audit", "verify", "extra"}, 2, "", "takes no arguments"},
		{[]string{"audit", "verify", "--path", "a", "--data-dir", "b"}, 2, "", "not both"},
		{[]string{"backup", "--server-url", "http://127.0.0.1:1"}, 2, "", "--dir is required"},
		{[]string{"backup", "--dir", "d"}, 2, "", "--server-url is required"},
		{[]string{"backup", "--dir", "d", "--server-url", "ftp://x"}, 2, "", "--server-url"},
		{[]string{"backup", "--dir", "d", "--server-url", "http://127.0.0.1:1", "--keep", "0"}, 2, "", "keep at least 1"},
		{[]string{"backup", "--dir", "d", "--server-url", "http://127.0.0.1:1", "--encrypt"}, 2, "", "--encrypt needs a passphrase"},
		{[]string{"backup", "--dir", "d", "--server-url", "http://127.0.0.1:1", "--encryption-key", "k"}, 2, "", "without --encrypt"},
		{[]string{"backup", "--dir", "d", "--server-url", "http://127.0.0.1:1", "--include-raw-journal=false", "--include-sealed=false"}, 2, "", "--include-raw-journal=false leaves out"},
		{[]string{"backup", "--dir", "d", "--server-url", "http://127.0.0.1:1", "--stores", "episodic,attic"}, 2, "", "--stores"},
		{[]string{"restore", "--server-url", "http://127.0.0.1:1"}, 2, "", "missing FILE"},
		{[]string{"restore", "--server-url", "http://127.0.0.1:1", "x.cma", "--strategy", "overwrite"}, 2, "", "--strategy"},
		{[]string{"restore", "--server-url", "http://127.0.0.1:1", "x.cma", "--conflict-resolution", "newest"}, 2, "", "--conflict-resolution"},
	} {
		r := run(t, tc.args...)
		if r.code != tc.code || r.stdout != tc.stdout || !strings.Contains(r.stderr, tc.inStderr) {
			t.Errorf("%q: exit %d, stdout %q, stderr:\n%s\nwant exit %d, stdout %q, stderr containing %q",
				tc.args, r.code, r.stdout, r.stderr, tc.code, tc.stdout, tc.inStderr)
		}
	}
}
