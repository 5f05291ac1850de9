// Package admincmd is the `memsvc-admin` command: offline and backup
// tooling. It checks archives and audit logs on disk and talks to a running
// server only through its HTTP API (pkg/client); it never opens a data
// directory's database and never links the storage engine (a test in
// cmd/memsvc-admin enforces that).
//
// Commands print their results as JSON on stdout; progress, warnings and
// errors go to stderr. Exit codes follow pkg/cli: 0 success, 1 the command
// ran and found a problem or failed, 2 the command line was wrong.
package admincmd

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/peterbourgon/ff/v4"

	"memsvc.dev/memsvc/pkg/cli"
	"memsvc.dev/memsvc/pkg/client"
)

// Main runs memsvc-admin with the process's arguments and returns its
// exit code.
func Main() int { return cli.Main(Run) }

// Run executes the command line args and returns the exit code. environ
// supplies MEMSVC_SERVER_URL and MEMSVC_SERVER_API_KEY.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, environ []string) int {
	r := newRoot(stdin, stdout, stderr, environ, time.Now)
	return cli.Run(ctx, r.cmd, args, stderr)
}

// root holds what every command shares: the streams, the environment, the
// clock and the global flags.
type root struct {
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer
	environ []string
	now     func() time.Time
	// terminal reports whether a stream is a terminal (cli.IsTerminal;
	// tests replace it).
	terminal func(any) bool

	quiet   bool
	version bool
	flags   *ff.FlagSet
	cmd     *ff.Command
}

func newRoot(stdin io.Reader, stdout, stderr io.Writer, environ []string, now func() time.Time) *root {
	r := &root{stdin: stdin, stdout: stdout, stderr: stderr, environ: environ, now: now, terminal: cli.IsTerminal}
	r.flags = ff.NewFlagSet("memsvc-admin")
	r.flags.BoolVar(&r.quiet, 'q', "quiet", "no progress line or informational messages on stderr (errors and warnings still appear)")
	r.flags.BoolVar(&r.version, 'V', "version", "print the version and exit")
	r.cmd = &ff.Command{
		Name:      "memsvc-admin",
		Usage:     "memsvc-admin [--quiet] <COMMAND> [FLAGS] [ARGS]",
		ShortHelp: "offline and backup tooling for memsvc",
		LongHelp: "Checks CMA archives and audit logs on disk, and backs up and restores a running\n" +
			"memsvc server through its HTTP API. It never opens a data directory's database.\n" +
			"Results are JSON on stdout; progress and errors go to stderr. Exit codes: 0 ok,\n" +
			"1 a problem was found or the command failed, 2 the command line was wrong.\n\n" +
			"The API key for --server-url comes from MEMSVC_SERVER_API_KEY; the URL may also\n" +
			"come from MEMSVC_SERVER_URL.\n\n" +
			"Examples:\n" +
			"  memsvc-admin archive verify backup.cma\n" +
			"  memsvc-admin archive inspect backup.cma\n" +
			"  memsvc-admin audit verify --data-dir /var/lib/memsvc/data\n" +
			"  memsvc-admin backup --server-url http://127.0.0.1:8420 --dir /var/backups/memsvc --keep 14\n" +
			"  memsvc-admin restore --server-url http://127.0.0.1:8420 memsvc-20261101T020000Z.cma",
		Flags: r.flags,
		Exec:  cli.RootExec("memsvc-admin", &r.version, r.stdout),
	}
	r.cmd.Subcommands = []*ff.Command{
		r.archiveCmd(),
		r.auditCmd(),
		r.backupCmd(),
		r.restoreCmd(),
	}
	return r
}

// subFlags returns a flag set for a command that also accepts the global
// flags.
func (r *root) subFlags(name string) *ff.FlagSet {
	return ff.NewFlagSet(name).SetParent(r.flags)
}

// group returns a command that only holds subcommands.
func (r *root) group(name, short, long string, subs ...*ff.Command) *ff.Command {
	return &ff.Command{
		Name:        name,
		Usage:       "memsvc-admin " + name + " <COMMAND> [FLAGS] [ARGS]",
		ShortHelp:   short,
		LongHelp:    long,
		Flags:       r.subFlags(name),
		Subcommands: subs,
		Exec:        cli.GroupExec(name),
	}
}

func (r *root) env(name string) string { return cli.Getenv(r.environ, name) }

// client returns an HTTP client for --server-url (or MEMSVC_SERVER_URL)
// with the API key from MEMSVC_SERVER_API_KEY.
func (r *root) client(serverURL string, timeout time.Duration) (*client.Client, string, error) {
	url := strings.TrimSpace(serverURL)
	if url == "" {
		url = strings.TrimSpace(r.env("MEMSVC_SERVER_URL"))
	}
	if url == "" {
		return nil, "", cli.Usagef("--server-url is required (or set MEMSVC_SERVER_URL)")
	}
	if timeout < 0 {
		return nil, "", cli.Usagef("--timeout %v: must not be negative", timeout)
	}
	c, err := client.New(url, client.Options{
		APIKey:    strings.TrimSpace(r.env("MEMSVC_SERVER_API_KEY")),
		Timeout:   timeout,
		UserAgent: "memsvc-admin/" + cli.Version,
	})
	if err != nil {
		return nil, "", cli.Usagef("--server-url: %v", err)
	}
	return c, url, nil
}

// info prints an informational line on stderr unless --quiet.
func (r *root) info(format string, args ...any) {
	if !r.quiet {
		fmt.Fprintf(r.stderr, format+"\n", args...)
	}
}

// warn prints a warning on stderr, even with --quiet.
func (r *root) warn(format string, args ...any) {
	fmt.Fprintf(r.stderr, "warning: "+format+"\n", args...)
}

// bar returns the progress line of long work: shown on stderr only when
// stdout and stderr are both terminals and --quiet was not given; nil
// (which draws nothing) otherwise, so cron jobs and pipes see no progress.
func (r *root) bar(label string, total int64) *cli.Progress {
	show := !r.quiet && r.terminal(r.stdout) && r.terminal(r.stderr)
	return cli.NewProgress(r.stderr, show, cli.ProgressOptions{Label: label, Unit: cli.Bytes, Total: total, Now: r.now})
}
