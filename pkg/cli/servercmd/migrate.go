package servercmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/peterbourgon/ff/v4"

	"memsvc.dev/memsvc/pkg/cli"
	"memsvc.dev/memsvc/pkg/server"
)

func (r *root) migrateCmd() *ff.Command {
	fs := r.subFlags("migrate-store-encryption")
	confirm := fs.BoolLong("confirm", "rewrite the records without asking (required when not run on a terminal)")
	quiet := quietFlag(fs)
	return &ff.Command{
		Name:      "migrate-store-encryption",
		Usage:     "memsvc migrate-store-encryption --confirm",
		ShortHelp: "encrypt every record still stored in plaintext",
		LongHelp: "Rewrites every plaintext record of the data directory encrypted with the\n" +
			"configured security.store_encryption_passphrase (or\n" +
			"MEMSVC_SECURITY__STORE_ENCRYPTION_PASSPHRASE), removes derived search data\n" +
			"and compacts, so no plaintext copy stays on disk. Stop the server first and\n" +
			"take a backup (memsvc export or memsvc-admin backup). Running it again is safe.\n" +
			"On a terminal a progress line counts the records looked at (--quiet hides it).\n\n" +
			"Example:\n" +
			"  MEMSVC_SECURITY__STORE_ENCRYPTION_PASSPHRASE=... memsvc migrate-store-encryption --confirm",
		Flags: fs,
		Exec: cli.NoArgs("migrate-store-encryption takes no arguments", func(ctx context.Context) error {
			cfg, err := r.loadConfig()
			if err != nil {
				return err
			}
			if cfg.Security.StoreEncryptionPassphrase == nil {
				return errors.New("no store passphrase is configured: set security.store_encryption_passphrase or MEMSVC_SECURITY__STORE_ENCRYPTION_PASSPHRASE first")
			}
			if !*confirm {
				if ok, err := r.askConfirm("This rewrites every stored record encrypted; afterwards the data directory needs the passphrase. Continue? [y/N] ", "migrate", "changed"); !ok {
					return err
				}
			}
			// Each committed chunk is audited as it is committed, so a
			// run stopped midway leaves a trail of what it did.
			var rep server.MigrationReport
			err = r.withLocal(ctx, false, func(l *server.Local) error {
				size, err := l.MigrationSize(ctx)
				if err != nil {
					return err
				}
				bar := r.progress(*quiet, cli.ProgressOptions{Label: "migrate", Noun: "records", Total: int64(size)})
				rep, err = l.MigrateStoreEncryption(ctx, func(done uint64) { bar.Set(int64(done)) })
				return bar.Finish(err)
			})
			if err != nil {
				return fmt.Errorf("migration stopped (records migrated so far stay encrypted and are in the audit log; run it again to finish): %w", err)
			}
			var b strings.Builder
			b.WriteString("Store encryption migration completed:\n")
			for _, l := range rep.Lines() {
				fmt.Fprintf(&b, "  %s: total=%d, migrated=%d, already_encrypted=%d\n", l.Name, l.Total, l.Migrated, l.AlreadyEncrypted)
			}
			_, err = fmt.Fprint(r.stdout, b.String())
			return err
		}),
	}
}
