package mcpcmd_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"memsvc.dev/memsvc/pkg/cli"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/cli/mcpcmd"
	"memsvc.dev/memsvc/pkg/cli/servercmd"
)

// command runs one of the two front ends of the proxy.
type command struct {
	name string
	run  func(ctx context.Context, args []string, stdin string, environ []string) (stdout, stderr string, code int)
}

var commands = []command{
	{"memsvc-mcp", func(ctx context.Context, args []string, stdin string, environ []string) (string, string, int) {
		var out, errOut bytes.Buffer
		code := mcpcmd.Run(ctx, args, strings.NewReader(stdin), &out, &errOut, environ)
		return out.String(), errOut.String(), code
	}},
	{"memsvc mcp", func(ctx context.Context, args []string, stdin string, environ []string) (string, string, int) {
		var out, errOut bytes.Buffer
		code := servercmd.Run(ctx, append([]string{"mcp"}, args...), strings.NewReader(stdin), &out, &errOut, environ)
		return out.String(), errOut.String(), code
	}},
}

// TestFlags: bad command lines are usage errors (exit 2) that say what to
// fix, the same for both commands.
func TestFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		environ []string
		want    string
	}{
		{"no server URL", nil, nil, "--server-url is required"},
		{"server URL only in the environment", nil, []string{"MEMSVC_SERVER_URL=http://127.0.0.1:8420"}, "--server-url is required"},
		{"URL without scheme", []string{"--server-url", "127.0.0.1:8420"}, nil, "want an http:// or https:// URL"},
		{"file URL", []string{"--server-url", "file:///tmp/x"}, nil, "want an http:// or https:// URL"},
		{"timeout zero", []string{"--server-url", "http://127.0.0.1:8420", "--server-timeout-secs", "0"}, nil, "--server-timeout-secs 0: want 1 to 86400 seconds"},
		{"timeout negative", []string{"--server-url", "http://127.0.0.1:8420", "--server-timeout-secs", "-1"}, nil, "server-timeout-secs"},
		{"key over plain http", []string{"--server-url", "http://memory.example.com:8420", "--server-api-key", "k"}, nil, "would cross the network in plaintext; use an https:// URL"},
		{"env key over plain http", []string{"--server-url", "http://10.1.2.3:8420"}, []string{"MEMSVC_SERVER_API_KEY=k"}, "(from MEMSVC_SERVER_API_KEY)"},
		{"argument", []string{"--server-url", "http://127.0.0.1:8420", "serve"}, nil, `unexpected argument "serve"`},
		{"log level", []string{"--server-url", "http://127.0.0.1:8420", "--log-level", "loud"}, nil, `--log-level "loud"`},
		{"bad namespace", []string{"--server-url", "http://127.0.0.1:8420", "--namespace", "My Project"}, nil, `--namespace: "My Project" must start with a lower-case letter`},
		{"bad namespace from the environment", []string{"--server-url", "http://127.0.0.1:8420"}, []string{"MEMSVC_NAMESPACE=a:b"}, "MEMSVC_NAMESPACE: "},
	}
	for _, c := range commands {
		for _, tc := range tests {
			t.Run(c.name+"/"+tc.name, func(t *testing.T) {
				stdout, stderr, code := c.run(t.Context(), tc.args, "", tc.environ)
				if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "USAGE") {
					t.Fatalf("exit %d, stdout %q, stderr:\n%s\nwant exit 2 and %q", code, stdout, stderr, tc.want)
				}
			})
		}
	}
}

