package recordercmd

import (
	"context"
	"fmt"
	"time"

	"github.com/peterbourgon/ff/v4"

	"memsvc.dev/memsvc/pkg/cli"
	"memsvc.dev/memsvc/pkg/recorder"
	"memsvc.dev/memsvc/pkg/spool"
)

// connFlags are the flags of the commands that record: where the server
// and the spool are. Whatever else selects where records go belongs here
// too, so that every recording command takes it the same way.
type connFlags struct {
	r         *root
	serverURL *string
	spoolDir  *string
}

func (r *root) addConnFlags(fs *ff.FlagSet) *connFlags {
	return &connFlags{
		r:         r,
		serverURL: fs.StringLong("server-url", "", serverURLUsage),
		spoolDir:  fs.StringLong("spool-dir", "", spoolDirUsage),
	}
}

// url is the server URL the flags and the environment select.
func (c *connFlags) url() string { return c.r.serverURL(*c.serverURL) }

// sender is the HTTP client for the server, each call bounded by timeout
// (0: the recorder's default).
func (c *connFlags) sender(timeout time.Duration) (recorder.Sender, error) {
	cl, err := recorder.NewClient(c.url(), recorder.ClientOptions{APIKey: c.r.apiKey(), Timeout: timeout})
	if err != nil {
		return nil, err // not a nil *client.Client in a non-nil interface
	}
	return cl, nil
}

// spool opens the spool directory.
func (c *connFlags) spool() (*spool.Dir, error) { return c.r.openSpool(*c.spoolDir) }

// defaultFlushWait bounds how long `flush` waits for another recorder that
// is flushing the same spool.
const defaultFlushWait = 10 * time.Second

func (r *root) flushCmd() *ff.Command {
	fs := ff.NewFlagSet("flush").SetParent(r.flags)
	conn := r.addConnFlags(fs)
	wait := fs.DurationLong("wait", defaultFlushWait, "longest wait for another recorder that is flushing the same spool")
	return &ff.Command{
		Name:      "flush",
		Usage:     "memsvc-recorder flush [--server-url URL] [--spool-dir DIR] [--wait DURATION]",
		ShortHelp: "send the spooled events to the server, oldest first",
		LongHelp: "Sends the pending spool files to the server, oldest first, including files queued\n" +
			"while it runs, and stops at the first failure that is not the file's own, so that\n" +
			"no event overtakes an earlier one. One recorder flushes a spool at a time: when\n" +
			"another is at it, flush waits for it (up to --wait) and then sends what is left.\n" +
			"The hook helper runs it in the background after `hook --queue-only`.\n\n" +
			"Exit codes as for ingest: 0 also when the server is unreachable, rate limiting or\n" +
			"failing (the files stay for the next run); 1 when it refuses the API key.\n\n" +
			"Examples:\n" +
			"  memsvc-recorder flush\n" +
			"  MEMSVC_SERVER_API_KEY=... memsvc-recorder flush --server-url https://memsvc.example.com",
		Flags: fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return cli.Usagef("flush takes no arguments")
			}
			if *wait < 0 {
				return cli.Usagef("--wait: %s must not be negative", *wait)
			}
			sender, err := conn.sender(0)
			if err != nil {
				return err
			}
			dir, err := conn.spool()
			if err != nil {
				return err
			}
			rec, err := recorder.New(recorder.Config{Sender: sender, Spool: dir, Logger: r.logger()})
			if err != nil {
				return err
			}
			err = rec.FlushSpoolWait(ctx, *wait)
			fmt.Fprintf(r.stderr, "memsvc-recorder flush: %s\n", rec.Stats())
			return err
		},
	}
}
