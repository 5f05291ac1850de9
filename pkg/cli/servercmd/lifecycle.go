package servercmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"memsvc.dev/memsvc/internal/fsutil"
	"os"
	"path/filepath"

	"github.com/peterbourgon/ff/v4"

	"memsvc.dev/memsvc/pkg/cli"
	"memsvc.dev/memsvc/pkg/memory"
)

func (r *root) decayTickCmd() *ff.Command {
	fs := r.subFlags("decay-tick")
	duration := fs.UintLong("duration", 3600, "seconds to advance every record's decay clock (at most 2592000, 30 days, without --allow-long)")
	allowLong := fs.BoolLong("allow-long", "allow a --duration over 30 days, which can make every memory dormant at once")
	return &ff.Command{
		Name:      "decay-tick",
		Usage:     "memsvc decay-tick [--duration SECONDS] [--allow-long]",
		ShortHelp: "advance the decay clock by a duration",
		LongHelp: "Ages every memory by --duration seconds, as if that much time had passed.\n" +
			"The server does this on its own as real time passes; use this to simulate time.\n" +
			"One tick covers at most 30 days unless --allow-long is given.\n\n" +
			"Example:\n" +
			"  memsvc decay-tick --duration 86400   # one day",
		Flags: fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return cli.Usagef("decay-tick takes no arguments")
			}
			if *duration > math.MaxUint32 {
				return fmt.Errorf("--duration: %d seconds is too long (at most %d)", *duration, uint32(math.MaxUint32))
			}
			d := uint32(*duration)
			if d > memory.MaxDecayTickSeconds && !*allowLong {
				return cli.Usagef("--duration %d: more than %d seconds (30 days) in one tick can make every memory dormant at once; add --allow-long if that is what you want", d, memory.MaxDecayTickSeconds)
			}
			return r.withService(ctx, func(svc memory.Service) error {
				resp, err := svc.DecayTick(ctx, &memory.DecayTickRequest{TickDurationSeconds: &d, AllowLong: *allowLong})
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(r.stdout, "Decay tick completed:\n  records updated: %d\n  records below threshold: %d\n  records pruned: %d\n",
					resp.RecordsUpdated, resp.RecordsBelowThreshold, resp.RecordsPruned)
				return err
			})
		},
	}
}

func (r *root) dreamTickCmd() *ff.Command {
	fs := r.subFlags("dream-tick")
	session := fs.StringLong("session-id", "", "only entries of this session")
	dry := fs.BoolLong("dry-run", "report what would be summarised without writing anything")
	maxGroups := fs.UintLong("max-groups", 10, "topic groups to process in this run")
	private := fs.BoolLong("include-private-scratch", "also process private_scratch entries (their text never reaches a summary)")
	sealed := fs.BoolLong("include-sealed", "also process sealed entries (their text never reaches a summary)")
	promote := fs.BoolLongDefault("promote-semantic", true, "promote recurring topics to semantic memories (--promote-semantic=false to turn off)")
	levels := fs.StringLong("secrecy-levels", allSecrecyLevels, "comma-separated secrecy levels to process, from public, sensitive, secret (secret text never reaches a summary)")
	return &ff.Command{
		Name:      "dream-tick",
		Usage:     "memsvc dream-tick [FLAGS]",
		ShortHelp: "summarise pending raw journal entries into memories (JSON)",
		LongHelp: "Groups pending raw journal entries by session and topic and writes an episodic\n" +
			"summary per group (and a semantic memory for recurring topics). Prints counts as JSON.\n" +
			"Entries of every secrecy level are processed unless --secrecy-levels narrows it;\n" +
			"secret, private_scratch and sealed entries are marked processed and counted, but\n" +
			"their text never reaches a summary.\n\n" +
			"Examples:\n" +
			"  memsvc dream-tick --dry-run\n" +
			"  memsvc dream-tick --session-id chat-42 --promote-semantic=false",
		Flags: fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return cli.Usagef("dream-tick takes no arguments")
			}
			req := memory.DefaultDreamTickRequest()
			if *session != "" {
				req.SessionID = session
			}
			if *maxGroups > math.MaxUint32 {
				return fmt.Errorf("--max-groups: %d is too large", *maxGroups)
			}
			req.DryRun, req.MaxGroups, req.IncludePrivateScratch, req.IncludeSealed, req.PromoteSemantic = *dry, uint32(*maxGroups), *private, *sealed, *promote
			var err error
			if req.SecrecyLevels, err = parseSecrecyLevels(*levels); err != nil {
				return err
			}
			return r.withService(ctx, func(svc memory.Service) error {
				resp, err := svc.DreamTick(ctx, &req)
				if err != nil {
					return err
				}
				return cli.PrintJSON(r.stdout, resp)
			})
		},
	}
}

