// Package mcpcmd is the `memsvc-mcp` command: a stdio MCP server that
// forwards tool calls to a running memsvc server (pkg/mcpproxy). Its
// flags and their checks (Flags) are shared with the `memsvc mcp`
// subcommand, so both behave alike.
package mcpcmd

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/peterbourgon/ff/v4"
	"github.com/peterbourgon/ff/v4/ffval"

	"memsvc.dev/memsvc/pkg/cli"
	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/mcpproxy"
)

// EnvAPIKey is the environment variable that holds the server's API key.
const EnvAPIKey = "MEMSVC_SERVER_API_KEY"

// maxTimeoutSecs bounds --server-timeout-secs (a day).
const maxTimeoutSecs = 24 * 60 * 60

// LongHelp describes the proxy for both commands.
const LongHelp = "Runs an MCP server on stdin and stdout (JSON-RPC, one message per line) for an MCP\n" +
	"client such as Claude Code or Codex, and forwards its tool calls over HTTP to the\n" +
	"memsvc server at --server-url. It never opens a data directory or reads a\n" +
	"configuration file. stdout carries only MCP messages; logs go to stderr.\n" +
	"The server may be down when the proxy starts: each tool call says so until it is\n" +
	"back. The proxy exits when stdin closes.\n\n" +
	"The API key comes from --server-api-key or " + EnvAPIKey + " (prefer the\n" +
	"environment: command lines are visible to other users). A key is only sent over\n" +
	"https, or over http to a loopback address. MEMSVC_SERVER_URL and the memsvc\n" +
	"configuration are not read: everything the proxy needs is on its command line.\n" +
	"Every tool acts in the namespace of --namespace (or " + cli.EnvNamespace + "); without\n" +
	"one, in the server's default namespace, or the only one the API key is bound to.\n" +
	"The export tool writes archives only into --export-dir, by file name.\n\n" +
	"Examples:\n" +
	"  memsvc-mcp --server-url http://127.0.0.1:8420\n" +
	"  " + EnvAPIKey + "=... memsvc-mcp --server-url https://memory.example.com\n" +
	"  memsvc-mcp --server-url http://127.0.0.1:8420 --namespace my-project\n" +
	"  claude mcp add memsvc -- memsvc-mcp --server-url http://127.0.0.1:8420"

// Main runs memsvc-mcp with the process's arguments and returns its
// exit code.
func Main() int { return cli.Main(Run) }

// Run executes the command line args and returns the exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, environ []string) int {
	var f Flags
	fs := ff.NewFlagSet("memsvc-mcp")
	f.RegisterURL(fs)
	f.Register(fs)
	version := fs.BoolLong("version", "print the version and exit")
	root := &ff.Command{
		Name:      "memsvc-mcp",
		Usage:     "memsvc-mcp --server-url URL [--server-api-key KEY] [--namespace NAME] [--server-timeout-secs SECONDS] [--export-dir DIR]",
		ShortHelp: "MCP stdio proxy to a running memsvc server",
		LongHelp:  LongHelp,
		Flags:     fs,
		Exec: func(ctx context.Context, args []string) error {
			if *version {
				_, err := fmt.Fprintf(stdout, "memsvc-mcp %s\n", cli.Version)
				return err
			}
			if len(args) > 0 {
				return cli.Usagef("unexpected argument %q: memsvc-mcp takes flags only", args[0])
			}
			return f.Serve(ctx, stdin, stdout, stderr, environ, cli.Version)
		},
	}
	return cli.Run(ctx, root, args, stderr)
}

// Flags are the proxy's command-line flags.
type Flags struct {
	ServerURL   string
	APIKey      string
	TimeoutSecs uint
	LogLevel    string
	ExportDir   string
	Namespace   string

	timeout interface{ IsSet() bool }
}

// RegisterURL adds --server-url to fs. `memsvc mcp` does not: it uses
// memsvc's global --server-url.
func (f *Flags) RegisterURL(fs *ff.FlagSet) {
	fs.StringVar(&f.ServerURL, 0, "server-url", "", "URL of the running memsvc server, e.g. http://127.0.0.1:8420 (required)")
}

