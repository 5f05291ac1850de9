package spool

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"memsvc.dev/memsvc/internal/fsutil"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Errors matched with errors.Is.
var (
	// ErrNotPrivate: an existing spool directory is readable, writable or
	// searchable by group or others, or belongs to another user.
	ErrNotPrivate = errors.New("spool directory is not private")
	// ErrSymlink: the spool directory path is a symbolic link.
	ErrSymlink = errors.New("spool directory is a symlink")
	// ErrMalformed: a batch file cannot be parsed.
	ErrMalformed = errors.New("malformed spool file")
	// ErrLocked: TryLock found the lock held by another process.
	ErrLocked = errors.New("spool lock held by another process")
)

// MaxFileBytes bounds what Read accepts; a larger file is malformed. The
// recorder writes batches of at most a few MiB.
const MaxFileBytes = 256 << 20

// DefaultStaleTemp is how old a *.tmp file must be before Open deletes it.
const DefaultStaleTemp = time.Hour

// File name parts.
const (
	batchPrefix   = "batch-"
	batchSuffix   = ".jsonl"
	badInfix      = ".bad-"
	tempSuffix    = ".tmp"
	lockSuffix    = ".lock"
	dirMode       = 0o700
	fileMode      = 0o600
	millisDigits  = 13
	uuidHexDigits = 32
)

// Options configure a Dir. The zero value is ready to use.
type Options struct {
	// Now is the clock for file names and temp-file ages; nil is
	// time.Now.
	Now func() time.Time
	// Rand supplies the random bits of UUIDs; nil is crypto/rand.
	Rand io.Reader
	// StaleTemp is the age after which Open removes leftover *.tmp
	// files; 0 selects DefaultStaleTemp, a negative value keeps them.
	StaleTemp time.Duration

	// beforeRename, when set (tests), runs after a temp file is synced
	// and before it is renamed; an error aborts the write there, as a
	// crash would.
	beforeRename func(tmp string) error
}

// Dir is an open spool directory. It is safe for concurrent use; separate
// processes coordinate through Lock and TryLock where they need to.
type Dir struct {
	path string
	opts Options

	mu     sync.Mutex
	lastMS int64
	seq    uint16
}

// Open checks (or creates) the spool directory at path as described in the
// package comment, removes stale temp files and returns the Dir.
func Open(path string, opts Options) (*Dir, error) {
	if strings.TrimSpace(path) == "" {
		return nil, errors.New("spool directory: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("spool directory %s: %w", path, err)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Rand == nil {
		opts.Rand = rand.Reader
	}
	if opts.StaleTemp == 0 {
		opts.StaleTemp = DefaultStaleTemp
	}
	d := &Dir{path: abs, opts: opts}
	if err := d.ensure(); err != nil {
		return nil, err
	}
	if opts.StaleTemp > 0 {
		if _, err := d.RemoveStaleTemp(opts.StaleTemp); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// Path returns the directory's absolute path.
func (d *Dir) Path() string { return d.path }

// ensure creates the directory if it is missing and checks it otherwise.
func (d *Dir) ensure() error {
	fi, err := os.Lstat(d.path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := mkdirParents(filepath.Dir(d.path)); err != nil {
			return err
		}
		switch err := os.Mkdir(d.path, dirMode); {
		case err == nil:
			// Ours: the umask may have removed owner bits we need.
			if err := os.Chmod(d.path, dirMode); err != nil {
				return fmt.Errorf("spool directory %s: %w", d.path, err)
			}
			return nil
		case errors.Is(err, fs.ErrExist):
			// Somebody else just made it: check it like any existing one.
			fi, err = os.Lstat(d.path)
			if err != nil {
				return fmt.Errorf("spool directory %s: %w", d.path, err)
			}
		default:
			return fmt.Errorf("create spool directory: %w", err)
		}
	} else if err != nil {
		return fmt.Errorf("spool directory %s: %w", d.path, err)
	}
	return d.check(fi)
}

// mkdirParents creates the missing directories of path with mode 0700
// (whatever the umask: a umask such as 0277 would otherwise leave
// directories their owner cannot write into).
func mkdirParents(path string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	if parent := filepath.Dir(path); parent != path {
		if err := mkdirParents(parent); err != nil {
			return err
		}
	}
	switch err := os.Mkdir(path, dirMode); {
	case err == nil:
		if err := os.Chmod(path, dirMode); err != nil {
			return fmt.Errorf("create spool directory parent: %w", err)
		}
	case !errors.Is(err, fs.ErrExist):
		return fmt.Errorf("create spool directory parent: %w", err)
	}
	return nil
}

// Check repeats the privacy check of Open on the directory as it is now.
func (d *Dir) Check() error {
	fi, err := os.Lstat(d.path)
	if err != nil {
		return fmt.Errorf("spool directory %s: %w", d.path, err)
	}
	return d.check(fi)
}

func (d *Dir) check(fi fs.FileInfo) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%w: %s must be a real directory, not a symlink; point the recorder at the target directory instead", ErrSymlink, d.path)
	case !fi.IsDir():
		return fmt.Errorf("spool directory %s: not a directory", d.path)
	}
	if !privateModeSupported {
		return nil
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%w: %s has mode %04o; it must not be accessible to group or others (the recorder does not change it: run chmod 700 %s if that is what you want)",
			ErrNotPrivate, d.path, perm, d.path)
	}
	if owner, ok := ownerOf(fi); ok && owner != os.Getuid() {
		return fmt.Errorf("%w: %s belongs to user id %d, not to the current user (%d)", ErrNotPrivate, d.path, owner, os.Getuid())
	}
	return nil
}

