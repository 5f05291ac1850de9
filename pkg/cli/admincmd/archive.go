package admincmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/peterbourgon/ff/v4"

	"memsvc.dev/memsvc/pkg/archive"
	"memsvc.dev/memsvc/pkg/backup"
	"memsvc.dev/memsvc/pkg/cli"
	"memsvc.dev/memsvc/pkg/memory"
)

func (r *root) archiveCmd() *ff.Command {
	return r.group("archive", "check CMA archives (backups and exports)",
		"Reads CMA archives on disk. Neither command needs a server; neither prints\n"+
			"memory content.",
		r.archiveVerifyCmd(), r.archiveInspectCmd())
}

// keyFlags adds the --decryption-key pair to fs and returns a function that
// resolves them.
func (r *root) keyFlags(fs *ff.FlagSet) func() ([]byte, error) {
	key := fs.StringLong("decryption-key", "", "passphrase of an encrypted archive (visible in process listings; prefer --decryption-key-stdin)")
	keyStdin := fs.BoolLong("decryption-key-stdin", "read the passphrase from stdin (prompted without echo on a terminal)")
	return func() ([]byte, error) {
		s, err := cli.Secret(r.stdin, r.stderr, *key, *keyStdin, "--decryption-key", "Archive passphrase: ")
		if err != nil || s == "" {
			return nil, err
		}
		return []byte(s), nil
	}
}

func (r *root) archiveVerifyCmd() *ff.Command {
	return r.scanCmd(&ff.Command{
		Name:      "verify",
		Usage:     "memsvc-admin archive verify <FILE> [--decryption-key-stdin | --decryption-key KEY]",
		ShortHelp: "check an archive completely (JSON)",
		LongHelp: "Reads the whole archive, streaming: the envelope of an encrypted archive, every\n" +
			"record, the record counts of the header and the checksum of the footer. Prints\n" +
			"path, format (plaintext, encrypted or legacy), version, header time, record\n" +
			"counts (curated per store, raw), size, checksum and \"ok\": true.\n\n" +
			"A broken archive prints \"ok\": false with the kind of problem (not_archive,\n" +
			"need_key, wrong_key, truncated, checksum, count_mismatch, corrupt, too_large,\n" +
			"unsupported, io) and, when it is on one line, the line number; the message on\n" +
			"stderr says what is wrong; the exit code is 1.\n\n" +
			"Examples:\n" +
			"  memsvc-admin archive verify backup.cma\n" +
			"  printf '%s\\n' \"$PASSPHRASE\" | memsvc-admin archive verify backup.cma --decryption-key-stdin",
	}, func(path string, sc *scan, err error) error {
		if err != nil {
			return r.archiveFailed(path, sc, err)
		}
		return cli.PrintJSON(r.stdout, verifyReport{
			Path:           path,
			Format:         formatName(sc.sum.Format),
			Version:        sc.sum.Header.Version,
			Timestamp:      sc.sum.Header.Timestamp,
			Records:        sc.sum.Header.Records(),
			CuratedRecords: sc.sum.Header.Curated,
			CuratedByStore: sc.stores,
			RawRecords:     sc.sum.Header.Raw,
			SizeBytes:      sc.sum.Size,
			Checksum:       sc.sum.Checksum,
			OK:             true,
		})
	})
}

func (r *root) archiveInspectCmd() *ff.Command {
	return r.scanCmd(&ff.Command{
		Name:      "inspect",
		Usage:     "memsvc-admin archive inspect <FILE> [--decryption-key-stdin | --decryption-key KEY]",
		ShortHelp: "describe an archive without printing memory content (JSON)",
		LongHelp: "Prints the format, whether the archive is encrypted, the header (version, export\n" +
			"time, declared counts), curated records per store, raw journal records per\n" +
			"visibility and per secrecy level, the creation-time range of each kind, the size\n" +
			"and the checksum. No content, summary or metadata of any record is printed.\n\n" +
			"The archive is read completely, so inspect also verifies it (\"verified\": true);\n" +
			"a damaged archive is reported as by `archive verify`, with exit code 1. An\n" +
			"encrypted archive without its passphrase is reported as encrypted and nothing\n" +
			"more (exit 0): its header and counts are inside the encryption. (An archive in\n" +
			"upstream's legacy envelope carries no marker, so without its passphrase it is\n" +
			"reported as not an archive.)\n\n" +
			"Examples:\n" +
			"  memsvc-admin archive inspect backup.cma\n" +
			"  memsvc-admin archive inspect secret.cma --decryption-key-stdin < passphrase.txt",
	}, func(path string, sc *scan, err error) error {
		if errors.Is(err, archive.ErrNeedKey) {
			return cli.PrintJSON(r.stdout, inspectReport{
				Path:      path,
				Format:    formatName(archive.FormatEncrypted),
				Encrypted: true,
				SizeBytes: sc.fileSize,
				Note:      "the header, counts and records are encrypted; pass --decryption-key-stdin to inspect them",
			})
		}
		if err != nil {
			return r.archiveFailed(path, sc, err)
		}
		h := sc.sum.Header
		return cli.PrintJSON(r.stdout, inspectReport{
			Path:      path,
			Format:    formatName(sc.sum.Format),
			Encrypted: sc.sum.Format != archive.FormatPlain,
			Header: &headerReport{
				Version: h.Version, Timestamp: h.Timestamp, RecordCount: h.Records(),
				CuratedRecordCount: h.Curated, RawRecordCount: h.Raw,
			},
			Curated: &curatedReport{
				Count: h.Curated, ByStore: sc.stores,
				OldestCreatedAt: timePtr(sc.curatedSpan.first), NewestCreatedAt: timePtr(sc.curatedSpan.last),
			},
			Raw: &rawReport{
				Count: h.Raw, ByVisibility: sc.visibility, BySecrecy: sc.secrecy,
				OldestCreatedAt: timePtr(sc.rawSpan.first), NewestCreatedAt: timePtr(sc.rawSpan.last),
			},
			SizeBytes: sc.sum.Size,
			Checksum:  sc.sum.Checksum,
			Verified:  true,
		})
	})
}

