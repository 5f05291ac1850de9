package archive

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// ReaderOptions configure a Reader.
type ReaderOptions struct {
	// Passphrase opens encrypted archives; it is used byte for byte.
	// Empty means none: an encrypted archive then fails with ErrNeedKey.
	// A plaintext archive is read even when a passphrase is given
	// (Reader.Format tells the caller).
	Passphrase []byte
	// MaxSize bounds the plaintext archive in bytes; zero means
	// DefaultMaxSize.
	MaxSize int64
	// MaxLineSize bounds one line in bytes, without its terminator; zero
	// means DefaultMaxLineSize.
	MaxLineSize int
	// KDFLimit caps the KDF parameters accepted from an envelope header;
	// zero means DefaultKDFLimit.
	KDFLimit KDFParams
	// LegacyKDF replaces the fixed parameters of the legacy envelope. Real
	// legacy archives always use the defaults; only tests set this.
	LegacyKDF KDFParams
	// KDFSlot, when set, is called before each key derivation and its
	// release after it (KDFGate.Slot bounds how many run at once).
	KDFSlot func() (release func(), err error)
	// Now supplies the time used for timestamps missing from a record;
	// nil means time.Now. It is read once, when the Reader is made.
	Now func() time.Time
}

// EntryKind tells which record an Entry holds.
type EntryKind uint8

// Entry kinds.
const (
	KindRecord EntryKind = iota + 1 // a curated memory.MemoryRecord
	KindRaw                         // a memory.RawJournalRecord
)

func (k EntryKind) String() string {
	switch k {
	case KindRecord:
		return kindRecord
	case KindRaw:
		return kindRaw
	default:
		return "unknown"
	}
}

// Entry is one record read from an archive. Exactly one of Record and Raw
// is set, as Kind says.
type Entry struct {
	Kind   EntryKind
	Record *memory.MemoryRecord
	Raw    *memory.RawJournalRecord
	// Namespace is the namespace the entry names, or "" when it names
	// none (the default namespace; see Namespaces in the package
	// comment). A name that is present is valid.
	Namespace string
	Line      int // line number in the plaintext archive
}

// Reader streams the records of an archive and verifies it as it goes.
// Records come out before the footer has been checked: nothing read is
// trustworthy until Next returns io.EOF. A Reader is not safe for
// concurrent use.
type Reader struct {
	lr      lineReader
	size    *byteCount // counts what was read from the input
	hdr     Header
	format  Format
	hash    hash.Hash
	now     time.Time
	curated int
	raw     int
	err     error
	eof     bool
	sum     Summary
}

// NewReader detects the kind of input, opens the envelope if there is one
// and reads the archive header.
func NewReader(r io.Reader, o ReaderOptions) (*Reader, error) {
	if o.MaxSize <= 0 {
		o.MaxSize = DefaultMaxSize
	}
	if o.MaxLineSize <= 0 {
		o.MaxLineSize = DefaultMaxLineSize
	}
	if o.LegacyKDF.isZero() {
		o.LegacyKDF = legacyKDF()
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	size := &byteCount{}
	br := bufio.NewReaderSize(io.TeeReader(r, size), 64<<10)
	prefix, err := br.Peek(DetectLen)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read archive: %w", err)
	}
	format := Detect(prefix)
	src := br
	switch format {
	case FormatEncrypted:
		d, err := openEnvelope(br, o)
		if err != nil {
			return nil, err
		}
		src = bufio.NewReaderSize(d, 64<<10)
	case FormatPlain:
	default:
		switch {
		case len(bytes.TrimLeft(prefix, " \t\r\n")) == 0 && len(prefix) < DetectLen:
			return nil, fmt.Errorf("%w: empty input", ErrNotArchive)
		case nearMagic(prefix) || len(prefix) < len(magic) && bytes.HasPrefix([]byte(magic), prefix):
			// A damaged or cut-off envelope header.
			_, err := openEnvelope(br, o)
			return nil, err
		case len(o.Passphrase) == 0:
			return nil, fmt.Errorf("%w (a legacy encrypted archive looks like this without its passphrase)", ErrNotArchive)
		}
		if err := o.LegacyKDF.valid(); err != nil {
			return nil, fmt.Errorf("legacy KDF: %w", err)
		}
		plain, err := openLegacy(br, o.Passphrase, o.LegacyKDF, o.MaxSize, o.KDFSlot)
		if err != nil {
			return nil, err
		}
		format = FormatLegacy
		src = bufio.NewReaderSize(bytes.NewReader(plain), 64<<10)
	}
	a := &Reader{
		lr:     lineReader{br: src, maxSize: o.MaxSize, maxLine: o.MaxLineSize},
		size:   size,
		format: format,
		hash:   sha256.New(),
		now:    now().UTC(),
	}
	if err := a.readHeader(); err != nil {
		return nil, err
	}
	return a, nil
}

