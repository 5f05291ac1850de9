package admincmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/peterbourgon/ff/v4"

	"memsvc.dev/memsvc/pkg/cli"
)

// restoreReport is the output of restore.
type restoreReport struct {
	Path               string `json:"path"`
	ServerURL          string `json:"server_url"`
	Strategy           string `json:"strategy"`
	ConflictResolution string `json:"conflict_resolution"`
	Format             string `json:"format"`
	Checksum           string `json:"checksum"`
	RecordsInArchive   int    `json:"records_in_archive"`
	RecordsImported    uint32 `json:"records_imported"`
}

func (r *root) restoreCmd() *ff.Command {
	fs := r.subFlags("restore")
	serverURL := fs.StringLong("server-url", "", "server to restore into, e.g. http://127.0.0.1:8420 (env MEMSVC_SERVER_URL; API key from MEMSVC_SERVER_API_KEY)")
	strategy := fs.StringLong("strategy", "merge", "merge into the server's data, or replace it entirely")
	conflict := fs.StringLong("conflict-resolution", "keep_newer", "with merge, when a record id exists: keep_newer, keep_existing or keep_imported")
	passphrase := r.keyFlags(fs)
	preserve := fs.BoolLongDefault("preserve-namespaces", true, "put each entry back into the namespace the archive names for it, which needs a key that may use every namespace (--preserve-namespaces=false: everything into the key's namespace)")
	yes := fs.BoolLong("yes", "confirm --strategy replace without being asked")
	timeout := fs.DurationLong("timeout", 0, "give up when the import takes longer than this; 0 means no limit")
	return &ff.Command{
		Name:      "restore",
		Usage:     "memsvc-admin restore --server-url URL <FILE> [--strategy merge|replace] [--conflict-resolution R] [--decryption-key-stdin] [--yes]",
		ShortHelp: "verify an archive, then import it into a running server (JSON)",
		LongHelp: "Verifies FILE completely first (as `archive verify` does; a damaged archive is\n" +
			"reported and nothing is sent), then streams it to the server's import API. The\n" +
			"server checks it again and applies it in one atomic step. Each entry goes back\n" +
			"into the namespace it was backed up from (--preserve-namespaces=false puts\n" +
			"everything into the key's own namespace, default for an unbound key).\n\n" +
			"--strategy replace deletes everything on the server (with\n" +
			"--preserve-namespaces=false: in the key's namespace) before importing. It needs\n" +
			"--yes, or a typed confirmation when stdin is a terminal; without a terminal and\n" +
			"without --yes it is refused (exit 2).\n\n" +
			"Prints the archive's format, checksum and record count and the number of records\n" +
			"the server imported (with merge, records it kept instead are not counted).\n\n" +
			"Examples:\n" +
			"  memsvc-admin restore --server-url http://127.0.0.1:8420 /var/backups/memsvc/memsvc-20261101T020000Z.cma\n" +
			"  memsvc-admin restore --server-url http://127.0.0.1:8420 backup.cma --strategy replace --yes\n" +
			"  memsvc-admin restore --server-url http://127.0.0.1:8420 secret.cma --decryption-key-stdin < pass.txt",
		Flags: fs,
		Exec: func(ctx context.Context, args []string) error {
			path, err := oneFile(args)
			if err != nil {
				return err
			}
			req, ask, err := cli.ImportRequest(path, *strategy, *conflict, *preserve, *yes)
			if err != nil {
				return err
			}
			if ask && !cli.IsTerminal(r.stdin) {
				return cli.Usagef("--strategy replace deletes all data on the server first: pass --yes to confirm (stdin is not a terminal, so there is no one to ask)")
			}
			c, url, err := r.client(*serverURL, *timeout)
			if err != nil {
				return err
			}
			pass, err := passphrase()
			if err != nil {
				return err
			}
			if pass != nil {
				s := string(pass)
				req.DecryptionKey = &s
			}

			bar := r.bar("restore: verify", fileSize(path))
			sc, err := scanArchive(path, pass, bar)
			bar.Done()
			if err != nil {
				return fmt.Errorf("nothing restored: %w", archiveError(path, err))
			}
			records := sc.sum.Header.Records()
			r.info("restore: %s verified (%s, %d records, checksum %s)", path, formatName(sc.sum.Format), records, sc.sum.Checksum)
			if ask {
				what := "ALL data on " + url
				if !*preserve {
					what = "all data of the key's namespace on " + url
				}
				if err := r.confirm(fmt.Sprintf("This deletes %s and replaces it with the %d records of %s.\nType \"replace\" to continue: ", what, records, path), "replace"); err != nil {
					return err
				}
			}

			f, err := os.Open(path)
			if err != nil {
				return fmt.Errorf("open archive: %w", err)
			}
			defer f.Close()
			bar = r.bar("restore", fileSize(path))
			resp, err := c.Import(ctx, &req, &cli.ProgressReader{R: bufio.NewReaderSize(f, 1<<20), P: bar})
			if err := bar.Finish(err); err != nil {
				return fmt.Errorf("import into %s: %w", url, err)
			}
			return cli.PrintJSON(r.stdout, restoreReport{
				Path:               path,
				ServerURL:          url,
				Strategy:           req.Strategy.String(),
				ConflictResolution: req.ConflictResolution.String(),
				Format:             formatName(sc.sum.Format),
				Checksum:           sc.sum.Checksum,
				RecordsInArchive:   records,
				RecordsImported:    resp.RecordsImported,
			})
		},
	}
}

// confirm asks on stderr and reads one line from stdin, which must equal
// want.
func (r *root) confirm(prompt, want string) error {
	ok, err := cli.Confirm(r.stdin, r.stderr, prompt, want)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("restore cancelled: not confirmed")
	}
	return nil
}
