package servercmd

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/peterbourgon/ff/v4"

	"memsvc.dev/memsvc/pkg/cli"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/server"
)

func (r *root) decayTickCmd() *ff.Command {
	fs := r.subFlags("decay-tick")
	duration := fs.UintLong("duration", 3600, "seconds to advance every record's decay clock (at most 2592000, 30 days, without --allow-long)")
	allowLong := fs.BoolLong("allow-long", "allow a --duration over 30 days, which can make every memory dormant at once")
	asJSON := jsonFlag(fs)
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
		Exec: cli.NoArgs("decay-tick takes no arguments", func(ctx context.Context) error {
			if *duration > math.MaxUint32 {
				return cli.Usagef("--duration: %d seconds is too long (at most %d)", *duration, uint32(math.MaxUint32))
			}
			d := uint32(*duration)
			if d > memory.MaxDecayTickSeconds && !*allowLong {
				return cli.Usagef("--duration %d: more than %d seconds (30 days) in one tick can make every memory dormant at once; add --allow-long if that is what you want", d, memory.MaxDecayTickSeconds)
			}
			return r.withService(ctx, func(ctx context.Context, svc memory.Service) error {
				resp, err := svc.DecayTick(ctx, &memory.DecayTickRequest{TickDurationSeconds: &d, AllowLong: *allowLong})
				return printAnswer(r.stdout, *asJSON, resp, err, func(w io.Writer, resp *memory.DecayTickResponse) error {
					_, err := fmt.Fprintf(w, "Decay tick completed:\n  records updated: %d\n  records below threshold: %d\n  records pruned: %d\n",
						resp.RecordsUpdated, resp.RecordsBelowThreshold, resp.RecordsPruned)
					return err
				})
			})
		}),
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
	asJSON := jsonFlag(fs)
	quiet := quietFlag(fs)
	return &ff.Command{
		Name:      "dream-tick",
		Usage:     "memsvc dream-tick [FLAGS]",
		ShortHelp: "summarise pending raw journal entries into memories",
		LongHelp: "Groups pending raw journal entries by session and topic and writes an episodic\n" +
			"summary per group (and a semantic memory for recurring topics). Prints the counts\n" +
			"(--json: the API's answer).\n" +
			"Entries of every secrecy level are processed unless --secrecy-levels narrows it;\n" +
			"secret, private_scratch and sealed entries are marked processed and counted, but\n" +
			"their text never reaches a summary.\n" +
			"On a terminal a progress line counts the groups processed (--quiet hides it);\n" +
			"a run of many groups is sent as a series of smaller ticks for that.\n\n" +
			"Examples:\n" +
			"  memsvc dream-tick --dry-run\n" +
			"  memsvc dream-tick --session-id chat-42 --promote-semantic=false",
		Flags: fs,
		Exec: cli.NoArgs("dream-tick takes no arguments", func(ctx context.Context) error {
			req := memory.DefaultDreamTickRequest()
			if *session != "" {
				req.SessionID = session
			}
			var err error
			if req.MaxGroups, err = uint32Flag("--max-groups", *maxGroups); err != nil {
				return err
			}
			req.DryRun, req.IncludePrivateScratch, req.IncludeSealed, req.PromoteSemantic = *dry, *private, *sealed, *promote
			if req.SecrecyLevels, err = parseSecrecyLevels(*levels); err != nil {
				return err
			}
			return r.withService(ctx, func(ctx context.Context, svc memory.Service) error {
				bar := r.progress(*quiet, cli.ProgressOptions{Label: "dream-tick", Noun: "groups", Total: int64(req.MaxGroups)})
				resp, err := dreamTick(ctx, svc, req, bar)
				return printAnswer(r.stdout, *asJSON, resp, bar.Finish(err), func(w io.Writer, resp *memory.DreamTickResponse) error {
					return printDreamTick(w, resp, req.DryRun)
				})
			})
		}),
	}
}

