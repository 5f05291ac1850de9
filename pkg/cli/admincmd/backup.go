package admincmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/peterbourgon/ff/v4"

	"memsvc.dev/memsvc/pkg/backup"
	"memsvc.dev/memsvc/pkg/cli"
	"memsvc.dev/memsvc/pkg/memory"
)

// backupReport is the output of backup.
type backupReport struct {
	Path             string   `json:"path"`
	ArchiveID        string   `json:"archive_id"`
	Format           string   `json:"format"`
	Records          int      `json:"records"`
	CuratedRecords   int      `json:"curated_records"`
	RawRecords       int      `json:"raw_records"`
	SizeBytes        int64    `json:"size_bytes"`
	Checksum         string   `json:"checksum"`
	Verified         bool     `json:"verified"`
	Kept             []string `json:"kept"`
	Removed          []string `json:"removed"`
	LeftoversRemoved []string `json:"leftovers_removed"`
}

func (r *root) backupCmd() *ff.Command {
	fs := r.subFlags("backup")
	serverURL := fs.StringLong("server-url", "", "server to back up, e.g. http://127.0.0.1:8420 (env MEMSVC_SERVER_URL; API key from MEMSVC_SERVER_API_KEY)")
	dir := fs.StringLong("dir", "", "backup directory (created 0700 if missing)")
	keep := fs.IntLong("keep", 7, "complete backups to keep in --dir, the new one included; older ones are deleted")
	storesFlag := fs.StringLong("stores", "", "comma-separated stores to back up (default: all)")
	nsFlag := fs.StringLong("namespaces", memory.AllNamespaces, "comma-separated namespaces to back up; * (the default) is every namespace, which needs a key that may use them all")
	raw := fs.BoolLongDefault("include-raw-journal", true, "back up the raw journal too, every entry of every visibility and secrecy level (--include-raw-journal=false: curated memories only)")
	sealed := fs.BoolLongDefault("include-sealed", true, "back up sealed raw entries (--include-sealed=false leaves them out)")
	secret := fs.BoolLongDefault("include-secret", true, "back up secret raw entries (--include-secret=false leaves them out)")
	encrypt := fs.BoolLong("encrypt", "encrypt the backup with a passphrase")
	key := fs.StringLong("encryption-key", "", "passphrase for --encrypt (visible in process listings; prefer --encryption-key-stdin)")
	keyStdin := fs.BoolLong("encryption-key-stdin", "read the passphrase for --encrypt from stdin (prompted without echo on a terminal)")
	timeout := fs.DurationLong("timeout", 0, "give up when the export takes longer than this; 0 means no limit")
	return &ff.Command{
		Name:      "backup",
		Usage:     "memsvc-admin backup --server-url URL --dir DIR [--keep N] [--encrypt --encryption-key-stdin]",
		ShortHelp: "back up a running server into a directory, verified and rotated (JSON)",
		LongHelp: "Exports everything the server holds through its HTTP API, the curated memories\n" +
			"and every raw journal entry of every namespace (sealed and secret ones included;\n" +
			"--namespaces and the --include-* flags =false narrow it), and keeps the newest\n" +
			"--keep backups in --dir. A key bound to some namespaces must name them with\n" +
			"--namespaces. Each entry keeps its namespace; restore puts it back there.\n" +
			"Step by step:\n\n" +
			"  1. lock --dir (a second backup into the same directory fails) and delete the\n" +
			"     memsvc-*.cma.part files that an interrupted run left behind;\n" +
			"  2. stream the export into DIR/memsvc-<UTC time>.cma.part (mode 0600), never\n" +
			"     holding the archive in memory, and fsync it;\n" +
			"  3. read the file back and verify it completely; its checksum, record count,\n" +
			"     size and format must equal what the server reported;\n" +
			"  4. rename it to DIR/memsvc-<UTC time>.cma and fsync the directory;\n" +
			"  5. delete all but the newest --keep memsvc-<UTC time>.cma files. Other files\n" +
			"     in DIR are never touched.\n\n" +
			"Any failure exits 1 and leaves no new .cma and no .part behind; older backups\n" +
			"are deleted only after a new one is complete. Prints the new backup's path,\n" +
			"counts, size and checksum, and what was kept and removed. On a terminal a\n" +
			"progress line shows the bytes written; --quiet keeps stderr empty on success.\n" +
			"deploy-docs/memsvc-backup.service and .timer run it daily under systemd.\n\n" +
			"Examples:\n" +
			"  memsvc-admin backup --server-url http://127.0.0.1:8420 --dir /var/backups/memsvc\n" +
			"  MEMSVC_SERVER_API_KEY=... memsvc-admin --quiet backup --server-url https://mem.example.com \\\n" +
			"      --dir /var/backups/memsvc --keep 30\n" +
			"  memsvc-admin backup --dir /var/backups/memsvc --encrypt --encryption-key-stdin < /etc/memsvc/backup.pass",
		Flags: fs,
		Exec: cli.NoArgs("backup takes no arguments (use --dir DIR)", func(ctx context.Context) error {
			if *dir == "" {
				return cli.Usagef("--dir is required")
			}
			if *keep < 1 {
				return cli.Usagef("--keep %d: keep at least 1 backup", *keep)
			}
			if (!*sealed || !*secret) && !*raw {
				return cli.Usagef("--include-sealed and --include-secret filter the raw journal, which --include-raw-journal=false leaves out")
			}
			req := memory.DefaultExportRequest()
			req.IncludeRawJournal, req.IncludeSealed, req.IncludeSecret, req.Encrypt = *raw, *sealed, *secret, *encrypt
			var err error
			if req.Stores, err = parseStores(*storesFlag); err != nil {
				return err
			}
			if req.Namespaces, err = cli.NamespaceList("--namespaces", *nsFlag); err != nil {
				return err
			}
			if req.Namespaces == nil {
				return cli.Usagef("--namespaces is empty: name namespaces, or * for every one")
			}
			pass, err := cli.Secret(r.stdin, r.stderr, *key, *keyStdin, "--encryption-key", "Backup passphrase: ")
			if err != nil {
				return err
			}
			switch {
			case pass != "" && !*encrypt:
				return cli.Usagef("--encryption-key given without --encrypt: add --encrypt, or drop the key for a plaintext backup")
			case *encrypt && pass == "":
				return cli.Usagef("--encrypt needs a passphrase: --encryption-key-stdin (preferred) or --encryption-key")
			case pass != "":
				req.EncryptionKey = &pass
			}
			c, url, err := r.client(*serverURL, *timeout)
			if err != nil {
				return err
			}
			r.info("backup: exporting from %s into %s", url, *dir)
			bar := r.bar("backup", 0)
			res, err := backup.Create(ctx, c, backup.Options{
				Dir:      *dir,
				Keep:     *keep,
				Request:  req,
				Now:      r.now,
				Logger:   r.logger(),
				Progress: bar.Set,
			})
			bar.Done()
			if res.ArchiveID == "" {
				return fmt.Errorf("backup: %w", err)
			}
			// The backup is complete; a later error (syncing the directory,
			// rotating) still fails the run.
			kept, lerr := backup.List(*dir)
			sum := res.Summary
			perr := cli.PrintJSON(r.stdout, backupReport{
				Path:             res.Path,
				ArchiveID:        res.ArchiveID,
				Format:           formatName(sum.Format),
				Records:          sum.Header.Records(),
				CuratedRecords:   sum.Header.Curated,
				RawRecords:       sum.Header.Raw,
				SizeBytes:        sum.Size,
				Checksum:         sum.Checksum,
				Verified:         true,
				Kept:             nonNil(kept),
				Removed:          nonNil(res.Removed),
				LeftoversRemoved: nonNil(res.Leftovers),
			})
			r.info("backup: %s complete (%d records, %s, verified)", res.Path, sum.Header.Records(), cli.FormatBytes(sum.Size))
			if err != nil {
				err = fmt.Errorf("backup %s is complete, but: %w", res.Path, err)
			}
			return errors.Join(err, lerr, perr)
		}),
	}
}

// logger returns the logger for library messages: text on stderr, or
// warnings only with --quiet.
func (r *root) logger() *slog.Logger {
	level := slog.LevelInfo
	if r.quiet {
		level = slog.LevelWarn
	}
	return slog.New(slog.NewTextHandler(r.stderr, &slog.HandlerOptions{Level: level}))
}

// parseStores parses a comma-separated list of store names; empty means
// all stores (nil).
func parseStores(list string) ([]memory.StoreType, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	var out []memory.StoreType
	for name := range strings.SplitSeq(list, ",") {
		st, err := memory.ParseStoreType(strings.ToLower(strings.TrimSpace(name)))
		if err != nil {
			return nil, cli.Usagef("--stores: %q: want one of %s", name, memory.StoreTypeNames())
		}
		out = append(out, st)
	}
	return out, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
