package backup

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"memsvc.dev/memsvc/internal/fsutil"
	"os"
	"path/filepath"
	"time"

	"memsvc.dev/memsvc/pkg/archive"
	"memsvc.dev/memsvc/pkg/memory"
)

// Sentinel errors.
var (
	// ErrLocked: another run holds the backup directory.
	ErrLocked = errors.New("another backup is running in this directory")
	// ErrExists: a backup with the same name (the same second) exists.
	ErrExists = errors.New("backup already exists")
	// ErrMismatch: the file written does not match what the server
	// reported for the export.
	ErrMismatch = errors.New("backup does not match the export")
)

// Exporter streams an archive; memory.Service, and so pkg/client's Client,
// satisfies it.
type Exporter interface {
	Export(ctx context.Context, req *memory.ExportRequest, w io.Writer) (*memory.ExportResponse, error)
}

// Options configure Create.
type Options struct {
	// Dir is the backup directory; it is created (0700) when missing.
	Dir string
	// Keep is how many complete backups to keep, the new one included; at
	// least 1.
	Keep int
	// Request is sent to the server as is. When it asks for encryption,
	// its key is also used to verify the file.
	Request memory.ExportRequest
	// Now names the backup; nil means time.Now.
	Now func() time.Time
	// Logger receives what was deleted and why; nil discards.
	Logger *slog.Logger
	// Progress, when set, is called with the number of bytes written to
	// the file so far, after every write.
	Progress func(written int64)
}

// Result describes a completed backup.
type Result struct {
	// Path is the complete backup file.
	Path string
	// ArchiveID is the server's id of the export.
	ArchiveID string
	// Summary is what verifying the file found.
	Summary archive.Summary
	// Removed lists the older backups deleted by rotation.
	Removed []string
	// Leftovers lists the .part files of interrupted runs that were deleted.
	Leftovers []string
}

// Create writes, verifies and rotates one backup as the package comment
// describes. On error no new .cma and no .part file is left behind; if
// only the rotation fails, the backup is complete and the Result says so.
func Create(ctx context.Context, exp Exporter, o Options) (Result, error) {
	if o.Dir == "" {
		return Result{}, errors.New("backup directory is empty")
	}
	if o.Keep < 1 {
		return Result{}, fmt.Errorf("keep %d: at least 1 backup must be kept", o.Keep)
	}
	if o.Request.Encrypt && (o.Request.EncryptionKey == nil || *o.Request.EncryptionKey == "") {
		return Result{}, errors.New("encryption requested without a key")
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return Result{}, fmt.Errorf("create backup directory: %w", err)
	}
	unlock, err := lockDir(o.Dir)
	if err != nil {
		return Result{}, fmt.Errorf("lock %s: %w", o.Dir, err)
	}
	defer unlock()

	var res Result
	if res.Leftovers, err = removeLeftovers(o.Dir, log); err != nil {
		return res, err
	}
	name := Name(now())
	res.Path = filepath.Join(o.Dir, name)
	if err := absent(res.Path); err != nil {
		return res, err
	}
	part := res.Path + partSuffix
	resp, written, err := write(ctx, exp, &o.Request, part, o.Progress)
	if err == nil {
		res.Summary, err = check(part, &o.Request, resp, written)
	}
	if err == nil {
		err = absent(res.Path)
	}
	if err == nil {
		if err = os.Rename(part, res.Path); err != nil {
			err = fmt.Errorf("complete backup: %w", err)
		}
	}
	if err != nil {
		if rmErr := os.Remove(part); rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
			err = errors.Join(err, fmt.Errorf("remove %s: %w", part, rmErr))
		}
		return Result{Leftovers: res.Leftovers}, err
	}
	res.ArchiveID = resp.ArchiveID
	if err := fsutil.SyncDir(o.Dir); err != nil {
		return res, fmt.Errorf("sync backup directory: %w", err)
	}
	res.Removed, err = rotate(o.Dir, o.Keep, log, res.Path)
	return res, err
}

// absent fails with ErrExists when path exists.
func absent(path string) error {
	_, err := os.Lstat(path)
	switch {
	case err == nil:
		return fmt.Errorf("%s: %w", path, ErrExists)
	case errors.Is(err, fs.ErrNotExist):
		return nil
	default:
		return fmt.Errorf("check %s: %w", path, err)
	}
}

