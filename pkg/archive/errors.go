package archive

import (
	"errors"
	"fmt"
)

// Sentinel errors. Test for them with errors.Is; the messages of the errors
// that wrap them say what exactly was wrong.
var (
	// ErrNotArchive: the input is neither a plaintext CMA archive nor an
	// encrypted envelope (without a passphrase, a legacy encrypted archive
	// also looks like this).
	ErrNotArchive = errors.New("not a CMA archive")
	// ErrNeedKey: the input is an encrypted archive and no passphrase was
	// given.
	ErrNeedKey = errors.New("archive is encrypted: passphrase required")
	// ErrWrongKey: the passphrase does not open the archive. For our
	// envelope this means the key check failed (a wrong passphrase or a
	// damaged KDF header); for the legacy envelope it may also mean the
	// data is damaged or not an archive at all.
	ErrWrongKey = errors.New("wrong passphrase")
	// ErrCorrupt: the archive is recognised but damaged: a bad line, a
	// failed chunk, a count or checksum mismatch, truncation.
	ErrCorrupt = errors.New("corrupt archive")
	// ErrTruncated refines ErrCorrupt: the input ends early.
	ErrTruncated = errors.New("truncated")
	// ErrChecksum refines ErrCorrupt: the footer checksum differs from the
	// entries.
	ErrChecksum = errors.New("checksum mismatch")
	// ErrCountMismatch: the number of entries differs from the header. A
	// Reader wraps it together with ErrCorrupt; Writer.Close returns it
	// alone when the caller wrote a different number of records than
	// declared.
	ErrCountMismatch = errors.New("record count mismatch")
	// ErrTooLarge: the archive, a line, or the KDF parameters exceed a
	// limit.
	ErrTooLarge = errors.New("too large")
	// ErrSizeLimit refines ErrTooLarge: the whole archive exceeds
	// ReaderOptions.MaxSize (the one limit a caller may want to raise).
	ErrSizeLimit = fmt.Errorf("%w: over the size limit", ErrTooLarge)
	// ErrUnsupported: an archive version, envelope version or KDF this
	// package does not know.
	ErrUnsupported = errors.New("unsupported format")
	// ErrEmptyPassphrase: encryption was asked for with an empty
	// passphrase. (A Reader treats an empty passphrase as none.)
	ErrEmptyPassphrase = errors.New("empty passphrase")
)

// LineError is a problem on one line of the plaintext archive.
type LineError struct {
	Line int   // 1-based line number in the plaintext archive
	Err  error // wraps one of the sentinels
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// Unwrap returns the underlying error.
func (e *LineError) Unwrap() error { return e.Err }

// corrupt builds an error wrapping ErrCorrupt.
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// truncated builds an error wrapping ErrCorrupt and ErrTruncated.
func truncated(format string, args ...any) error {
	return fmt.Errorf("%w: %w: %s", ErrCorrupt, ErrTruncated, fmt.Sprintf(format, args...))
}

func lineErr(line int, err error) error { return &LineError{Line: line, Err: err} }