// readHeader reads the first non-blank line.
func (a *Reader) readHeader() error {
	for {
		line, eol, err := a.lr.next()
		if errors.Is(err, io.EOF) {
			if a.format == FormatPlain {
				return fmt.Errorf("%w: no header", ErrNotArchive)
			}
			return corrupt("decrypted archive is empty")
		}
		if err != nil {
			return err
		}
		if isBlank(line) {
			continue
		}
		if !eol {
			return lineErr(a.lr.line, truncated("header line is not terminated"))
		}
		h, err := parseHeader(line)
		if err != nil {
			return lineErr(a.lr.line, err)
		}
		a.hdr = h
		return nil
	}
}

// Header returns the archive header.
func (a *Reader) Header() Header { return a.hdr }

// Format tells whether the archive was plaintext, in our envelope or in
// the legacy envelope.
func (a *Reader) Format() Format { return a.format }

// Summary describes the archive; it is complete once Next has returned
// io.EOF.
func (a *Reader) Summary() Summary { return a.sum }

// Next returns the next entry. After the last one it checks the footer,
// counts and checksum and reads to the end of the input, and returns
// io.EOF only if everything is in order. Errors are sticky.
func (a *Reader) Next() (Entry, error) {
	if a.err != nil {
		return Entry{}, a.err
	}
	if a.eof {
		return Entry{}, io.EOF
	}
	e, err := a.next()
	if err != nil && !errors.Is(err, io.EOF) {
		a.err = err
	}
	return e, err
}

func (a *Reader) next() (Entry, error) {
	want := a.hdr.Records()
	for {
		line, eol, err := a.lr.next()
		if errors.Is(err, io.EOF) {
			got := a.curated + a.raw
			if got < want {
				return Entry{}, lineErr(a.lr.line+1, truncated("input ends after %d of %d entries", got, want))
			}
			return Entry{}, lineErr(a.lr.line+1, truncated("missing footer"))
		}
		if err != nil {
			return Entry{}, err
		}
		if isBlank(line) {
			continue
		}
		n := a.lr.line
		if a.curated+a.raw == want {
			if err := a.finish(line, n); err != nil {
				return Entry{}, err
			}
			a.eof = true
			return Entry{}, io.EOF
		}
		if looksLikeFooter(line) {
			return Entry{}, lineErr(n, fmt.Errorf("%w: %w: the header declares %d entries, the footer follows %d", ErrCorrupt, ErrCountMismatch, want, a.curated+a.raw))
		}
		if !eol {
			return Entry{}, lineErr(n, truncated("entry line is not terminated"))
		}
		e, err := a.parseEntry(line, n)
		if err != nil {
			return Entry{}, lineErr(n, err)
		}
		a.hash.Write(line)
		a.hash.Write([]byte{'\n'})
		return e, nil
	}
}

// finish checks the footer line and what follows it.
func (a *Reader) finish(line []byte, n int) error {
	if !looksLikeFooter(line) && looksLikeEntry(line) {
		return lineErr(n, fmt.Errorf("%w: %w: more entries than the %d the header declares", ErrCorrupt, ErrCountMismatch, a.hdr.Records()))
	}
	want, err := parseFooter(line)
	if err != nil {
		return lineErr(n, err)
	}
	got := a.hash.Sum(nil)
	if !bytes.Equal(want, got) {
		return lineErr(n, fmt.Errorf("%w: %w: footer says %x, entries hash to %x", ErrCorrupt, ErrChecksum, want, got))
	}
	for {
		line, _, err := a.lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if !isBlank(line) {
			return lineErr(a.lr.line, corrupt("data after the footer"))
		}
	}
	a.sum = Summary{Header: a.hdr, Format: a.format, Checksum: hex.EncodeToString(got), Size: a.size.n}
	return nil
}

