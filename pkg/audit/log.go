package audit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// Options configures Open.
type Options struct {
	// VerifyFull makes Open verify every line of an existing log instead
	// of only the last two. It costs time in proportion to the log.
	VerifyFull bool
	// Logger receives the warning when Open cuts off a torn final line.
	// Nil discards it.
	Logger *slog.Logger
}

// Log appends entries to an audit log file. It is safe for concurrent use.
type Log struct {
	path string
	log  *slog.Logger

	mu   sync.Mutex
	f    logFile
	last uint64
	head string
	// size is the length of the file up to the end of the last entry
	// known to be durable.
	size int64
	// err is the write or sync failure of the last append; the next
	// append first cuts the file back to size.
	err    error
	closed bool
	// failures counts the appends that failed to write or sync.
	failures atomic.Uint64
}

// SequenceError is returned by Append for an event whose sequence does not
// continue the log. It matches ErrSequence.
type SequenceError struct {
	// Want is the sequence the event needed.
	Want uint64
	// Got is the sequence it had.
	Got uint64
}

func (e *SequenceError) Error() string {
	if e.Got < e.Want {
		return fmt.Sprintf("audit event sequence %d repeats an entry: next is %d", e.Got, e.Want)
	}
	return fmt.Sprintf("audit event sequence %d leaves a gap: next is %d", e.Got, e.Want)
}

// Is makes a SequenceError match ErrSequence.
func (e *SequenceError) Is(target error) bool { return target == ErrSequence }

// Open opens the log at path for appending, creating the file and its
// directory when missing, and checks the existing tail (or, with
// Options.VerifyFull, every line). A torn final line is cut off with a
// warning; a line that does not verify is a *BrokenError. See the package
// comment for what is checked.
func Open(path string, opts Options) (*Log, error) {
	return open(path, opts, osFS{})
}

func open(path string, opts Options, fsys fileSys) (*Log, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if path == "" {
		return nil, errors.New("open audit log: empty path")
	}
	dir := filepath.Dir(path)
	if err := fsys.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create audit log directory: %w", err)
	}
	f, err := fsys.OpenLog(path)
	if err != nil {
		return nil, fmt.Errorf("open audit log %s: %w", path, err)
	}
	l := &Log{path: path, f: f, log: logger}
	if err := l.recover(opts.VerifyFull, logger, func() error { return fsys.SyncDir(dir) }); err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

// recover learns the head of the existing file and cuts off a torn tail.
func (l *Log) recover(full bool, logger *slog.Logger, syncDir func() error) error {
	st, err := l.f.Stat()
	if err != nil {
		return fmt.Errorf("stat audit log: %w", err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("open audit log: %s is not a regular file", l.path)
	}
	size := st.Size()
	if size == 0 {
		// Possibly just created: make the directory entry durable.
		if err := syncDir(); err != nil {
			return fmt.Errorf("sync audit log directory: %w", err)
		}
	}
	end, err := lineStart(l.f, size, -1)
	if err != nil {
		return fmt.Errorf("read audit log: %w", err)
	}
	complete := io.NewSectionReader(l.f, 0, end)
	var rep Report
	if full {
		rep, err = verify(complete, nil)
	} else if rep, err = verifyTail(l.f, end); err != nil {
		// Name the first broken line.
		if _, ferr := verify(complete, nil); ferr != nil {
			err = ferr
		}
	}
	if err != nil {
		if be, ok := errors.AsType[*BrokenError](err); ok {
			be.Path = l.path
		}
		return err
	}

	if end < size {
		torn := size - end
		ok := torn <= MaxLineSize
		if ok {
			tail := make([]byte, torn)
			if _, err := l.f.ReadAt(tail, end); err != nil {
				return fmt.Errorf("read audit log: %w", err)
			}
			ok = looksTorn(tail)
		}
		if !ok {
			return &BrokenError{
				Path:     l.path,
				Line:     int(rep.LastSequence) + 1,
				Sequence: rep.LastSequence + 1,
				Fault:    FaultSyntax,
				Reason:   fmt.Sprintf("final %d bytes have no newline and are not a partial entry; not truncating", torn),
			}
		}
		logger.Warn("audit log: cutting off torn final line",
			"path", l.path, "offset", end, "bytes", torn, "last_sequence", rep.LastSequence)
		if err := l.f.Truncate(end); err != nil {
			return fmt.Errorf("truncate torn audit log line: %w", err)
		}
		if err := l.f.Sync(); err != nil {
			return fmt.Errorf("sync audit log: %w", err)
		}
	}
	l.last, l.head, l.size = rep.LastSequence, rep.HeadHash, end
	return nil
}

// looksTorn reports whether b, the bytes after a log's last LF, can be
// what a cut-short append leaves: the start of an entry, or, where a crash
// left blocks unwritten, zeros.
func looksTorn(b []byte) bool {
	if b[0] == 0 {
		return true
	}
	n := min(len(b), len(bodyStart))
	return string(b[:n]) == bodyStart[:n]
}

var errTail = fmt.Errorf("%w: tail does not verify", ErrBroken)

// verifyTail checks the last two lines of the complete lines in r[:end]:
// each canonical with a correct entry_hash, and the last linked to the one
// before, or to the genesis if it is the only one.
func verifyTail(r io.ReaderAt, end int64) (Report, error) {
	rep := Report{HeadHash: GenesisHash}
	if end == 0 {
		return rep, nil
	}
	enc := newEncoder()
	read := func(nl int64) (*entry, int64, error) {
		start, err := lineStart(r, nl, MaxLineSize+1)
		if err != nil {
			return nil, 0, err
		}
		line := make([]byte, nl-start)
		if _, err := r.ReadAt(line, start); err != nil {
			return nil, 0, fmt.Errorf("read audit log: %w", err)
		}
		e, f, _ := parseLine(enc, line)
		if f != "" || entryHash(line) != e.entryHash || e.ev.Sequence == 0 {
			return nil, 0, errTail
		}
		return &e, start, nil
	}
	last, start, err := read(end - 1)
	if err != nil {
		return rep, err
	}
	prevSeq, prevHash := uint64(0), GenesisHash
	if start > 0 {
		prev, _, err := read(start - 1)
		if err != nil {
			return rep, err
		}
		if prev.ev.Sequence == 1 && prev.prevHash != GenesisHash {
			return rep, errTail
		}
		prevSeq, prevHash = prev.ev.Sequence, prev.entryHash
	}
	if f, _ := checkLink(prevSeq, prevHash, last); f != "" {
		return rep, errTail
	}
	return Report{Entries: last.ev.Sequence, LastSequence: last.ev.Sequence, HeadHash: last.entryHash}, nil
}

// lineStart returns the offset just after the last LF before offset pos,
// or 0 if there is none. With limit >= 0 it looks back at most limit bytes
// and fails with errTail beyond that.
func lineStart(r io.ReaderAt, pos int64, limit int64) (int64, error) {
	const chunk = 64 << 10
	buf := make([]byte, min(chunk, pos))
	for at := pos; at > 0; {
		if limit >= 0 && pos-at > limit {
			return 0, errTail
		}
		n := min(int64(len(buf)), at)
		b := buf[:n]
		if _, err := r.ReadAt(b, at-n); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return at - n + int64(i) + 1, nil
		}
		at -= n
	}
	return 0, nil
}