// newUUID returns a version 7 UUID in 32 hex digits, increasing within
// this Dir, and the millisecond it carries.
func (d *Dir) newUUID() (string, int64, error) {
	var b [16]byte
	if _, err := io.ReadFull(d.opts.Rand, b[6:]); err != nil {
		return "", 0, fmt.Errorf("uuid randomness: %w", err)
	}
	d.mu.Lock()
	ms := d.opts.Now().UnixMilli()
	if ms <= d.lastMS {
		ms = d.lastMS
		d.seq++
		if d.seq > 0x0fff {
			ms++
			d.seq = 0
		}
	} else {
		d.seq = (uint16(b[6])<<8 | uint16(b[7])) & 0x07ff
	}
	d.lastMS = ms
	seq := d.seq
	d.mu.Unlock()
	for i := 0; i < 6; i++ {
		b[i] = byte(ms >> (40 - 8*i))
	}
	b[6] = 0x70 | byte(seq>>8)&0x0f
	b[7] = byte(seq)
	b[8] = 0x80 | b[8]&0x3f
	return hex.EncodeToString(b[:]), ms, nil
}

// after makes the next UUID of d sort after the one in the batch name
// newest (a name IsBatchName accepts).
func (d *Dir) after(newest string) {
	hexID := strings.TrimSuffix(newest[len(batchPrefix)+millisDigits+1:], batchSuffix)
	b, err := hex.DecodeString(hexID)
	if err != nil || len(b) != 16 {
		return
	}
	var ms int64
	for i := 0; i < 6; i++ {
		ms = ms<<8 | int64(b[i])
	}
	seq := uint16(b[6]&0x0f)<<8 | uint16(b[7])
	d.mu.Lock()
	defer d.mu.Unlock()
	if ms > d.lastMS || ms == d.lastMS && seq > d.seq {
		d.lastMS, d.seq = ms, seq
	}
}

// IsBatchName reports whether name is the name of a pending batch:
// batch-<13 digits>-<32 hex digits>.jsonl.
func IsBatchName(name string) bool {
	rest, ok := strings.CutPrefix(name, batchPrefix)
	if !ok {
		return false
	}
	rest, ok = strings.CutSuffix(rest, batchSuffix)
	if !ok || len(rest) != millisDigits+1+uuidHexDigits || rest[millisDigits] != '-' {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		switch {
		case i == millisDigits:
		case i < millisDigits && c >= '0' && c <= '9':
		case i > millisDigits && (c >= '0' && c <= '9' || c >= 'a' && c <= 'f'):
		default:
			return false
		}
	}
	return true
}

