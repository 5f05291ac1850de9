package servercmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/peterbourgon/ff/v4"

	"memsvc.dev/memsvc/pkg/cli"
	"memsvc.dev/memsvc/pkg/memory"
)

func (r *root) recallCmd() *ff.Command {
	fs := r.subFlags("recall")
	limit := fs.UintLong("limit", 10, "maximum number of memories")
	mode := fs.StringLong("mode", "", "human (fidelity-weighted, faded text masked) or perfect (exact); default: the mode set with set-mode, human unless changed")
	storesFlag := fs.StringLong("stores", "", "comma-separated stores to search (default: all)")
	asJSON := jsonFlag(fs)
	return &ff.Command{
		Name:      "recall",
		Usage:     "memsvc recall [QUERY] [--limit N] [--mode human|perfect] [--stores LIST] [--json]",
		ShortHelp: "find memories by text (recent ones without a query)",
		LongHelp: "Ranks memories against QUERY (stemmed full-text search over content, summary\n" +
			"and meta-memory, plus spreading activation along associations) and prints them:\n" +
			"store, relevance, fidelity, creation time, id and text (--json: the API's answer).\n" +
			"Without QUERY, lists the most recent memories. Recalling a memory reinforces it.\n\n" +
			"Examples:\n" +
			"  memsvc recall \"why did we choose pebble\"\n" +
			"  memsvc recall deploy --limit 3 --mode perfect",
		Flags: fs,
		Exec: func(ctx context.Context, args []string) error {
			req := memory.DefaultRecallQueryRequest()
			var err error
			if req.Cue.Text, err = queryArg(args); err != nil {
				return err
			}
			if req.Limit, err = uint32Flag("--limit", *limit); err != nil {
				return err
			}
			if *mode != "" {
				m, err := memory.ParseRecallMode(norm(*mode))
				if err != nil {
					return cli.Usagef("--mode: %v", err)
				}
				req.RecallMode = &m
			}
			if req.Stores, err = parseStores("--stores", *storesFlag); err != nil {
				return err
			}
			return r.withService(ctx, func(ctx context.Context, svc memory.Service) error {
				resp, err := svc.RecallQuery(ctx, &req)
				return printAnswer(r.stdout, *asJSON, resp, err, printRecall)
			})
		},
	}
}

// parseStores reads a comma list of store names; empty means all (nil).
func parseStores(flag, s string) ([]memory.StoreType, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []memory.StoreType
	for _, p := range strings.Split(s, ",") {
		if strings.TrimSpace(p) == "" {
			continue
		}
		st, err := memory.ParseStoreType(norm(p))
		if err != nil {
			return nil, cli.Usagef("%s: %v", flag, err)
		}
		out = append(out, st)
	}
	return out, nil
}

func (r *root) setModeCmd() *ff.Command {
	fs := r.subFlags("set-mode")
	scope := fs.StringLong("scope", "", "comma-separated stores the mode applies to (default: all)")
	asJSON := fs.BoolLong("json", "print the mode request that was applied as JSON (the API answers it with no body)")
	return &ff.Command{
		Name:      "set-mode",
		Usage:     "memsvc set-mode <human|perfect> [--scope LIST]",
		ShortHelp: "set the recall mode (persisted)",
		LongHelp: "Sets the recall mode of the stores in scope. It is saved in the data directory\n" +
			"and applies to every recall that does not name a mode itself.\n\n" +
			"Examples:\n" +
			"  memsvc set-mode perfect\n" +
			"  memsvc set-mode human --scope episodic,emotional",
		Flags: fs,
		Exec: func(ctx context.Context, args []string) error {
			arg, err := oneArg(args, "MODE")
			if err != nil {
				return err
			}
			m, err := memory.ParseRecallMode(norm(arg))
			if err != nil {
				return &cli.UsageError{Err: err}
			}
			req := &memory.SetModeRequest{Mode: m}
			if req.Scope, err = parseStores("--scope", *scope); err != nil {
				return err
			}
			return r.withWritingService(ctx, func(ctx context.Context, svc memory.Service) error {
				if err := svc.SetMode(ctx, req); err != nil {
					return err
				}
				if *asJSON {
					return cli.PrintJSON(r.stdout, req)
				}
				where := "all stores"
				if len(req.Scope) > 0 {
					names := make([]string, len(req.Scope))
					for i, st := range req.Scope {
						names[i] = st.String()
					}
					where = strings.Join(names, ", ")
				}
				_, err := fmt.Fprintf(r.stdout, "Recall mode set to %s for %s\n", m, where)
				return err
			})
		},
	}
}
