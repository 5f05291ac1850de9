// Package mcpcmd is the `memsvc-mcp` command (also `memsvc mcp`): a stdio
// MCP server that forwards tool calls to a running memsvc server.
package mcpcmd

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/peterbourgon/ff/v4"

	"memsvc.dev/memsvc/pkg/cli"
)

// Main runs memsvc-mcp with the process's arguments and returns its
// exit code.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}

// Run executes the command line args and returns the exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := &ff.Command{
		Name:      "memsvc-mcp",
		Usage:     "memsvc-mcp <COMMAND> [FLAGS]",
		ShortHelp: "MCP stdio proxy to a running memsvc server",
		LongHelp:  "The MCP proxy is being built; this release only prints this help.",
		Flags:     ff.NewFlagSet("memsvc-mcp"),
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return cli.Usagef("unknown command %q", args[0])
			}
			return ff.ErrHelp
		},
	}
	return cli.Run(ctx, root, args, stderr)
}