// isQuarantineName reports whether name is a quarantined batch:
// <batch name>.bad-<32 hex digits>.
func isQuarantineName(name string) bool {
	i := strings.LastIndex(name, badInfix)
	if i <= 0 || !IsBatchName(name[:i]) {
		return false
	}
	id := name[i+len(badInfix):]
	return len(id) == uuidHexDigits && strings.Trim(id, "0123456789abcdef") == ""
}

// Pending returns the names of the pending batch files, oldest first.
func (d *Dir) Pending() ([]string, error) {
	return d.list(IsBatchName)
}

// Quarantined returns the names of the quarantined batch files.
func (d *Dir) Quarantined() ([]string, error) {
	return d.list(isQuarantineName)
}

func (d *Dir) list(match func(string) bool) ([]string, error) {
	entries, err := os.ReadDir(d.path)
	if err != nil {
		return nil, fmt.Errorf("list spool directory: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && match(e.Name()) {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names, nil
}

// file returns the path of a file in the directory, refusing names that
// could point elsewhere.
func (d *Dir) file(name string) (string, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || name != filepath.Base(name) {
		return "", fmt.Errorf("spool file name %q: not a plain file name", name)
	}
	return filepath.Join(d.path, name), nil
}

// Write stores records (each one JSON object) as a new batch file and
// returns its name. The file is complete and durable when Write returns.
//
// The name sorts after every batch pending when Write starts, whichever
// process wrote it: the name's clock never goes below the newest pending
// name's. So Pending lists batches in the order they were written, also
// across processes, as long as the writes do not overlap (and a clock that
// steps back cannot put a new batch before an old one).
func (d *Dir) Write(records [][]byte) (string, error) {
	data, err := Encode(records)
	if err != nil {
		return "", err
	}
	if err := d.Check(); err != nil {
		return "", err
	}
	pending, err := d.Pending()
	if err != nil {
		return "", err
	}
	if len(pending) > 0 {
		d.after(pending[len(pending)-1])
	}
	id, ms, err := d.newUUID()
	if err != nil {
		return "", err
	}
	name := fmt.Sprintf("%s%0*d-%s%s", batchPrefix, millisDigits, ms, id, batchSuffix)
	if err := d.writeAtomic(name, name+tempSuffix, data); err != nil {
		return "", err
	}
	return name, nil
}

// Read reads and parses a batch file.
func (d *Dir) Read(name string) ([][]byte, error) {
	p, err := d.file(name)
	if err != nil {
		return nil, err
	}
	data, err := readBounded(p, MaxFileBytes)
	if err != nil {
		return nil, err
	}
	recs, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("spool file %s: %w", name, err)
	}
	return recs, nil
}

// readBounded reads a regular file of at most limit bytes; a larger one is
// malformed.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open spool file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read spool file %s: %w", filepath.Base(path), err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("spool file %s: %w: larger than %d bytes", filepath.Base(path), ErrMalformed, limit)
	}
	return data, nil
}

// Rewrite atomically replaces batch name with records, the part of it that
// still has to be sent. With no records left the file is removed.
func (d *Dir) Rewrite(name string, records [][]byte) error {
	if len(records) == 0 {
		return d.Remove(name)
	}
	if _, err := d.file(name); err != nil {
		return err
	}
	data, err := Encode(records)
	if err != nil {
		return err
	}
	id, _, err := d.newUUID()
	if err != nil {
		return err
	}
	return d.writeAtomic(name, name+".rewrite-"+id+tempSuffix, data)
}

// Remove deletes a file of the directory (a sent batch); a file that is
// already gone is not an error.
func (d *Dir) Remove(name string) error {
	p, err := d.file(name)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove spool file: %w", err)
	}
	return d.syncDir()
}

