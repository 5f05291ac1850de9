package archive

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"

	"memsvc.dev/memsvc/pkg/memory"
)

// Default limits.
const (
	// DefaultMaxSize is the largest plaintext archive a Reader accepts
	// (512 MiB, as upstream).
	DefaultMaxSize = 512 << 20
	// DefaultMaxLineSize is the longest entry line a Reader accepts and a
	// Writer writes (256 MiB): room for one record carrying the largest
	// block the model allows (50 MiB of audio is about 200 MiB as a JSON
	// integer array). Readers of untrusted uploads should set less.
	DefaultMaxLineSize = 256 << 20
)

// Summary describes an archive that was written or read in full.
type Summary struct {
	Header   Header // as declared; the counts are verified
	Format   Format // plain, encrypted or legacy-encrypted
	Checksum string // lowercase hex SHA-256 over the entry lines
	Size     int64  // bytes in the underlying stream (the encrypted size when encrypted)
}

// WriterOptions configure a Writer.
type WriterOptions struct {
	// Encryption, when set, wraps the archive in the encrypted envelope.
	Encryption *EncryptOptions
	// MaxLineSize bounds one entry line; zero means DefaultMaxLineSize.
	// A record that does not fit is refused with ErrTooLarge, so an
	// export never writes a line the default reader would reject.
	MaxLineSize int
}

// Writer streams an archive. The header declares the number of records of
// each kind; Close fails with ErrCountMismatch if a different number was
// written. In a bundle (Version2), curated records come first.
//
// Errors from the caller's input (a nil, invalid or oversized record, one
// record too many, a curated record after raw ones) leave the Writer usable;
// write errors are sticky. A Writer is not safe for concurrent use.
type Writer struct {
	hdr     Header
	size    *byteCount     // counts what reaches the caller's writer
	bw      *bufio.Writer  // plaintext output
	enc     *EncryptWriter // or encrypted output
	out     io.Writer      // bw or enc
	hash    hash.Hash
	maxLine int
	curated int
	raw     int
	err     error
	done    bool
	sum     Summary
}

// byteCount is an io.Writer that only counts what is written to it. The
// Writer copies its output into one and the Reader tees its input through
// one, to report the archive's size.
type byteCount struct{ n int64 }

func (c *byteCount) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// NewWriter validates h, writes the envelope header (when encrypting) and
// the archive header, and returns a Writer for the records.
func NewWriter(w io.Writer, h Header, o WriterOptions) (*Writer, error) {
	if err := h.validate(); err != nil {
		return nil, fmt.Errorf("archive header: %w", err)
	}
	a := &Writer{hdr: h, size: &byteCount{}, hash: sha256.New(), maxLine: o.MaxLineSize, sum: Summary{Header: h, Format: FormatPlain}}
	if a.maxLine <= 0 {
		a.maxLine = DefaultMaxLineSize
	}
	counted := io.MultiWriter(w, a.size)
	if o.Encryption != nil {
		enc, err := NewEncryptWriter(counted, *o.Encryption)
		if err != nil {
			return nil, fmt.Errorf("encrypt: %w", err)
		}
		a.enc, a.out = enc, enc
		a.sum.Format = FormatEncrypted
	} else {
		a.bw = bufio.NewWriterSize(counted, 64<<10)
		a.out = a.bw
	}
	if _, err := a.out.Write(appendHeaderLine(nil, h)); err != nil {
		return nil, fmt.Errorf("write header: %w", err)
	}
	return a, nil
}

const (
	kindRecord = "memory_record"
	kindRaw    = "raw_journal_record"
)

// WriteRecord writes one curated record of the default namespace.
func (a *Writer) WriteRecord(rec *memory.MemoryRecord) error { return a.WriteRecordIn("", rec) }

// WriteRecordIn writes one curated record of namespace ns ("" or
// memory.DefaultNamespace for the default one; see Namespaces in the
// package comment).
func (a *Writer) WriteRecordIn(ns string, rec *memory.MemoryRecord) error {
	if err := a.usable(); err != nil {
		return err
	}
	if rec == nil {
		return errors.New("write record: nil record")
	}
	if a.raw > 0 {
		return fmt.Errorf("write record %s: curated records must come before raw records", rec.ID)
	}
	if a.curated >= a.hdr.Curated {
		return fmt.Errorf("write record %s: %w: the header declares %d curated records", rec.ID, ErrCountMismatch, a.hdr.Curated)
	}
	if err := a.writeEntry(kindRecord, ns, rec, checkRecord(rec)); err != nil {
		return fmt.Errorf("write record %s: %w", rec.ID, err)
	}
	a.curated++
	return nil
}

// WriteRaw writes one raw journal record of the default namespace; only a
// Version2 archive holds them.
func (a *Writer) WriteRaw(rec *memory.RawJournalRecord) error { return a.WriteRawIn("", rec) }

