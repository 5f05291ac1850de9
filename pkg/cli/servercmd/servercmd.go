// Package servercmd is the `memsvc` command: the server and its data
// commands. Data commands open the data directory themselves (the embedded
// engine); only one process may hold a directory at a time.
package servercmd

import (
	"context"
	"io"
	"strings"

	"github.com/peterbourgon/ff/v4"

	"memsvc.dev/memsvc/pkg/cli"
	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/config"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/server"
)

// Main runs memsvc with the process's arguments and returns its exit code.
func Main() int { return cli.Main(Run) }

// Run executes the command line args and returns the exit code. Command
// output goes to stdout; logs, warnings and errors go to stderr.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, environ []string) int {
	r := newRoot(stdin, stdout, stderr, environ)
	return cli.Run(ctx, r.cmd, args, stderr)
}

// root holds what every subcommand shares: the streams and the global
// flags.
type root struct {
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer
	environ []string
	// terminal reports whether a stream is a terminal (cli.IsTerminal;
	// tests replace it to answer prompts).
	terminal func(any) bool

	dataDir    string
	configPath string
	serverURL  string
	namespace  string
	version    bool

	flags *ff.FlagSet
	cmd   *ff.Command
}

func newRoot(stdin io.Reader, stdout, stderr io.Writer, environ []string) *root {
	r := &root{stdin: stdin, stdout: stdout, stderr: stderr, environ: environ, terminal: cli.IsTerminal}
	r.flags = ff.NewFlagSet("memsvc")
	r.flags.StringVar(&r.dataDir, 0, "data-dir", "", "data directory (default `./data`, or data_dir from the config)")
	r.flags.StringVar(&r.configPath, 0, "config", "", "TOML configuration file (see deploy-docs/memsvc.example.toml)")
	r.flags.StringVar(&r.serverURL, 0, "server-url", "", "send data commands to a running server instead of opening the data directory (env MEMSVC_SERVER_URL; API key from MEMSVC_SERVER_API_KEY)")
	r.flags.StringVar(&r.namespace, 0, "namespace", "", "namespace data commands act in (env MEMSVC_NAMESPACE; default: default, or the only namespace the server's API key is bound to)")
	r.flags.BoolVar(&r.version, 'V', "version", "print the version and exit")
	r.cmd = &ff.Command{
		Name:      "memsvc",
		Usage:     "memsvc [--data-dir DIR] [--config FILE] <COMMAND> [FLAGS] [ARGS]",
		ShortHelp: "memory database for AI agents",
		LongHelp: "memsvc keeps curated memories and a raw journal for AI agents.\n\n" +
			"Examples:\n" +
			"  memsvc store \"the deploy key rotates on Fridays\" --store semantic\n" +
			"  memsvc store-raw \"user asked about rate limits\" --session-id s1\n" +
			"  memsvc recall-raw --session-id s1\n" +
			"  memsvc inspect 0190b6a4-7c1e-7a55-9f1a-5f2b3c4d5e6f\n" +
			"  memsvc --namespace my-project recall \"deploy key\"\n" +
			"  memsvc stats",
		Flags: r.flags,
		Exec:  cli.RootExec("memsvc", &r.version, r.stdout),
	}
	r.cmd.Subcommands = []*ff.Command{
		r.serveCmd(),
		r.storeCmd(),
		r.storeRawCmd(),
		r.recallCmd(),
		r.recallRawCmd(),
		r.inspectCmd(),
		r.statsCmd(),
		r.forgetCmd(),
		r.setModeCmd(),
		r.decayTickCmd(),
		r.dreamTickCmd(),
		r.consolidateCmd(),
		r.exportCmd(),
		r.importCmd(),
		r.namespacesCmd(),
		r.namespaceCmd(),
		r.healthcheckCmd(),
		r.auditVerifyCmd(),
		r.migrateCmd(),
		r.mcpCmd(),
	}
	return r
}

// subFlags returns a flag set for a subcommand that also accepts the global
// flags.
func (r *root) subFlags(name string) *ff.FlagSet {
	return ff.NewFlagSet(name).SetParent(r.flags)
}

// loadConfig reads the configuration with the global flags (and any
// command flags) applied.
func (r *root) loadConfig(extra ...config.Override) (*config.Config, error) {
	opts := config.LoadOptions{File: r.configPath, Environ: r.environ}
	if r.dataDir != "" {
		opts.Overrides = append(opts.Overrides, config.Override{Key: "data_dir", Value: r.dataDir, Flag: "--data-dir"})
	}
	opts.Overrides = append(opts.Overrides, extra...)
	return config.Load(opts)
}

func (r *root) env(name string) string { return cli.Getenv(r.environ, name) }

// withService runs fn against a running server when --server-url (or
// MEMSVC_SERVER_URL) is given, and otherwise against the engine over the
// data directory (server.OpenLocal), which must already hold a database.
// fn gets the context to call the service with: it names the namespace of
// --namespace (or MEMSVC_NAMESPACE), which a client sends to the server
// and the engine acts in.
func (r *root) withService(ctx context.Context, fn func(context.Context, memory.Service) error) error {
	return r.serviceFor(ctx, false, fn)
}

// withWritingService is withService for the commands that add data: they
// may create the data directory's database.
func (r *root) withWritingService(ctx context.Context, fn func(context.Context, memory.Service) error) error {
	return r.serviceFor(ctx, true, fn)
}

func (r *root) serviceFor(ctx context.Context, create bool, fn func(context.Context, memory.Service) error) error {
	ns, err := r.namespaceOf()
	if err != nil {
		return err
	}
	ctx = memory.WithNamespace(ctx, ns)
	url := r.serverURL
	if url == "" {
		url = strings.TrimSpace(r.env("MEMSVC_SERVER_URL"))
	}
	if url != "" {
		c, err := client.New(url, client.Options{APIKey: strings.TrimSpace(r.env("MEMSVC_SERVER_API_KEY")), Namespace: ns})
		if err != nil {
			return err
		}
		return fn(ctx, c)
	}
	return r.withLocal(ctx, create, func(l *server.Local) error { return fn(ctx, l.Service()) })
}

// namespaceOf is the namespace of --namespace, else of MEMSVC_NAMESPACE,
// else "" (none named: the default namespace, or the one the server's key
// is bound to). A malformed name is a usage error.
func (r *root) namespaceOf() (string, error) {
	return cli.Namespace(r.namespace, r.environ)
}

// withLocal opens the data directory for fn and closes it afterwards.
func (r *root) withLocal(ctx context.Context, create bool, fn func(*server.Local) error) error {
	cfg, err := r.loadConfig()
	if err != nil {
		return err
	}
	log := cli.NewLogger(r.stderr, cfg.Log.Level, cfg.Log.Format)
	l, err := server.OpenLocal(ctx, cfg, server.LocalOptions{Logger: log, Create: create})
	if err != nil {
		return err
	}
	runErr := fn(l)
	if err := l.Close(); err != nil && runErr == nil {
		runErr = err
	}
	return runErr
}
