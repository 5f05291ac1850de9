package servercmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/peterbourgon/ff/v4"

	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/cli"
	"memsvc.dev/memsvc/pkg/engine"
	"memsvc.dev/memsvc/pkg/server"
	"memsvc.dev/memsvc/pkg/store"
)

func (r *root) migrateCmd() *ff.Command {
	fs := r.subFlags("migrate-store-encryption")
	confirm := fs.BoolLong("confirm", "rewrite the records without asking (required when not run on a terminal)")
	return &ff.Command{
		Name:      "migrate-store-encryption",
		Usage:     "memsvc migrate-store-encryption --confirm",
		ShortHelp: "encrypt every record still stored in plaintext",
		LongHelp: "Rewrites every plaintext record of the data directory encrypted with the\n" +
			"configured security.store_encryption_passphrase (or\n" +
			"MEMSVC_SECURITY__STORE_ENCRYPTION_PASSPHRASE), removes derived search data\n" +
			"and compacts, so no plaintext copy stays on disk. Stop the server first and\n" +
			"take a backup (memsvc export or memsvc-admin backup). Running it again is safe.\n\n" +
			"Example:\n" +
			"  MEMSVC_SECURITY__STORE_ENCRYPTION_PASSPHRASE=... memsvc migrate-store-encryption --confirm",
		Flags: fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return cli.Usagef("migrate-store-encryption takes no arguments")
			}
			cfg, err := r.loadConfig()
			if err != nil {
				return err
			}
			if cfg.Security.StoreEncryptionPassphrase == nil {
				return errors.New("no store passphrase is configured: set security.store_encryption_passphrase or MEMSVC_SECURITY__STORE_ENCRYPTION_PASSPHRASE first")
			}
			if !*confirm {
				ok, err := r.ask("This rewrites every stored record encrypted; afterwards the data directory needs the passphrase. Continue? [y/N] ")
				if errors.Is(err, errNeedConfirm) {
					return errors.New("refusing to migrate without --confirm (stdin is not a terminal); nothing was changed")
				}
				if err != nil {
					return err
				}
				if !ok {
					fmt.Fprintln(r.stderr, "Aborted; nothing was changed.")
					return nil
				}
			}
			log := cli.NewLogger(r.stderr, cfg.Log.Level, cfg.Log.Format)
			db, err := store.Open(cfg.DataDir, server.StoreOptions(cfg, log))
			if err != nil {
				return err
			}
			defer db.Close()
			rep, err := db.MigrateEncryption(ctx)
			if err != nil {
				return fmt.Errorf("migration stopped (records migrated so far stay encrypted; run it again to finish): %w", err)
			}
			// Record it in the audit log through the engine, which first
			// replays anything a previous run left in the outbox.
			if cfg.Security.AuditLogEnabled {
				if err := logMigration(ctx, cfg.AuditLogPath(), db, server.EngineOptions(cfg, log, nil, nil), rep); err != nil {
					return err
				}
			}
			var b strings.Builder
			b.WriteString("Store encryption migration completed:\n")
			for _, l := range rep.Lines() {
				fmt.Fprintf(&b, "  %s: total=%d, migrated=%d, already_encrypted=%d\n", l.Name, l.Total, l.Migrated, l.AlreadyEncrypted)
			}
			_, err = fmt.Fprint(r.stdout, b.String())
			return err
		},
	}
}

func logMigration(ctx context.Context, path string, db *store.DB, opts engine.Options, rep store.MigrationReport) error {
	log, err := audit.Open(path, audit.Options{Logger: opts.Logger})
	if err != nil {
		return fmt.Errorf("open audit log: %w", err)
	}
	defer log.Close()
	opts.Audit = log
	opts.SimilarLinks = -1
	eng, err := engine.Open(ctx, db, opts)
	if err != nil {
		return fmt.Errorf("open engine: %w", err)
	}
	summary := map[string]any{}
	for _, l := range rep.Lines() {
		summary[l.Name] = map[string]uint64{"total": l.Total, "migrated": l.Migrated, "already_encrypted": l.AlreadyEncrypted}
	}
	err = eng.LogOperation(ctx, audit.OpMigrateStoreEncryption, summary, nil)
	if cerr := eng.Close(); err == nil {
		err = cerr
	}
	return err
}