// Register adds the other flags to fs.
func (f *Flags) Register(fs *ff.FlagSet) {
	fs.StringVar(&f.APIKey, 0, "server-api-key", "", "API key for the server (default: $"+EnvAPIKey+")")
	timeout := ffval.NewValue(&f.TimeoutSecs)
	f.timeout = timeout
	if _, err := fs.AddFlag(ff.FlagConfig{
		LongName:    "server-timeout-secs",
		Value:       timeout,
		Placeholder: "SECONDS",
		NoDefault:   true,
		Usage:       "give up on a server call after this many seconds, at least 1 (default: no limit)",
	}); err != nil {
		panic(err) // a programming error: the flag set already has it
	}
	fs.StringVar(&f.LogLevel, 0, "log-level", "info", "least severe stderr log level: debug, info, warn or error")
	fs.StringVar(&f.Namespace, 0, "namespace", "", "namespace every tool acts in (default: $"+cli.EnvNamespace+", else the server's default)")
	fs.StringVar(&f.ExportDir, 0, "export-dir", "", "the only directory the export tool writes archives into (default: $XDG_DATA_HOME/memsvc/exports, else ~/.local/share/memsvc/exports)")
}

// Options checks the flags and returns the proxy's options. Every
// problem is a usage error (exit 2) that says how to fix it.
func (f *Flags) Options(environ []string) (mcpproxy.Options, error) {
	var opts mcpproxy.Options
	raw := strings.TrimSpace(f.ServerURL)
	if raw == "" {
		return opts, cli.Usagef("--server-url is required: the URL of the running memsvc server, e.g. --server-url http://127.0.0.1:8420 (start one with `memsvc serve`)")
	}
	u, err := client.ParseBaseURL(raw)
	if err != nil {
		return opts, cli.Usagef("--server-url: %v", err)
	}
	opts.ServerURL = u.String()

	source := "--server-api-key"
	key := strings.TrimSpace(f.APIKey)
	if key == "" {
		source = EnvAPIKey
		key = strings.TrimSpace(env(environ, EnvAPIKey))
	}
	if key != "" {
		if _, err := client.New(opts.ServerURL, client.Options{APIKey: key}); err != nil {
			return opts, cli.Usagef("%v: the API key (from %s) would cross the network in plaintext; use an https:// URL, or a loopback address such as http://127.0.0.1:8420 when the server runs on this machine", err, source)
		}
		opts.APIKey = key
	}

	if f.timeout != nil && f.timeout.IsSet() {
		if f.TimeoutSecs < 1 || f.TimeoutSecs > maxTimeoutSecs {
			return opts, cli.Usagef("--server-timeout-secs %d: want 1 to %d seconds (omit the flag for no limit)", f.TimeoutSecs, maxTimeoutSecs)
		}
		opts.Timeout = time.Duration(f.TimeoutSecs) * time.Second
	}

	ns, err := cli.Namespace(f.Namespace, environ)
	if err != nil {
		return opts, err
	}
	opts.Namespace = ns

	switch f.LogLevel {
	case "trace", "debug", "info", "warn", "error":
	default:
		return opts, cli.Usagef("--log-level %q: want debug, info, warn or error", f.LogLevel)
	}

	opts.ExportDir = mcpproxy.DefaultExportDir(func(k string) string { return env(environ, k) })
	if d := strings.TrimSpace(f.ExportDir); d != "" {
		abs, err := filepath.Abs(d)
		if err != nil {
			return opts, cli.Usagef("--export-dir %q: %v", f.ExportDir, err)
		}
		opts.ExportDir = abs
	}
	return opts, nil
}

// Serve checks the flags and runs the proxy on stdin and stdout until
// stdin closes or ctx is done; logs go to stderr.
func (f *Flags) Serve(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, environ []string, version string) error {
	opts, err := f.Options(environ)
	if err != nil {
		return err
	}
	opts.Version = version
	opts.Logger = cli.NewLogger(stderr, f.LogLevel, "pretty")
	return mcpproxy.Run(ctx, stdin, stdout, stderr, opts)
}

func env(environ []string, name string) string { return cli.Getenv(environ, name) }