func (r *root) consolidateCmd() *ff.Command {
	fs := r.subFlags("consolidate")
	strategy := fs.StringLong("strategy", "incremental", "incremental (new and changed records), full (everything, merging duplicates and pruning dormant originals) or selective (salient records only)")
	minAge := fs.UintLong("min-age-hours", 0, "only records at least this old")
	minAccess := fs.UintLong("min-access-count", 0, "only records accessed at least this often")
	dry := fs.BoolLong("dry-run", "report what would change without changing anything")
	return &ff.Command{
		Name:      "consolidate",
		Usage:     "memsvc consolidate [--strategy S] [--min-age-hours N] [--min-access-count N] [--dry-run]",
		ShortHelp: "turn mature episodic memories into semantic ones",
		LongHelp: "Copies mature episodic memories into semantic memory, linked to their source.\n" +
			"Running it again changes nothing unless records changed.\n\n" +
			"Examples:\n" +
			"  memsvc consolidate --dry-run\n" +
			"  memsvc consolidate --strategy full --min-age-hours 24",
		Flags: fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return cli.Usagef("consolidate takes no arguments")
			}
			req := memory.DefaultConsolidateRequest()
			var err error
			if req.Strategy, err = memory.ParseConsolidationStrategy(norm(*strategy)); err != nil {
				return fmt.Errorf("--strategy: %w", err)
			}
			if *minAge > math.MaxUint32 || *minAccess > math.MaxUint32 {
				return errors.New("--min-age-hours and --min-access-count must fit in 32 bits")
			}
			req.MinAgeHours, req.MinAccessCount, req.DryRun = uint32(*minAge), uint32(*minAccess), *dry
			return r.withService(ctx, func(svc memory.Service) error {
				resp, err := svc.Consolidate(ctx, &req)
				if err != nil {
					return err
				}
				note := ""
				if req.DryRun {
					note = " (dry run: nothing was changed)"
				}
				_, err = fmt.Fprintf(r.stdout, "Consolidated: processed=%d, migrated=%d, compressed=%d, pruned=%d, semantic_nodes_created=%d%s\n",
					resp.RecordsProcessed, resp.RecordsMigrated, resp.RecordsCompressed, resp.RecordsPruned, resp.SemanticNodesCreated, note)
				return err
			})
		},
	}
}

func (r *root) exportCmd() *ff.Command {
	fs := r.subFlags("export")
	output := fs.StringLong("output", "./backup.cma", "archive file to write (written 0600; an existing file is kept unless --force)")
	format := fs.StringLong("format", "cma", "cma, or jsonl (an alias of cma)")
	storesFlag := fs.StringLong("stores", "", "comma-separated stores to export (default: all)")
	raw := fs.BoolLong("include-raw-journal", "include the raw journal (sealed and secret entries only with --include-sealed / --include-secret)")
	sealed := fs.BoolLong("include-sealed", "with --include-raw-journal, also export sealed entries")
	secret := fs.BoolLong("include-secret", "with --include-raw-journal, also export secret entries")
	encrypt := fs.BoolLong("encrypt", "encrypt the archive with a passphrase")
	key := fs.StringLong("encryption-key", "", "passphrase for --encrypt (visible in process listings; prefer --encryption-key-stdin)")
	keyStdin := fs.BoolLong("encryption-key-stdin", "read the passphrase from stdin (prompted without echo on a terminal)")
	force := fs.BoolLong("force", "overwrite an existing output file")
	return &ff.Command{
		Name:      "export",
		Usage:     "memsvc export [--output FILE] [--stores LIST] [--include-raw-journal] [--encrypt --encryption-key-stdin]",
		ShortHelp: "write a CMA archive (backup)",
		LongHelp: "Writes the memories (and optionally the raw journal) to a portable CMA archive.\n\n" +
			"Examples:\n" +
			"  memsvc export --output backup.cma\n" +
			"  memsvc export --output backup.cma --include-raw-journal --encrypt --encryption-key-stdin",
		Flags: fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return cli.Usagef("export takes no arguments (use --output FILE)")
			}
			req := memory.DefaultExportRequest()
			req.Format, req.IncludeRawJournal, req.IncludeSealed, req.IncludeSecret, req.Encrypt = *format, *raw, *sealed, *secret, *encrypt
			var err error
			if req.Stores, err = parseStores("--stores", *storesFlag); err != nil {
				return err
			}
			pass, err := r.passphrase(*key, *keyStdin, "--encryption-key")
			if err != nil {
				return err
			}
			if pass != "" && !*encrypt {
				return cli.Usagef("--encryption-key given without --encrypt: add --encrypt to encrypt the archive, or drop the key for a plaintext one")
			}
			if *encrypt && pass == "" {
				return cli.Usagef("--encrypt needs a passphrase: --encryption-key-stdin (preferred) or --encryption-key")
			}
			if pass != "" {
				req.EncryptionKey = &pass
			}
			if !*force {
				if _, err := os.Lstat(*output); err == nil {
					return fmt.Errorf("%s already exists; pass --force to overwrite it", *output)
				}
			}
			return r.withService(ctx, func(svc memory.Service) error {
				var resp *memory.ExportResponse
				err := writeFileAtomic(*output, func(w io.Writer) error {
					var err error
					resp, err = svc.Export(ctx, &req, w)
					return err
				})
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(r.stdout, "Exported %d records to %s (%d bytes, archive_id=%s, checksum=%s)\n",
					resp.RecordCount, *output, resp.SizeBytes, resp.ArchiveID, resp.Checksum)
				return err
			})
		},
	}
}