func looksLikeEntry(line []byte) bool {
	t := bytes.TrimLeft(line, " \t")
	return bytes.HasPrefix(t, []byte(`{"id"`)) || bytes.HasPrefix(t, []byte(`{"kind"`))
}

const (
	recordKindPrefix = `{"kind":"` + kindRecord + `",`
	rawKindPrefix    = `{"kind":"` + kindRaw + `",`
	namespaceMember  = `"namespace":"`
	dataMember       = `"data":`
)

func (a *Reader) parseEntry(line []byte, n int) (Entry, error) {
	if a.hdr.Version == Version1 {
		return a.entry(KindRecord, line, n)
	}
	// Fast path for the layout every writer produces; anything else, or
	// anything the fast path cannot decode, goes through the general
	// decoder so the error message describes the whole line.
	if kind, ns, data, ok := splitEntry(line); ok && (ns == "" || memory.ValidateNamespace(ns) == nil) {
		if e, err := a.entry(kind, data, n); err == nil {
			e.Namespace = ns
			return e, nil
		}
	}
	var env struct {
		Kind      *string         `json:"kind"`
		Namespace *string         `json:"namespace"`
		Data      json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(line, &env); err != nil {
		return Entry{}, corrupt("invalid entry: %v", err)
	}
	if env.Kind == nil {
		return Entry{}, corrupt("invalid entry: no kind")
	}
	if len(env.Data) == 0 || string(env.Data) == "null" {
		return Entry{}, corrupt("invalid entry: no data")
	}
	var ns string
	if env.Namespace != nil {
		if err := memory.ValidateNamespace(*env.Namespace); err != nil {
			return Entry{}, corrupt("invalid entry: %v", err)
		}
		ns = *env.Namespace
	}
	var e Entry
	var err error
	switch *env.Kind {
	case kindRecord:
		e, err = a.entry(KindRecord, env.Data, n)
	case kindRaw:
		e, err = a.entry(KindRaw, env.Data, n)
	default:
		return Entry{}, corrupt("invalid entry: unknown kind %q", *env.Kind)
	}
	e.Namespace = ns
	return e, err
}

// splitEntry takes a bundle line apart when it has exactly the layout
// writers produce: kind, then optionally the namespace, then the data.
func splitEntry(line []byte) (kind EntryKind, ns string, data []byte, ok bool) {
	if !bytes.HasSuffix(line, []byte{'}'}) {
		return 0, "", nil, false
	}
	var rest []byte
	switch {
	case bytes.HasPrefix(line, []byte(recordKindPrefix)):
		kind, rest = KindRecord, line[len(recordKindPrefix):len(line)-1]
	case bytes.HasPrefix(line, []byte(rawKindPrefix)):
		kind, rest = KindRaw, line[len(rawKindPrefix):len(line)-1]
	default:
		return 0, "", nil, false
	}
	if bytes.HasPrefix(rest, []byte(namespaceMember)) {
		rest = rest[len(namespaceMember):]
		end := bytes.IndexByte(rest, '"')
		if end < 0 || !bytes.HasPrefix(rest[end+1:], []byte(",")) {
			return 0, "", nil, false
		}
		if end == 0 {
			return 0, "", nil, false // an empty name is invalid
		}
		ns, rest = string(rest[:end]), rest[end+2:]
	}
	if !bytes.HasPrefix(rest, []byte(dataMember)) {
		return 0, "", nil, false
	}
	return kind, ns, rest[len(dataMember):], true
}

// entry decodes and validates one record. Fields missing from the JSON
// keep upstream's defaults, set here before decoding.
func (a *Reader) entry(kind EntryKind, data []byte, n int) (Entry, error) {
	switch kind {
	case KindRecord:
		if a.curated >= a.hdr.Curated {
			return Entry{}, fmt.Errorf("%w: %w: more curated records than the %d the header declares", ErrCorrupt, ErrCountMismatch, a.hdr.Curated)
		}
		rec := &memory.MemoryRecord{
			CreatedAt: a.now, UpdatedAt: a.now, LastAccessedAt: a.now,
			Fidelity: memory.FidelityState{LastDecayTick: a.now},
			Version:  1,
			Meta:     memory.LegacyMeta(),
		}
		if err := decodeEntry("record", data, rec, func() (memory.ID, error) { return rec.ID, checkRecord(rec) }); err != nil {
			return Entry{}, err
		}
		a.curated++
		return Entry{Kind: KindRecord, Record: rec, Line: n}, nil
	default:
		if a.raw >= a.hdr.Raw {
			return Entry{}, fmt.Errorf("%w: %w: more raw records than the %d the header declares", ErrCorrupt, ErrCountMismatch, a.hdr.Raw)
		}
		rec := &memory.RawJournalRecord{CreatedAt: a.now, UpdatedAt: a.now, Meta: memory.LegacyMeta()}
		if err := decodeEntry("raw record", data, rec, func() (memory.ID, error) { return rec.ID, checkRaw(rec) }); err != nil {
			return Entry{}, err
		}
		a.raw++
		return Entry{Kind: KindRaw, Raw: rec, Line: n}, nil
	}
}

// decodeEntry decodes data into rec, then asks check for the decoded
// record's id and what is wrong with it. what names the kind of record in
// the error.
func decodeEntry(what string, data []byte, rec any, check func() (memory.ID, error)) error {
	if err := json.Unmarshal(data, rec); err != nil {
		return corrupt("invalid %s: %v", what, err)
	}
	if id, err := check(); err != nil {
		return corrupt("invalid %s %s: %v", what, id, err)
	}
	return nil
}

// Verify reads a whole archive, checking every record, the counts and the
// checksum, without keeping anything.
func Verify(r io.Reader, o ReaderOptions) (Summary, error) {
	a, err := NewReader(r, o)
	if err != nil {
		return Summary{}, err
	}
	// Each call consumes at least one line, so this ends with the input.
	for {
		_, err := a.Next()
		if errors.Is(err, io.EOF) {
			return a.Summary(), nil
		}
		if err != nil {
			return Summary{}, err
		}
	}
}

func isBlank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// lineReader returns lines of bounded length from a bounded stream.
type lineReader struct {
	br      *bufio.Reader
	buf     []byte
	line    int   // number of the line last returned
	total   int64 // bytes consumed
	maxSize int64
	maxLine int
}

// next returns the next line without its "\n" or "\r\n". The slice is
// valid until the next call. eol is false for a last line that has no
// "\n". At the end of the input it returns io.EOF.
func (l *lineReader) next() (line []byte, eol bool, err error) {
	if cap(l.buf) > 4<<20 {
		l.buf = nil // do not pin the memory of one huge line
	}
	l.buf = l.buf[:0]
	l.line++
	for {
		frag, err := l.br.ReadSlice('\n')
		l.total += int64(len(frag))
		if l.total > l.maxSize {
			return nil, false, fmt.Errorf("%w: archive exceeds %d bytes", ErrSizeLimit, l.maxSize)
		}
		if err == nil && len(l.buf) == 0 {
			line, eol = frag, true
			break
		}
		if len(l.buf)+len(frag) > l.maxLine+2 {
			return nil, false, lineErr(l.line, fmt.Errorf("%w: line exceeds %d bytes", ErrTooLarge, l.maxLine))
		}
		l.buf = append(l.buf, frag...)
		if err == nil {
			line, eol = l.buf, true
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			if len(l.buf) == 0 {
				l.line--
				return nil, false, io.EOF
			}
			line = l.buf
			break
		}
		return nil, false, err
	}
	if eol {
		line = line[:len(line)-1]
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
	}
	if len(line) > l.maxLine {
		return nil, false, lineErr(l.line, fmt.Errorf("%w: line exceeds %d bytes", ErrTooLarge, l.maxLine))
	}
	return line, eol, nil
}