// WriteRawIn writes one raw journal record of namespace ns.
func (a *Writer) WriteRawIn(ns string, rec *memory.RawJournalRecord) error {
	if err := a.usable(); err != nil {
		return err
	}
	if rec == nil {
		return errors.New("write raw record: nil record")
	}
	if a.hdr.Version != Version2 {
		return fmt.Errorf("write raw record %s: version %s holds curated records only", rec.ID, a.hdr.Version)
	}
	if a.raw >= a.hdr.Raw {
		return fmt.Errorf("write raw record %s: %w: the header declares %d raw records", rec.ID, ErrCountMismatch, a.hdr.Raw)
	}
	if err := a.writeEntry(kindRaw, ns, rec, checkRaw(rec)); err != nil {
		return fmt.Errorf("write raw record %s: %w", rec.ID, err)
	}
	a.raw++
	return nil
}

// writeEntry writes rec as an entry of kind in namespace ns, unless its
// validity check failed (invalid) or the namespace is refused. Only the
// errors of the namespace check and of writing are wrapped: an invalid or
// unencodable record is the caller's mistake, not one of the package's
// sentinel errors.
func (a *Writer) writeEntry(kind, ns string, rec any, invalid error) error {
	if invalid != nil {
		return errors.New(invalid.Error())
	}
	if err := a.checkNamespace(ns); err != nil {
		return err
	}
	data, err := marshal(rec)
	if err != nil {
		return fmt.Errorf("encode: %v", err)
	}
	return a.emit(data, kind, ns)
}

func (a *Writer) usable() error {
	if a.err != nil {
		return a.err
	}
	if a.done {
		return errors.New("writer is closed")
	}
	return nil
}

// checkNamespace accepts the name of a namespace an entry may carry: a
// valid name, and one other than the default only in a Version2 archive.
func (a *Writer) checkNamespace(ns string) error {
	if ns == "" || ns == memory.DefaultNamespace {
		return nil
	}
	if err := memory.ValidateNamespace(ns); err != nil {
		return err
	}
	if a.hdr.Version != Version2 {
		return fmt.Errorf("namespace %s: version %s archives hold records of the default namespace only", ns, a.hdr.Version)
	}
	return nil
}

// emit writes one entry line: the record JSON itself in Version1, wrapped
// in the tagged object in Version2, with the namespace when it is not the
// default one.
func (a *Writer) emit(data []byte, kind, ns string) error {
	var prefix, suffix string
	switch {
	case a.hdr.Version != Version2:
		suffix = "\n"
	case ns == "" || ns == memory.DefaultNamespace:
		prefix, suffix = `{"kind":"`+kind+`","data":`, "}\n"
	default:
		prefix, suffix = `{"kind":"`+kind+`","namespace":"`+ns+`","data":`, "}\n"
	}
	if n := len(prefix) + len(data) + len(suffix) - 1; n > a.maxLine {
		return fmt.Errorf("%w: entry line of %d bytes exceeds the limit of %d", ErrTooLarge, n, a.maxLine)
	}
	for _, part := range [][]byte{[]byte(prefix), data, []byte(suffix)} {
		a.hash.Write(part)
		if _, err := a.out.Write(part); err != nil {
			a.err = fmt.Errorf("write: %w", err)
			return a.err
		}
	}
	return nil
}

// Close checks the counts, writes the footer, seals the last chunk when
// encrypting and flushes. It does not close the underlying writer. The
// Summary is valid only when the error is nil; on error the output is
// incomplete and must be discarded.
func (a *Writer) Close() (Summary, error) {
	if err := a.usable(); err != nil {
		return Summary{}, err
	}
	a.done = true
	if a.curated != a.hdr.Curated || a.raw != a.hdr.Raw {
		a.err = fmt.Errorf("close: %w: wrote %d curated and %d raw records, the header declares %d and %d",
			ErrCountMismatch, a.curated, a.raw, a.hdr.Curated, a.hdr.Raw)
		return Summary{}, a.err
	}
	sum := a.hash.Sum(nil)
	if _, err := a.out.Write(appendFooterLine(nil, sum)); err != nil {
		a.err = fmt.Errorf("write footer: %w", err)
		return Summary{}, a.err
	}
	var err error
	if a.enc != nil {
		err = a.enc.Close()
	} else {
		err = a.bw.Flush()
	}
	if err != nil {
		a.err = fmt.Errorf("flush: %w", err)
		return Summary{}, a.err
	}
	a.sum.Checksum = hex.EncodeToString(sum)
	a.sum.Size = a.size.n
	return a.sum, nil
}

// marshal encodes a record. The model's MarshalJSON methods already
// return compact JSON from json.Marshal; calling them directly saves the
// second pass json.Marshal makes over a Marshaler's output (it does not
// change a byte: that pass only compacts and escapes what is already
// compact and escaped).
func marshal(v any) ([]byte, error) {
	if m, ok := v.(json.Marshaler); ok {
		return m.MarshalJSON()
	}
	return json.Marshal(v)
}

// checkRecord is the model's validation plus a non-nil id; archives key
// records by id.
func checkRecord(r *memory.MemoryRecord) error {
	if r.ID.IsNil() {
		return errors.New("id: must not be the nil UUID")
	}
	return r.Validate()
}

func checkRaw(r *memory.RawJournalRecord) error {
	if r.ID.IsNil() {
		return errors.New("id: must not be the nil UUID")
	}
	return r.Validate()
}