// Path returns the file the Log writes.
func (l *Log) Path() string { return l.path }

// Last returns the sequence and entry_hash of the last entry in the log, or
// 0 and GenesisHash if it is empty.
func (l *Log) Last() (seq uint64, hash string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last, l.head
}

// Append writes events as the next entries of the log, in order, with one
// write and one sync, and returns once they are durable. Their sequences
// must continue the log without gap or repeat, or Append returns a
// *SequenceError and writes nothing; an event that cannot be written is an
// ErrInvalidEvent and nothing is written either.
//
// A failed write or sync (a full disk, say) leaves the log without the
// events and Err reports the failure. The next Append first cuts the file
// back to its last durable entry and syncs that; when this succeeds (space
// has come back) it appends as usual, so the caller retries the same
// events without reopening the Log.
func (l *Log) Append(events ...Event) error {
	if len(events) == 0 {
		return nil
	}
	enc := newEncoder()
	bodies := make([][]byte, len(events))
	total := 0
	for i := range events {
		body, err := enc.appendBody(nil, &events[i])
		if err != nil {
			return fmt.Errorf("audit event %d: %w: %w", events[i].Sequence, ErrInvalidEvent, err)
		}
		if n := lineSize(body); n > MaxLineSize {
			return fmt.Errorf("audit event %d: %w: line of %d bytes is over the limit", events[i].Sequence, ErrInvalidEvent, n)
		}
		bodies[i] = body
		total += lineSize(body) + 1
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if l.err != nil {
		if err := l.repair(); err != nil {
			l.failures.Add(1)
			return fmt.Errorf("audit log still failing (%w) after: %w", err, l.err)
		}
	}
	for i := range events {
		if want := l.last + 1 + uint64(i); events[i].Sequence != want {
			return &SequenceError{Want: want, Got: events[i].Sequence}
		}
	}
	buf := make([]byte, 0, total)
	head := l.head
	for _, body := range bodies {
		buf, head = appendLine(buf, body, head)
	}
	if _, err := l.f.Write(buf); err != nil {
		l.err = fmt.Errorf("write audit log: %w", err)
		l.failures.Add(1)
		return l.err
	}
	if err := l.f.Sync(); err != nil {
		l.err = fmt.Errorf("sync audit log: %w", err)
		l.failures.Add(1)
		return l.err
	}
	l.last += uint64(len(events))
	l.head = head
	l.size += int64(len(buf))
	return nil
}

// repair cuts off whatever a failed append left after the last durable
// entry and makes the cut durable. Entries before it were synced when
// they were appended, so a successful sync here means the file is exactly
// the entries acknowledged so far.
func (l *Log) repair() error {
	if err := l.f.Truncate(l.size); err != nil {
		return fmt.Errorf("truncate audit log: %w", err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("sync audit log: %w", err)
	}
	l.log.Info("audit log: appending again after a failed write", "path", l.path, "failure", l.err.Error(), "last_sequence", l.last)
	l.err = nil
	return nil
}

// Err returns the failure of the last append, or nil when the log is
// appending normally. It does not try to recover; the next Append does.
func (l *Log) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Failures is the number of appends that failed to write or sync (a full
// disk, say) since the log was opened: a counter for monitoring, which
// keeps growing while the caller retries.
func (l *Log) Failures() uint64 { return l.failures.Load() }

// Close closes the file and releases the writer lock. Closing twice is not
// an error.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("close audit log: %w", err)
	}
	return nil
}