func (r *root) consolidateCmd() *ff.Command {
	fs := r.subFlags("consolidate")
	strategy := fs.StringLong("strategy", "incremental", "incremental (new and changed records), full (everything, merging duplicates and pruning dormant originals) or selective (salient records only)")
	minAge := fs.UintLong("min-age-hours", 0, "only records at least this old")
	minAccess := fs.UintLong("min-access-count", 0, "only records accessed at least this often")
	dry := fs.BoolLong("dry-run", "report what would change without changing anything")
	asJSON := jsonFlag(fs)
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
		Exec: cli.NoArgs("consolidate takes no arguments", func(ctx context.Context) error {
			req := memory.DefaultConsolidateRequest()
			var err error
			if req.Strategy, err = memory.ParseConsolidationStrategy(norm(*strategy)); err != nil {
				return cli.Usagef("--strategy: %v", err)
			}
			if *minAge > math.MaxUint32 || *minAccess > math.MaxUint32 {
				return cli.Usagef("--min-age-hours and --min-access-count must fit in 32 bits")
			}
			req.MinAgeHours, req.MinAccessCount, req.DryRun = uint32(*minAge), uint32(*minAccess), *dry
			return r.withService(ctx, func(ctx context.Context, svc memory.Service) error {
				resp, err := svc.Consolidate(ctx, &req)
				return printAnswer(r.stdout, *asJSON, resp, err, func(w io.Writer, resp *memory.ConsolidateResponse) error {
					note := ""
					if req.DryRun {
						note = " (dry run: nothing was changed)"
					}
					_, err := fmt.Fprintf(w, "Consolidated: processed=%d, migrated=%d, compressed=%d, pruned=%d, semantic_nodes_created=%d%s\n",
						resp.RecordsProcessed, resp.RecordsMigrated, resp.RecordsCompressed, resp.RecordsPruned, resp.SemanticNodesCreated, note)
					return err
				})
			})
		}),
	}
}

