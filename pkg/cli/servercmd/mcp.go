package servercmd

import (
	"context"
	"fmt"

	"github.com/peterbourgon/ff/v4"

	"memsvc.dev/memsvc/pkg/cli"
	"memsvc.dev/memsvc/pkg/cli/mcpcmd"
)

// mcpCmd is `memsvc mcp`, the same proxy as memsvc-mcp. It opens no data
// directory and loads no configuration: everything it needs is in its
// flags, MEMSVC_SERVER_API_KEY and MEMSVC_NAMESPACE, so its flag set has
// only the proxy's flags (memsvc's global flags are not offered, and
// --help lists only what the proxy reads). --server-url and --namespace
// may still come before "mcp", as memsvc's global flags;
// MEMSVC_SERVER_URL is not read: the proxy's server is always named
// explicitly.
func (r *root) mcpCmd() *ff.Command {
	fs := ff.NewFlagSet("mcp")
	var f mcpcmd.Flags
	f.RegisterURL(fs)
	f.Register(fs)
	return &ff.Command{
		Name:      "mcp",
		Usage:     "memsvc mcp --server-url URL [--server-api-key KEY] [--namespace NAME] [--server-timeout-secs SECONDS]",
		ShortHelp: "MCP stdio proxy to a running memsvc server",
		LongHelp:  mcpcmd.LongHelp,
		Flags:     fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return cli.Usagef("unexpected argument %q: memsvc mcp takes flags only", args[0])
			}
			if f.ServerURL == "" {
				f.ServerURL = r.serverURL
			}
			if f.Namespace == "" {
				f.Namespace = r.namespace
			}
			if r.dataDir != "" || r.configPath != "" {
				fmt.Fprintln(r.stderr, "memsvc mcp: ignoring --data-dir and --config; the proxy only talks to the server at --server-url")
			}
			return f.Serve(ctx, r.stdin, r.stdout, r.stderr, r.environ, cli.Version)
		},
	}
}
