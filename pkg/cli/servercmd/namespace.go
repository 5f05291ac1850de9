package servercmd

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/peterbourgon/ff/v4"

	"memsvc.dev/memsvc/pkg/cli"
	"memsvc.dev/memsvc/pkg/memory"
)

// namespacesCmd is `memsvc namespaces`.
func (r *root) namespacesCmd() *ff.Command {
	fs := r.subFlags("namespaces")
	asJSON := jsonFlag(fs)
	return &ff.Command{
		Name:      "namespaces",
		Usage:     "memsvc namespaces [--json]",
		ShortHelp: "list namespaces and their record counts",
		LongHelp: "Lists the namespaces that hold data, and default always, with their curated\n" +
			"records and raw journal entries (--json: the API's answer, with counts per\n" +
			"store). Through a server (--server-url) it lists the namespaces the API key may\n" +
			"see: for a key bound to namespaces, exactly those. --namespace does not apply.\n\n" +
			"Examples:\n" +
			"  memsvc namespaces\n" +
			"  memsvc --server-url http://127.0.0.1:8420 namespaces --json",
		Flags: fs,
		Exec: cli.NoArgs("namespaces takes no arguments", func(ctx context.Context) error {
			return r.withService(ctx, func(ctx context.Context, svc memory.Service) error {
				resp, err := svc.Namespaces(ctx)
				return printAnswer(r.stdout, *asJSON, resp, err, printNamespaces)
			})
		}),
	}
}

// printNamespaces lists namespaces as a table.
func printNamespaces(w io.Writer, resp *memory.NamespacesResponse) error {
	width := len("NAMESPACE")
	for _, n := range resp.Namespaces {
		width = max(width, len(n.Name))
	}
	var b strings.Builder
	const row = "%-*s %9s %11s\n"
	fmt.Fprintf(&b, row, width, "NAMESPACE", "RECORDS", "RAW ENTRIES")
	for _, n := range resp.Namespaces {
		fmt.Fprintf(&b, row, width, n.Name, cli.FormatCount(int64(n.TotalRecords)), cli.FormatCount(int64(n.RawJournalRecords)))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// namespaceCmd is `memsvc namespace`, which holds drop.
func (r *root) namespaceCmd() *ff.Command {
	fs := r.subFlags("namespace")
	cmd := &ff.Command{
		Name:      "namespace",
		Usage:     "memsvc namespace <drop> [FLAGS] [ARGS]",
		ShortHelp: "manage one namespace (drop)",
		LongHelp:  "Commands that act on one namespace as a whole. See memsvc namespaces to list them.",
		Flags:     fs,
		Exec:      cli.GroupExec("namespace"),
	}
	cmd.Subcommands = []*ff.Command{r.namespaceDropCmd(fs)}
	return cmd
}

// namespaceDropCmd is `memsvc namespace drop`.
func (r *root) namespaceDropCmd(parent *ff.FlagSet) *ff.Command {
	fs := ff.NewFlagSet("drop").SetParent(parent)
	confirm := fs.BoolLong("confirm", "confirm permanent deletion (required when not asked interactively)")
	asJSON := jsonFlag(fs)
	return &ff.Command{
		Name:      "drop",
		Usage:     "memsvc namespace drop <NAME> --confirm [--json]",
		ShortHelp: "delete a namespace and everything in it",
		LongHelp: "Deletes namespace NAME with every curated record, raw journal entry and setting\n" +
			"in it, for good; the deletion is audited. Without --confirm, asks on a terminal\n" +
			"and refuses otherwise (exit 2). NAME is the namespace to drop; --namespace does\n" +
			"not apply. Through a server, the API key must be allowed to use NAME.\n\n" +
			"Examples:\n" +
			"  memsvc namespace drop old-project --confirm\n" +
			"  memsvc --server-url http://127.0.0.1:8420 namespace drop scratch --confirm --json",
		Flags: fs,
		Exec: func(ctx context.Context, args []string) error {
			name, err := oneArg(args, "NAME")
			if err != nil {
				return err
			}
			if err := cli.CheckNamespace("NAME", name); err != nil {
				return err
			}
			if !*confirm {
				if ok, err := r.askConfirm(fmt.Sprintf("Permanently delete namespace %s and everything in it? [y/N] ", name), "delete", "deleted"); !ok {
					return err
				}
			}
			return r.withService(ctx, func(ctx context.Context, svc memory.Service) error {
				resp, err := svc.DropNamespace(ctx, &memory.DropNamespaceRequest{Name: name, Confirm: true})
				return printAnswer(r.stdout, *asJSON, resp, err, func(w io.Writer, resp *memory.DropNamespaceResponse) error {
					_, err := fmt.Fprintf(w, "Dropped namespace %s: %d record(s), %d raw entries deleted\n", resp.Name, resp.RecordsDeleted, resp.RawEntriesDeleted)
					return err
				})
			})
		},
	}
}