// TestServe: both commands serve MCP on stdio, start without a server,
// exit 0 when stdin closes, and write only JSON-RPC to stdout. `memsvc
// mcp` opens no data directory and reads no configuration file.
func TestServe(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	_ = l.Close() // nobody listens: the proxy must start anyway

	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"stats","arguments":{}}}` + "\n"
	dir := t.TempDir()
	tests := []struct {
		cmd     command
		args    []string
		environ []string
	}{
		{commands[0], []string{"--server-url", url, "--server-timeout-secs", "5", "--log-level", "debug"}, []string{"MEMSVC_SERVER_API_KEY=  "}},
		{commands[1], []string{"--server-url", url, "--server-api-key", "k"}, nil},
		// Global flags before "mcp": the URL is used, the data directory
		// and configuration are ignored.
		{command{"memsvc --data-dir D --config F mcp", func(ctx context.Context, args []string, stdin string, environ []string) (string, string, int) {
			var out, errOut bytes.Buffer
			full := append([]string{"--data-dir", filepath.Join(dir, "data"), "--config", filepath.Join(dir, "missing.toml"), "--server-url", url, "mcp"}, args...)
			code := servercmd.Run(ctx, full, strings.NewReader(stdin), &out, &errOut, environ)
			return out.String(), errOut.String(), code
		}}, nil, []string{"MEMSVC_DATA_DIR=" + filepath.Join(dir, "data2")}},
	}
	for _, tc := range tests {
		t.Run(tc.cmd.name, func(t *testing.T) {
			stdout, stderr, code := tc.cmd.run(t.Context(), tc.args, in, tc.environ)
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, stderr)
			}
			answers := map[string]string{}
			sc := bufio.NewScanner(strings.NewReader(stdout))
			for sc.Scan() {
				var m struct {
					JSONRPC string          `json:"jsonrpc"`
					ID      json.RawMessage `json:"id"`
					Result  json.RawMessage `json:"result"`
				}
				if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m.JSONRPC != "2.0" || m.Result == nil {
					t.Fatalf("stdout line is not a JSON-RPC result: %q", sc.Text())
				}
				answers[string(m.ID)] = string(m.Result)
			}
			if len(answers) != 2 || !strings.Contains(answers["1"], `"name":"memsvc","version":"`+cli.Version+`"`) ||
				!strings.Contains(answers["2"], `"isError":true`) || !strings.Contains(answers["2"], "unreachable at "+url) {
				t.Fatalf("answers: %v", answers)
			}
			if !strings.Contains(stderr, "MCP proxy serving on stdio") {
				t.Errorf("no startup log on stderr: %s", stderr)
			}
		})
	}
	for _, name := range []string{"data", "data2"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("memsvc mcp touched the data directory %s: %v", name, err)
		}
	}
}

// TestVersion: memsvc-mcp reports the memsvc release.
func TestVersion(t *testing.T) {
	stdout, _, code := commands[0].run(t.Context(), []string{"--version"}, "", nil)
	if code != 0 || stdout != "memsvc-mcp "+cli.Version+"\n" {
		t.Fatalf("--version: exit %d, %q", code, stdout)
	}
	_, stderr, code := commands[0].run(t.Context(), []string{"--help"}, "", nil)
	if code != 0 || !strings.Contains(stderr, "--server-url") || !strings.Contains(stderr, "MEMSVC_SERVER_API_KEY") {
		t.Fatalf("--help: exit %d\n%s", code, stderr)
	}
}

// TestNamespaceOption: --namespace, else MEMSVC_NAMESPACE, names the
// namespace of the proxy's tools; `memsvc --namespace X mcp` passes the
// global flag on.
func TestNamespaceOption(t *testing.T) {
	for _, tc := range []struct {
		flag    string
		environ []string
		want    string
	}{
		{"", nil, ""},
		{"proj-a", nil, "proj-a"},
		{"", []string{"MEMSVC_NAMESPACE=from-env"}, "from-env"},
		{"from-flag", []string{"MEMSVC_NAMESPACE=from-env"}, "from-flag"},
	} {
		f := mcpcmd.Flags{ServerURL: "http://127.0.0.1:8420", LogLevel: "info", Namespace: tc.flag}
		opts, err := f.Options(tc.environ)
		if err != nil || opts.Namespace != tc.want {
			t.Errorf("flag %q, environment %v: namespace %q, %v; want %q", tc.flag, tc.environ, opts.Namespace, err, tc.want)
		}
	}
	var out, errOut bytes.Buffer
	code := servercmd.Run(t.Context(), []string{"--namespace", "Bad Name", "mcp", "--server-url", "http://127.0.0.1:8420"}, strings.NewReader(""), &out, &errOut, nil)
	if code != 2 || !strings.Contains(errOut.String(), `--namespace: "Bad Name"`) {
		t.Errorf("memsvc --namespace 'Bad Name' mcp: exit %d: %s", code, errOut.String())
	}
}
