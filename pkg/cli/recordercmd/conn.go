package recordercmd

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/peterbourgon/ff/v4"

	"memsvc.dev/memsvc/pkg/cli"
	"memsvc.dev/memsvc/pkg/recorder"
	"memsvc.dev/memsvc/pkg/spool"
)

// connFlags are the flags of the commands that record: where the server
// and the spool are, and the namespace the records go to. Whatever else
// selects where records go belongs here too, so that every recording
// command takes it the same way.
type connFlags struct {
	r         *root
	serverURL *string
	spoolDir  *string
	namespace *string
}

func (r *root) addConnFlags(fs *ff.FlagSet) *connFlags {
	return &connFlags{
		r:         r,
		serverURL: fs.StringLong("server-url", "", serverURLUsage),
		spoolDir:  fs.StringLong("spool-dir", "", spoolDirUsage),
		namespace: fs.StringLong("namespace", "", namespaceUsage),
	}
}

// url is the server URL the flags and the environment select.
func (c *connFlags) url() string { return c.r.serverURL(*c.serverURL) }

// ns is the namespace the flag and the environment select ("" for none:
// see root.namespace).
func (c *connFlags) ns() (string, error) { return c.r.namespace(*c.namespace) }

// sender is the HTTP client for the server, sending into namespace ns,
// each call bounded by timeout (0: the recorder's default).
func (c *connFlags) sender(ns string, timeout time.Duration) (recorder.Sender, error) {
	cl, err := recorder.NewClient(c.url(), recorder.ClientOptions{APIKey: c.r.apiKey(), Namespace: ns, Timeout: timeout})
	if err != nil {
		return nil, err // not a nil *client.Client in a non-nil interface
	}
	return cl, nil
}

// spool opens the spool of namespace ns (see root.openSpool).
func (c *connFlags) spool(ns string) (*spool.Dir, error) { return c.r.openSpool(*c.spoolDir, ns) }

// newRecorder makes the recorder of a command that sends: cfg with the
// server's client (sender) and the spool of namespace ns.
func (c *connFlags) newRecorder(ns string, cfg recorder.Config) (*recorder.Recorder, error) {
	sender, err := c.sender(ns, 0)
	if err != nil {
		return nil, err
	}
	if cfg.Spool, err = c.spool(ns); err != nil {
		return nil, err
	}
	cfg.Sender = sender
	return recorder.New(cfg)
}

// warnPlainHTTP warns on log when journal text would cross to another
// host over plain http.
func (c *connFlags) warnPlainHTTP(log *slog.Logger) {
	if url := c.url(); recorder.PlainHTTPRemote(url) {
		log.Warn("sending journal text over plain http to another host; use https", "server_url", url)
	}
}

// defaultFlushWait bounds how long `flush` waits for another recorder that
// is flushing the same spool.
const defaultFlushWait = 10 * time.Second

func (r *root) flushCmd() *ff.Command {
	fs := ff.NewFlagSet("flush").SetParent(r.flags)
	conn := r.addConnFlags(fs)
	wait := fs.DurationLong("wait", defaultFlushWait, "longest wait for another recorder that is flushing the same spool")
	return &ff.Command{
		Name:      "flush",
		Usage:     "memsvc-recorder flush [--server-url URL] [--spool-dir DIR] [--namespace NAME] [--wait DURATION]",
		ShortHelp: "send the spooled events to the server, oldest first",
		LongHelp: "Sends the pending spool files to the server, oldest first, including files queued\n" +
			"while it runs, and stops at the first failure that is not the file's own, so that\n" +
			"no event overtakes an earlier one. One recorder flushes a spool at a time: when\n" +
			"another is at it, flush waits for it (up to --wait) and then sends what is left.\n" +
			"The hook helper runs it in the background after `hook --queue-only`.\n\n" +
			"It sends one namespace's queue, into that namespace: that of --namespace (or\n" +
			"MEMSVC_NAMESPACE, which the hook helper sets), kept in <spool-dir>/namespaces/<name>;\n" +
			"without one, the queue of the spool directory itself, which goes to the server's\n" +
			"default namespace (or the only one the API key is bound to).\n\n" +
			"Exit codes as for ingest: 0 also when the server is unreachable, rate limiting or\n" +
			"failing (the files stay for the next run); 1 when it refuses the API key.\n\n" +
			"Examples:\n" +
			"  memsvc-recorder flush\n" +
			"  memsvc-recorder flush --namespace my-app\n" +
			"  MEMSVC_SERVER_API_KEY=... memsvc-recorder flush --server-url https://memsvc.example.com",
		Flags: fs,
		Exec: cli.NoArgs("flush takes no arguments", func(ctx context.Context) error {
			if *wait < 0 {
				return cli.Usagef("--wait: %s must not be negative", *wait)
			}
			ns, err := conn.ns()
			if err != nil {
				return err
			}
			rec, err := conn.newRecorder(ns, recorder.Config{Logger: r.logger()})
			if err != nil {
				return err
			}
			err = rec.FlushSpoolWait(ctx, *wait)
			fmt.Fprintf(r.stderr, "memsvc-recorder flush: %s\n", rec.Stats())
			return err
		}),
	}
}