// Quarantine renames batch name to name.bad-<uuid>, where it stays for
// inspection and is never picked up again. It returns the new name.
func (d *Dir) Quarantine(name string) (string, error) {
	p, err := d.file(name)
	if err != nil {
		return "", err
	}
	id, _, err := d.newUUID()
	if err != nil {
		return "", err
	}
	bad := name + badInfix + id
	if err := os.Rename(p, filepath.Join(d.path, bad)); err != nil {
		return "", fmt.Errorf("quarantine spool file: %w", err)
	}
	return bad, d.syncDir()
}

// RemoveStaleTemp deletes *.tmp files whose modification time is more than
// olderThan ago and returns how many it removed. Younger ones may belong to
// a writer that is still running.
func (d *Dir) RemoveStaleTemp(olderThan time.Duration) (int, error) {
	entries, err := os.ReadDir(d.path)
	if err != nil {
		return 0, fmt.Errorf("list spool directory: %w", err)
	}
	cutoff := d.opts.Now().Add(-olderThan)
	n := 0
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), tempSuffix) {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.ModTime().Before(cutoff) {
			continue
		}
		if err := os.Remove(filepath.Join(d.path, e.Name())); err == nil {
			n++
		}
	}
	return n, nil
}

// Probe proves the directory is usable: it checks privacy, writes a small
// file the way batches are written and removes it again.
func (d *Dir) Probe() error {
	if err := d.Check(); err != nil {
		return err
	}
	id, _, err := d.newUUID()
	if err != nil {
		return err
	}
	name := ".probe-" + id
	if err := d.writeAtomic(name, name+tempSuffix, []byte("ok\n")); err != nil {
		return err
	}
	return d.Remove(name)
}

// ReadState returns the contents of a small state file, or nil when it does
// not exist. State files are not batches; Pending never lists them.
func (d *Dir) ReadState(name string) ([]byte, error) {
	if IsBatchName(name) {
		return nil, fmt.Errorf("state file name %q: reserved for batches", name)
	}
	p, err := d.file(name)
	if err != nil {
		return nil, err
	}
	data, err := readBounded(p, MaxFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// WriteState atomically and durably replaces a small state file.
func (d *Dir) WriteState(name string, data []byte) error {
	return d.writeState(name, data, true)
}

// WriteCache atomically replaces a small state file that the caller can
// do without after a crash (a cache): readers see the old or the new
// content whole, but nothing is synced to disk, so a crash may bring back
// the old one.
func (d *Dir) WriteCache(name string, data []byte) error {
	return d.writeState(name, data, false)
}

func (d *Dir) writeState(name string, data []byte, durable bool) error {
	if IsBatchName(name) {
		return fmt.Errorf("state file name %q: reserved for batches", name)
	}
	if _, err := d.file(name); err != nil {
		return err
	}
	id, _, err := d.newUUID()
	if err != nil {
		return err
	}
	return d.writeFile(name, name+"."+id+tempSuffix, data, durable)
}

// writeAtomic writes data to tmp (exclusively, 0600), syncs it, renames it
// to name and syncs the directory.
func (d *Dir) writeAtomic(name, tmp string, data []byte) error {
	return d.writeFile(name, tmp, data, true)
}

// writeFile is writeAtomic, with the syncs only when durable.
func (d *Dir) writeFile(name, tmp string, data []byte, durable bool) error {
	tp := filepath.Join(d.path, tmp)
	f, err := os.OpenFile(tp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		return fmt.Errorf("create spool file: %w", err)
	}
	_, err = f.Write(data)
	if err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && d.opts.beforeRename != nil {
		if err = d.opts.beforeRename(tp); err != nil {
			return err // as a crash would: the temp file stays behind
		}
	}
	if err == nil {
		err = os.Rename(tp, filepath.Join(d.path, name))
	}
	if err != nil {
		_ = os.Remove(tp)
		return fmt.Errorf("write spool file %s: %w", name, err)
	}
	if !durable {
		return nil
	}
	return d.syncDir()
}

// syncDir makes renames and removals in the directory durable.
func (d *Dir) syncDir() error {
	if err := fsutil.SyncDir(d.path); err != nil {
		return fmt.Errorf("sync spool directory: %w", err)
	}
	return nil
}