// write streams the export into a new file at path, then flushes, syncs
// and closes it. It returns the server's answer and the bytes written. The
// caller removes the file on error.
func write(ctx context.Context, exp Exporter, req *memory.ExportRequest, path string, progress func(int64)) (*memory.ExportResponse, int64, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, 0, fmt.Errorf("create backup file: %w", err)
	}
	written := &byteCount{progress: progress}
	bw := bufio.NewWriterSize(io.MultiWriter(f, written), 1<<20)
	resp, err := exp.Export(ctx, req, bw)
	if err == nil && resp == nil {
		err = errors.New("the server returned no export summary")
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		_ = f.Close()
		return nil, 0, fmt.Errorf("export: %w", err)
	}
	if err := bw.Flush(); err != nil {
		_ = f.Close()
		return nil, 0, fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return nil, 0, fmt.Errorf("sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return nil, 0, fmt.Errorf("close %s: %w", path, err)
	}
	return resp, written.n, nil
}

// check verifies the file at path and compares it with the server's answer.
func check(path string, req *memory.ExportRequest, resp *memory.ExportResponse, written int64) (archive.Summary, error) {
	var pass []byte
	if req.Encrypt && req.EncryptionKey != nil {
		pass = []byte(*req.EncryptionKey)
	}
	sum, err := VerifyFile(path, pass, nil)
	if err != nil {
		return sum, fmt.Errorf("verify %s: %w", path, err)
	}
	wantFormat := archive.FormatPlain
	if req.Encrypt {
		wantFormat = archive.FormatEncrypted
	}
	var problems []error
	if sum.Checksum != resp.Checksum {
		problems = append(problems, fmt.Errorf("checksum %s, the server reported %s", sum.Checksum, resp.Checksum))
	}
	if got := sum.Header.Records(); int64(got) != int64(resp.RecordCount) {
		problems = append(problems, fmt.Errorf("%d records, the server reported %d", got, resp.RecordCount))
	}
	if sum.Size != written || uint64(sum.Size) != resp.SizeBytes {
		problems = append(problems, fmt.Errorf("%d bytes read back, %d written, the server reported %d", sum.Size, written, resp.SizeBytes))
	}
	if sum.Format != wantFormat {
		problems = append(problems, fmt.Errorf("format %s, want %s", sum.Format, wantFormat))
	}
	if len(problems) > 0 {
		return sum, fmt.Errorf("verify %s: %w: %w", path, ErrMismatch, errors.Join(problems...))
	}
	return sum, nil
}

// VerifyFile reads the archive at path completely and verifies it, as
// archive.Verify does, with a size limit that fits the file. progress, when
// set, is called with the bytes read so far.
func VerifyFile(path string, passphrase []byte, progress func(int64)) (archive.Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return archive.Summary{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return archive.Summary{}, err
	}
	var r io.Reader = f
	if progress != nil {
		r = io.TeeReader(f, &byteCount{progress: progress})
	}
	return archive.Verify(r, archive.ReaderOptions{Passphrase: passphrase, MaxSize: SizeLimit(st.Size())})
}

// SizeLimit is the plaintext size limit for reading an archive file of
// size bytes: the archive package's default, or the file size when that is
// larger. The plaintext of a file is never longer than the file, and the
// reader streams, so this accepts every intact archive without letting a
// damaged one make the reader buffer more than the file holds.
func SizeLimit(size int64) int64 {
	return max(size, archive.DefaultMaxSize)
}

// byteCount is an io.Writer that only counts what is written to it and
// reports the running total to progress, when set. A backup's file writes
// are copied into one, and its verification reads teed through one.
type byteCount struct {
	n        int64
	progress func(int64)
}

func (c *byteCount) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	if c.progress != nil {
		c.progress(c.n)
	}
	return len(p), nil
}

// lockDir takes an exclusive, non-blocking lock on the directory itself,
// so the lock needs no extra file and disappears with the process.
func lockDir(dir string) (unlock func(), err error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := fsutil.TryLock(d); err != nil {
		_ = d.Close()
		if errors.Is(err, fsutil.ErrLocked) {
			return nil, ErrLocked
		}
		return nil, err
	}
	return func() { _ = d.Close() }, nil
}