// verifyReport is the output of archive verify for a good archive.
type verifyReport struct {
	Path           string         `json:"path"`
	Format         string         `json:"format"`
	Version        string         `json:"version"`
	Timestamp      time.Time      `json:"timestamp"`
	Records        int            `json:"records"`
	CuratedRecords int            `json:"curated_records"`
	CuratedByStore map[string]int `json:"curated_by_store"`
	RawRecords     int            `json:"raw_records"`
	SizeBytes      int64          `json:"size_bytes"`
	Checksum       string         `json:"checksum"`
	OK             bool           `json:"ok"`
}

// inspectReport is the output of archive inspect.
type inspectReport struct {
	Path      string         `json:"path"`
	Format    string         `json:"format"`
	Encrypted bool           `json:"encrypted"`
	Header    *headerReport  `json:"header,omitempty"`
	Curated   *curatedReport `json:"curated,omitempty"`
	Raw       *rawReport     `json:"raw,omitempty"`
	SizeBytes int64          `json:"size_bytes"`
	Checksum  string         `json:"checksum,omitempty"`
	Verified  bool           `json:"verified"`
	Note      string         `json:"note,omitempty"`
}

type headerReport struct {
	Version            string    `json:"version"`
	Timestamp          time.Time `json:"timestamp"`
	RecordCount        int       `json:"record_count"`
	CuratedRecordCount int       `json:"curated_record_count"`
	RawRecordCount     int       `json:"raw_record_count"`
}

type curatedReport struct {
	Count           int            `json:"count"`
	ByStore         map[string]int `json:"by_store"`
	OldestCreatedAt *time.Time     `json:"oldest_created_at"`
	NewestCreatedAt *time.Time     `json:"newest_created_at"`
}

type rawReport struct {
	Count           int            `json:"count"`
	ByVisibility    map[string]int `json:"by_visibility"`
	BySecrecy       map[string]int `json:"by_secrecy"`
	OldestCreatedAt *time.Time     `json:"oldest_created_at"`
	NewestCreatedAt *time.Time     `json:"newest_created_at"`
}

// archiveFailure is the output of archive verify and inspect for an
// archive that does not verify.
type archiveFailure struct {
	Path    string `json:"path"`
	Format  string `json:"format"`
	OK      bool   `json:"ok"`
	Problem string `json:"problem"`
	Line    int    `json:"line,omitempty"`
	Error   string `json:"error"`
}

// archiveFailed prints the failure report and returns the error for
// stderr and exit code 1.
func (r *root) archiveFailed(path string, sc *scan, err error) error {
	err = archiveError(path, err)
	problem, line := archiveProblem(err)
	if perr := cli.PrintJSON(r.stdout, archiveFailure{
		Path: path, Format: formatName(sc.format), Problem: problem, Line: line, Error: err.Error(),
	}); perr != nil {
		return errors.Join(err, perr)
	}
	return err
}

// archiveError names the file and, for an encrypted archive without a
// passphrase, says how to give one.
func archiveError(path string, err error) error {
	if errors.Is(err, archive.ErrNeedKey) {
		return fmt.Errorf("archive %s: %w; pass --decryption-key-stdin (or --decryption-key)", path, err)
	}
	return fmt.Errorf("archive %s: %w", path, err)
}

// archiveProblem classifies an archive error for scripts and returns the
// line it is on, if any.
func archiveProblem(err error) (string, int) {
	line := 0
	if le, ok := errors.AsType[*archive.LineError](err); ok {
		line = le.Line
	}
	for _, p := range []struct {
		err  error
		name string
	}{
		{archive.ErrNeedKey, "need_key"},
		{archive.ErrWrongKey, "wrong_key"},
		{archive.ErrNotArchive, "not_archive"},
		{archive.ErrUnsupported, "unsupported"},
		{archive.ErrTooLarge, "too_large"},
		{archive.ErrTruncated, "truncated"},
		{archive.ErrChecksum, "checksum"},
		{archive.ErrCountMismatch, "count_mismatch"},
		{archive.ErrCorrupt, "corrupt"},
	} {
		if errors.Is(err, p.err) {
			return p.name, line
		}
	}
	return "io", line
}

