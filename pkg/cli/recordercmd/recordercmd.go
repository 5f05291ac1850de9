// Package recordercmd is the `memsvc-recorder` command: it turns
// coding-agent events into raw journal entries on a running memsvc server,
// redacting secrets first and spooling what cannot be sent (see
// pkg/recorder).
//
// Exit codes: 0 success, including runs whose batches were spooled because
// the server was unreachable, rate limiting or failing; 1 the command ran
// and failed (bad URL, non-private spool directory, rejected input lines,
// the server refused the API key, doctor found failing checks, install-hook
// refused to overwrite); 2 the command line was wrong. `hook` always exits
// 0: an agent may treat a hook's exit status as a verdict on its action.
package recordercmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/peterbourgon/ff/v4"

	"memsvc.dev/memsvc/pkg/cli"
)

// DefaultServerURL is where the recorder looks for the server when neither
// --server-url nor MEMSVC_SERVER_URL says otherwise.
const DefaultServerURL = "http://127.0.0.1:8420"

// Main runs memsvc-recorder with the process's arguments and returns its
// exit code.
func Main() int { return cli.Main(Run) }

// Run executes the command line args and returns the exit code. Reports go
// to stdout; logs, warnings and errors to stderr.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, environ []string) int {
	r := &root{stdin: stdin, stdout: stdout, stderr: stderr, environ: environ}
	cmd := r.command()
	code := cli.Run(ctx, cmd, args, stderr)
	if code != cli.ExitOK && (cmd.GetSelected() == r.hook || firstWord(args) == "hook") {
		// Whatever went wrong, the agent must not see a failure: Claude
		// Code, for one, treats exit status 2 of a PreToolUse hook as "block
		// this tool call".
		fmt.Fprintln(stderr, "memsvc-recorder hook: exiting 0 so that the agent is not affected")
		return cli.ExitOK
	}
	return code
}

func firstWord(args []string) string {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// root holds what the subcommands share.
type root struct {
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer
	environ []string

	flags *ff.FlagSet
	hook  *ff.Command
}

func (r *root) command() *ff.Command {
	r.flags = ff.NewFlagSet("memsvc-recorder")
	cmd := &ff.Command{
		Name:      "memsvc-recorder",
		Usage:     "memsvc-recorder <COMMAND> [FLAGS]",
		ShortHelp: "record coding-agent events into a memsvc raw journal",
		LongHelp: "memsvc-recorder reads Capture Events (one JSON object per line), coding-agent\n" +
			"hook payloads or agent session transcripts, redacts secrets, and posts them to a\n" +
			"running memsvc server as raw journal entries. What cannot be sent waits in a\n" +
			"private spool directory and is sent by the next run; every event carries a\n" +
			"client-generated id, so nothing is stored twice.\n\n" +
			"The API key comes only from the environment variable MEMSVC_SERVER_API_KEY and\n" +
			"is never sent over plain http to a host that is not loopback.\n\n" +
			"Examples:\n" +
			"  echo '{\"session_id\":\"s1\",\"event_type\":\"user_message\",\"content\":\"hi\"}' | memsvc-recorder ingest\n" +
			"  memsvc-recorder doctor --server-url https://memsvc.example.com\n" +
			"  memsvc-recorder install-hook claude --server-url http://127.0.0.1:8420\n" +
			"  memsvc-recorder watch --agent claude",
		Flags: r.flags,
		Exec:  cli.RootExec("memsvc-recorder", nil, r.stdout),
	}
	r.hook = r.hookCmd()
	cmd.Subcommands = []*ff.Command{r.ingestCmd(), r.doctorCmd(), r.installHookCmd(), r.hook, r.flushCmd(), r.watchCmd()}
	return cmd
}

func (r *root) getenv(name string) string { return cli.Getenv(r.environ, name) }

// apiKey is MEMSVC_SERVER_API_KEY, trimmed; blank means none.
func (r *root) apiKey() string { return strings.TrimSpace(r.getenv("MEMSVC_SERVER_API_KEY")) }

// serverURL resolves --server-url, then MEMSVC_SERVER_URL, then the
// default.
func (r *root) serverURL(flag string) string {
	if s := strings.TrimSpace(flag); s != "" {
		return s
	}
	if s := strings.TrimSpace(r.getenv("MEMSVC_SERVER_URL")); s != "" {
		return s
	}
	return DefaultServerURL
}

// spoolDir resolves --spool-dir, then MEMSVC_RECORDER_SPOOL_DIR, then
// $HOME/.memsvc/recorder/spool; HOME is consulted only when needed.
func (r *root) spoolDir(flag string) (string, error) {
	if s := strings.TrimSpace(flag); s != "" {
		return s, nil
	}
	if s := strings.TrimSpace(r.getenv("MEMSVC_RECORDER_SPOOL_DIR")); s != "" {
		return s, nil
	}
	home := strings.TrimSpace(r.getenv("HOME"))
	if home == "" {
		home = strings.TrimSpace(r.getenv("USERPROFILE"))
	}
	if home == "" {
		return "", errors.New("no spool directory: pass --spool-dir, or set MEMSVC_RECORDER_SPOOL_DIR or HOME")
	}
	return filepath.Join(home, ".memsvc", "recorder", "spool"), nil
}

// namespace resolves --namespace, then MEMSVC_NAMESPACE; "" names none
// (the server's default, or the only namespace the API key is bound to).
// A malformed name is a usage error.
func (r *root) namespace(flag string) (string, error) {
	return cli.Namespace(flag, r.environ)
}

func (r *root) logger() *slog.Logger {
	level := strings.TrimSpace(r.getenv("MEMSVC_RECORDER_LOG_LEVEL"))
	return cli.NewLogger(r.stderr, level, "pretty")
}

const (
	serverURLUsage = "memsvc server URL (default " + DefaultServerURL + ", or MEMSVC_SERVER_URL)"
	spoolDirUsage  = "spool directory (default MEMSVC_RECORDER_SPOOL_DIR, else $HOME/.memsvc/recorder/spool)"
	namespaceUsage = "namespace to record into (default MEMSVC_NAMESPACE, else the server's default)"
)
