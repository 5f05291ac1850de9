package admincmd

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/peterbourgon/ff/v4"

	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/cli"
)

func (r *root) auditCmd() *ff.Command {
	return r.group("audit", "check the audit log",
		"Reads memsvc's hash-chained audit log. Safe while the server runs: it only reads.",
		r.auditVerifyCmd())
}

// auditReport is the output of audit verify. On failure Entries,
// LastSequence and HeadHash describe the verified lines before the break.
type auditReport struct {
	Path         string `json:"path"`
	Entries      uint64 `json:"entries"`
	LastSequence uint64 `json:"last_sequence"`
	HeadHash     string `json:"head_hash"`
	OK           bool   `json:"ok"`
	TornTail     bool   `json:"torn_tail,omitempty"`
	Line         int    `json:"line,omitempty"`
	Sequence     uint64 `json:"expected_sequence,omitempty"`
	Fault        string `json:"fault,omitempty"`
	Reason       string `json:"reason,omitempty"`
}

func (r *root) auditVerifyCmd() *ff.Command {
	flags := r.subFlags("verify")
	path := flags.StringLong("path", "", "audit log to verify (default ./data/audit.jsonl, or audit.jsonl in --data-dir)")
	dataDir := flags.StringLong("data-dir", "", "data directory whose audit.jsonl to verify (the server's default log location)")
	return &ff.Command{
		Name:      "verify",
		Usage:     "memsvc-admin audit verify [--path FILE | --data-dir DIR]",
		ShortHelp: "verify the audit log's hash chain (JSON)",
		LongHelp: "Recomputes every entry's hash and checks the chain from the first line. Prints\n" +
			"path, entries, last_sequence, head_hash and \"ok\": true.\n\n" +
			"A broken log prints \"ok\": false with the first line that does not verify, the\n" +
			"sequence it should carry, the fault (blank, syntax, version, noncanonical,\n" +
			"sequence, prev_hash, entry_hash) and the reason, and exits 1; entries, last_sequence\n" +
			"and head_hash then describe the intact lines before it.\n\n" +
			"A missing, empty or unreadable log is an error (exit 1): there is nothing to verify.\n\n" +
			"A last line without its newline is what a server appending at that moment (or a\n" +
			"crash in the middle of an append) leaves: it is reported as a warning with\n" +
			"\"torn_tail\": true and exit code 0, since every complete line verified. The file is\n" +
			"read only up to its size when opened, so entries appended meanwhile are ignored.\n" +
			"If security.audit_log_path points elsewhere, name the file with --path.\n\n" +
			"Examples:\n" +
			"  memsvc-admin audit verify\n" +
			"  memsvc-admin audit verify --data-dir /var/lib/memsvc/data\n" +
			"  memsvc-admin audit verify --path /var/log/memsvc/audit.jsonl",
		Flags: flags,
		Exec: cli.NoArgs("audit verify takes no arguments (use --path FILE)", func(ctx context.Context) error {
			p := *path
			switch {
			case p != "" && *dataDir != "":
				return cli.Usagef("give --path or --data-dir, not both")
			case *dataDir != "":
				p = filepath.Join(*dataDir, "audit.jsonl")
			case p == "":
				p = filepath.Join("data", "audit.jsonl")
			}
			// VerifyFile treats a missing file as an empty log; a verifier
			// must not pass on nothing.
			if err := cli.CheckVerifiable("audit log", p); err != nil {
				return fmt.Errorf("%w (name the log with --path or --data-dir)", err)
			}
			rep, err := audit.VerifyFile(p)
			out := auditReport{Path: p, Entries: rep.Entries, LastSequence: rep.LastSequence, HeadHash: rep.HeadHash, OK: true}
			be, broken := errors.AsType[*audit.BrokenError](err)
			switch {
			case errors.Is(err, audit.ErrTorn):
				out.TornTail = true
				r.warn("%v: the log is being appended to (or an append was cut short); the %d complete entries verify", err, rep.Entries)
			case broken:
				out.OK, out.Line, out.Sequence, out.Fault, out.Reason = false, be.Line, be.Sequence, string(be.Fault), be.Reason
				if perr := cli.PrintJSON(r.stdout, out); perr != nil {
					return errors.Join(err, perr)
				}
				return fmt.Errorf("audit log is NOT intact: %w", err)
			case err != nil:
				return err
			}
			return cli.PrintJSON(r.stdout, out)
		}),
	}
}