// formatName is how the commands call an archive format.
func formatName(f archive.Format) string {
	switch f {
	case archive.FormatPlain:
		return "plaintext"
	case archive.FormatEncrypted:
		return "encrypted"
	case archive.FormatLegacy:
		return "legacy"
	default:
		return "unknown"
	}
}

// scan is what reading a whole archive found.
type scan struct {
	fileSize    int64
	format      archive.Format // detected from the first bytes, then as read
	sum         archive.Summary
	stores      map[string]int
	visibility  map[string]int
	secrecy     map[string]int
	curatedSpan span
	rawSpan     span
}

// span is a time range; zero until the first time is added.
type span struct{ first, last time.Time }

func (s *span) add(t time.Time) {
	if s.first.IsZero() || t.Before(s.first) {
		s.first = t
	}
	if s.last.IsZero() || t.After(s.last) {
		s.last = t
	}
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// scanCmd completes cmd (its name and help) into a command that reads a
// whole archive, as archive verify and inspect do: it takes the key flags
// and one FILE argument, scans the archive (scanArchive) under a progress
// line named after the command, and hands the path, the scan and its error
// to report. A bad command line or passphrase is returned before anything
// is read, so report only sees what the archive itself holds.
func (r *root) scanCmd(cmd *ff.Command, report func(path string, sc *scan, err error) error) *ff.Command {
	fs := r.subFlags(cmd.Name)
	passphrase := r.keyFlags(fs)
	cmd.Flags = fs
	cmd.Exec = func(ctx context.Context, args []string) error {
		path, err := oneFile(args)
		if err != nil {
			return err
		}
		pass, err := passphrase()
		if err != nil {
			return err
		}
		bar := r.bar(cmd.Name, fileSize(path))
		sc, err := scanArchive(path, pass, bar)
		bar.Done()
		return report(path, sc, err)
	}
	return cmd
}

// scanArchive reads and verifies the archive at path, counting records by
// store, visibility and secrecy, and shows the bytes read on bar (nil:
// nowhere). It returns what it learnt even on error (at least the file
// size and the detected format).
func scanArchive(path string, passphrase []byte, bar *cli.Progress) (*scan, error) {
	sc := &scan{stores: map[string]int{}, visibility: map[string]int{}, secrecy: map[string]int{}}
	for _, st := range memory.AllStores() {
		sc.stores[st.String()] = 0
	}
	for v := memory.VisibilityNormal; v.Valid(); v++ {
		sc.visibility[v.String()] = 0
	}
	for s := memory.SecrecyPublic; s.Valid(); s++ {
		sc.secrecy[s.String()] = 0
	}
	f, err := os.Open(path)
	if err != nil {
		return sc, fmt.Errorf("open: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return sc, fmt.Errorf("stat: %w", err)
	}
	if !st.Mode().IsRegular() {
		return sc, fmt.Errorf("not a regular file (%s)", st.Mode().Type())
	}
	sc.fileSize = st.Size()
	prefix := make([]byte, archive.DetectLen)
	n, err := io.ReadFull(f, prefix)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return sc, fmt.Errorf("read: %w", err)
	}
	sc.format = archive.Detect(prefix[:n])
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return sc, fmt.Errorf("read: %w", err)
	}
	ar, err := archive.NewReader(&cli.ProgressReader{R: f, P: bar}, archive.ReaderOptions{Passphrase: passphrase, MaxSize: backup.SizeLimit(sc.fileSize)})
	if err != nil {
		return sc, err
	}
	sc.format = ar.Format()
	for {
		e, err := ar.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return sc, err
		}
		switch {
		case e.Record != nil:
			sc.stores[e.Record.Store.String()]++
			sc.curatedSpan.add(e.Record.CreatedAt)
		case e.Raw != nil:
			sc.visibility[e.Raw.Visibility.String()]++
			sc.secrecy[e.Raw.SecrecyLevel.String()]++
			sc.rawSpan.add(e.Raw.CreatedAt)
		}
	}
	sc.sum = ar.Summary()
	return sc, nil
}

// fileSize is the size of the file at path, or 0 when it cannot be told
// (the command reports that problem itself).
func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// oneFile returns the single FILE argument.
func oneFile(args []string) (string, error) {
	switch len(args) {
	case 0:
		return "", cli.Usagef("missing FILE")
	case 1:
		if args[0] == "" {
			return "", cli.Usagef("FILE is empty")
		}
		return args[0], nil
	default:
		return "", cli.Usagef("want one FILE, got %d arguments", len(args))
	}
}
