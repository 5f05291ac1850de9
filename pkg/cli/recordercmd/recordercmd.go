// Package recordercmd is the `memsvc-recorder` command: it turns
// coding-agent hook events into raw journal entries on a running memsvc
// server, redacting secrets first.
package recordercmd

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/peterbourgon/ff/v4"

	"memsvc.dev/memsvc/pkg/cli"
)

// Main runs memsvc-recorder with the process's arguments and returns its
// exit code.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}

// Run executes the command line args and returns the exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := &ff.Command{
		Name:      "memsvc-recorder",
		Usage:     "memsvc-recorder <COMMAND> [FLAGS]",
		ShortHelp: "record coding-agent events into a memsvc raw journal",
		LongHelp: "Commands ingest, doctor and install-hook are being built; this release\n" +
			"only prints this help.",
		Flags: ff.NewFlagSet("memsvc-recorder"),
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return cli.Usagef("unknown command %q", args[0])
			}
			return ff.ErrHelp
		},
	}
	return cli.Run(ctx, root, args, stderr)
}