func (r *root) exportCmd() *ff.Command {
	fs := r.subFlags("export")
	output := fs.StringLong("output", "./backup.cma", "archive file to write (written 0600; an existing file is kept unless --force)")
	format := fs.StringLong("format", "cma", "cma, or jsonl (an alias of cma)")
	storesFlag := fs.StringLong("stores", "", "comma-separated stores to export (default: all)")
	nsFlag := fs.StringLong("namespaces", "", "comma-separated namespaces to export, or * for every namespace (default: the one of --namespace)")
	raw := fs.BoolLong("include-raw-journal", "include the raw journal, every entry of every visibility and secrecy level")
	sealed := fs.BoolLongDefault("include-sealed", true, "with --include-raw-journal, export sealed entries (--include-sealed=false leaves them out)")
	secret := fs.BoolLongDefault("include-secret", true, "with --include-raw-journal, export secret entries (--include-secret=false leaves them out)")
	encrypt := fs.BoolLong("encrypt", "encrypt the archive with a passphrase")
	key := fs.StringLong("encryption-key", "", "passphrase for --encrypt (visible in process listings; prefer --encryption-key-stdin)")
	keyStdin := fs.BoolLong("encryption-key-stdin", "read the passphrase from stdin (prompted without echo on a terminal)")
	force := fs.BoolLong("force", "overwrite an existing output file")
	quiet := quietFlag(fs)
	asJSON := jsonFlag(fs)
	return &ff.Command{
		Name:      "export",
		Usage:     "memsvc export [--output FILE] [--stores LIST] [--include-raw-journal] [--encrypt --encryption-key-stdin]",
		ShortHelp: "write a CMA archive (backup)",
		LongHelp: "Writes the memories (and optionally the raw journal) to a portable CMA archive.\n" +
			"With --include-raw-journal every raw entry goes in, sealed and secret ones too, so\n" +
			"the archive is a complete backup; --include-sealed=false and --include-secret=false\n" +
			"leave those out. On a terminal a progress line shows the bytes written (--quiet\n" +
			"hides it). Prints the record count, size, archive id and checksum (--json: the\n" +
			"API's answer). Without --namespaces the archive holds the namespace of\n" +
			"--namespace; every entry names the namespace it comes from.\n\n" +
			"Examples:\n" +
			"  memsvc export --output backup.cma\n" +
			"  memsvc export --output everything.cma --namespaces '*' --include-raw-journal\n" +
			"  memsvc export --output backup.cma --include-raw-journal --encrypt --encryption-key-stdin",
		Flags: fs,
		Exec: cli.NoArgs("export takes no arguments (use --output FILE)", func(ctx context.Context) error {
			req := memory.DefaultExportRequest()
			req.Format, req.IncludeRawJournal, req.IncludeSealed, req.IncludeSecret, req.Encrypt = *format, *raw, *sealed, *secret, *encrypt
			var err error
			if req.Namespaces, err = cli.NamespaceList("--namespaces", *nsFlag); err != nil {
				return err
			}
			if req.Stores, err = parseStores("--stores", *storesFlag); err != nil {
				return err
			}
			if f := norm(*format); f != "cma" && f != "jsonl" {
				return cli.Usagef("--format %q: want cma (or its alias jsonl)", *format)
			}
			if (!*sealed || !*secret) && !*raw {
				return cli.Usagef("--include-sealed and --include-secret filter the raw journal: add --include-raw-journal")
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
			return r.withService(ctx, func(ctx context.Context, svc memory.Service) error {
				var resp *memory.ExportResponse
				bar := r.progress(*quiet, cli.ProgressOptions{Label: "export", Unit: cli.Bytes})
				err := writeFileAtomic(*output, func(w io.Writer) error {
					var err error
					resp, err = svc.Export(ctx, &req, &cli.ProgressWriter{W: w, P: bar})
					return err
				})
				return printAnswer(r.stdout, *asJSON, resp, bar.Finish(err), func(w io.Writer, resp *memory.ExportResponse) error {
					_, err := fmt.Fprintf(w, "Exported %d records to %s (%d bytes, archive_id=%s, checksum=%s)\n",
						resp.RecordCount, *output, resp.SizeBytes, resp.ArchiveID, resp.Checksum)
					return err
				})
			})
		}),
	}
}

// writeFileAtomic writes path through a server.ExportFile: a locked
// temporary file next to it (mode 0600), synced and renamed into place once
// complete, so the target is never half written and a failed write leaves
// nothing behind. write gets the ExportFile itself, so an export through
// the embedded engine renames the file before it audits the export. The
// temporary files that killed exports left in the directory go first.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	if _, err := server.RemoveStaleExports(filepath.Dir(path)); err != nil {
		return err
	}
	f, err := server.CreateExportFile(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := write(f); err != nil {
		return err
	}
	return f.Commit()
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
	preserve := fs.BoolLong("preserve-namespaces", "put every entry into the namespace the archive names for it, not the one of --namespace")
	yes := fs.BoolLong("yes", "confirm --strategy replace without being asked")
	quiet := quietFlag(fs)
	asJSON := jsonFlag(fs)
	return &ff.Command{
		Name:      "import",
		Usage:     "memsvc import <PATH> [--strategy merge|replace [--yes]] [--conflict-resolution R] [--decryption-key-stdin]",
		ShortHelp: "read a CMA archive",
		LongHelp: "Imports a CMA archive into the namespace of --namespace, or with\n" +
			"--preserve-namespaces each entry into the namespace the archive names for it.\n" +
			"The archive is checked completely before anything is written, and written in\n" +
			"one atomic step. Prints how many records were imported\n" +
			"and, with merge, how many of the archive's records were skipped because a copy\n" +
			"was already stored (--json: the API's answer).\n\n" +
			"--strategy replace first deletes everything in the namespaces it imports into.\n" +
			"It asks for a typed confirmation on\n" +
			"a terminal; otherwise it needs --yes and is refused without it (exit 2).\n\n" +
			"Examples:\n" +
			"  memsvc import backup.cma\n" +
			"  memsvc import backup.cma --strategy replace --yes --decryption-key-stdin",
		Flags: fs,
		Exec: func(ctx context.Context, args []string) error {
			path, err := oneArg(args, "PATH")
			if err != nil {
				return err
			}
			req, ask, err := cli.ImportRequest(path, *strategy, *conflict, *preserve, *yes)
			if err != nil {
				return err
			}
			if ask && !r.terminal(r.stdin) {
				return cli.Usagef("--strategy replace deletes all stored data first: pass --yes to confirm (stdin is not a terminal, so there is no one to ask); nothing was changed")
			}
			pass, err := r.passphrase(*key, *keyStdin, "--decryption-key")
			if err != nil {
				return err
			}
			if pass != "" {
				req.DecryptionKey = &pass
			} else if err := checkUnencrypted(path); err != nil {
				return err
			}
			if ask {
				// The prompt says how many records replace everything.
				inArchive, err := archiveRecords(path, pass)
				if err != nil {
					return err
				}
				ok, err := cli.Confirm(r.stdin, r.stderr, fmt.Sprintf("This deletes ALL stored memories and raw entries of the namespaces it imports into and replaces them with the %d records of %s.\nType \"replace\" to continue: ", inArchive, path), "replace")
				if err != nil {
					return err
				}
				if !ok {
					fmt.Fprintln(r.stderr, "Not confirmed; nothing was changed.")
					return nil
				}
			}
			f, err := os.Open(path)
			if err != nil {
				return fmt.Errorf("open archive: %w", err)
			}
			defer f.Close()
			var size int64
			if st, err := f.Stat(); err == nil {
				size = st.Size()
			}
			return r.withWritingService(ctx, func(ctx context.Context, svc memory.Service) error {
				bar := r.progress(*quiet, cli.ProgressOptions{Label: "import", Unit: cli.Bytes, Total: size})
				resp, err := svc.Import(ctx, &req, bufio.NewReaderSize(&cli.ProgressReader{R: f, P: bar}, 1<<20))
				return printAnswer(r.stdout, *asJSON, resp, bar.Finish(err), func(w io.Writer, resp *memory.ImportResponse) error {
					return printImport(w, resp, path, req.ConflictResolution)
				})
			})
		},
	}
}
