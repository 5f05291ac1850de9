// Package admincmd is the `memsvc-admin` command: offline and backup
// tooling (audit log verification, archive checks) that never opens the
// data directory's database.
package admincmd

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/peterbourgon/ff/v4"

	"memsvc.dev/memsvc/pkg/cli"
)

// Main runs memsvc-admin with the process's arguments and returns its
// exit code.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}

// Run executes the command line args and returns the exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := &ff.Command{
		Name:      "memsvc-admin",
		Usage:     "memsvc-admin <COMMAND> [FLAGS]",
		ShortHelp: "offline and backup tooling for memsvc",
		LongHelp: "Commands for audit verification and archive checks are being built; this\n" +
			"release only prints this help.",
		Flags: ff.NewFlagSet("memsvc-admin"),
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return cli.Usagef("unknown command %q", args[0])
			}
			return ff.ErrHelp
		},
	}
	return cli.Run(ctx, root, args, stderr)
}