// writeFileAtomic writes a file with mode 0600 through a temporary file in
// the same directory, synced and renamed into place, so the target is never
// half written. A failed write leaves no file behind.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".part-*")
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	done := false
	defer func() {
		if !done {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	bw := bufio.NewWriterSize(tmp, 1<<20)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	done = true
	_ = fsutil.SyncDir(dir) // the file is written; a failed directory sync only risks its name
	return nil
}

// passphrase returns the passphrase of a --X-key / --X-key-stdin pair
// (cli.Secret).
func (r *root) passphrase(flagValue string, fromStdin bool, flagName string) (string, error) {
	return cli.Secret(r.stdin, r.stderr, flagValue, fromStdin, flagName, "Passphrase: ")
}

func (r *root) importCmd() *ff.Command {
	fs := r.subFlags("import")
	strategy := fs.StringLong("strategy", "merge", "merge into the existing data, or replace it entirely")
	key := fs.StringLong("decryption-key", "", "passphrase of an encrypted archive (prefer --decryption-key-stdin)")
	keyStdin := fs.BoolLong("decryption-key-stdin", "read the passphrase from stdin")
	conflict := fs.StringLong("conflict-resolution", "keep_newer", "when an id exists: keep_newer, keep_existing or keep_imported")
	return &ff.Command{
		Name:      "import",
		Usage:     "memsvc import <PATH> [--strategy merge|replace] [--conflict-resolution R] [--decryption-key-stdin]",
		ShortHelp: "read a CMA archive",
		LongHelp: "Imports a CMA archive. The archive is checked completely before anything is\n" +
			"written, and written in one atomic step.\n\n" +
			"Examples:\n" +
			"  memsvc import backup.cma\n" +
			"  memsvc import backup.cma --strategy replace --decryption-key-stdin",
		Flags: fs,
		Exec: func(ctx context.Context, args []string) error {
			path, err := oneArg(args, "PATH")
			if err != nil {
				return err
			}
			req := memory.DefaultImportRequest()
			req.ArchiveID = filepath.Base(path)
			if req.Strategy, err = memory.ParseImportStrategy(norm(*strategy)); err != nil {
				return fmt.Errorf("--strategy: %w", err)
			}
			if req.ConflictResolution, err = memory.ParseConflictResolution(norm(*conflict)); err != nil {
				return fmt.Errorf("--conflict-resolution: %w", err)
			}
			pass, err := r.passphrase(*key, *keyStdin, "--decryption-key")
			if err != nil {
				return err
			}
			if pass != "" {
				req.DecryptionKey = &pass
			}
			f, err := os.Open(path)
			if err != nil {
				return fmt.Errorf("open archive: %w", err)
			}
			defer f.Close()
			return r.withService(ctx, func(svc memory.Service) error {
				resp, err := svc.Import(ctx, &req, bufio.NewReaderSize(f, 1<<20))
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(r.stdout, "Imported %d records from %s\n", resp.RecordsImported, path)
				return err
			})
		},
	}
}
