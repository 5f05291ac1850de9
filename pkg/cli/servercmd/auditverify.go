package servercmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/peterbourgon/ff/v4"

	"memsvc.dev/memsvc/pkg/cli"
	"memsvc.dev/memsvc/pkg/server"
)

func (r *root) auditVerifyCmd() *ff.Command {
	fs := r.subFlags("audit-verify")
	path := fs.StringLong("path", "", "audit log to verify (default: security.audit_log_path, or <data_dir>/audit.jsonl)")
	return &ff.Command{
		Name:      "audit-verify",
		Usage:     "memsvc audit-verify [--path FILE]",
		ShortHelp: "verify the audit log's hash chain",
		LongHelp: "Recomputes every entry's hash and checks the chain. Works while the server\n" +
			"runs (it only reads the file, on this machine: --server-url does not apply).\n" +
			"Exits 1 and names the first broken line when the log was tampered with, and\n" +
			"also when the log is missing, empty or unreadable: there is nothing to verify.\n" +
			"A partly written last line of a live log is a warning.\n\n" +
			"Examples:\n" +
			"  memsvc audit-verify\n" +
			"  memsvc audit-verify --path /var/lib/memsvc/data/audit.jsonl",
		Flags: fs,
		Exec: cli.NoArgs("audit-verify takes no arguments", func(ctx context.Context) error {
			p := *path
			if p == "" {
				cfg, err := r.loadConfig()
				if err != nil {
					return err
				}
				if !cfg.Security.AuditLogEnabled {
					return errors.New("the audit log is disabled (security.audit_log_enabled = false); name a log with --path")
				}
				if cfg.Security.AuditLogPath == nil {
					// The log lives in the data directory: a mistyped
					// --data-dir is named as such.
					if err := server.CheckDataDir(cfg, false); err != nil {
						return fmt.Errorf("%w; or name the log with --path (audit-verify reads it from this machine's disk, never through --server-url)", err)
					}
				}
				p = cfg.AuditLogPath()
			}
			if err := cli.CheckVerifiable("audit log", p); err != nil {
				if *path == "" {
					err = fmt.Errorf("%w; name the log with --path (audit-verify reads it from this machine's disk, never through --server-url)", err)
				}
				return err
			}
			rep, err := server.VerifyAuditLog(p)
			switch {
			case server.IsTornAuditTail(err):
				fmt.Fprintf(r.stderr, "warning: %v (the log is being written; the complete lines verify)\n", err)
			case server.IsBrokenAuditLog(err):
				return fmt.Errorf("audit log %s is NOT intact: %w", p, err)
			case err != nil:
				return fmt.Errorf("audit log %s: %w", p, err)
			}
			_, err = fmt.Fprintf(r.stdout, "Audit log verified:\n  path=%s\n  entries=%d\n  last_sequence=%d\n  head_hash=%s\n  ok\n",
				rep.Path, rep.Entries, rep.LastSequence, rep.HeadHash)
			return err
		}),
	}
}
