package archive

import (
	"bufio"
	"bytes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/chacha20poly1305"
)

// Envelope constants; the layout is documented in the package comment.
const (
	magic            = "MEMSVC-CMA\x00"
	envelopeVersion  = 1
	kdfArgon2id      = 1
	headerSize       = 71
	saltSize         = 16
	noncePrefixSize  = 16
	keyCheckSize     = 16
	tagSize          = chacha20poly1305.Overhead
	minChunkShift    = 10
	maxChunkShift    = 20
	defaultChunkSize = 1 << 16

	offVersion     = 11
	offKDF         = 12
	offMemory      = 13
	offIterations  = 17
	offParallelism = 21
	offChunkShift  = 22
	offSalt        = 23
	offNoncePrefix = 39
	offKeyCheck    = 55

	infoPayloadKey = "memsvc-cma v1 payload key"
	infoKeyCheck   = "memsvc-cma v1 key check"
)

// DetectLen is how many leading bytes Detect looks at.
const DetectLen = 64

// KDFParams are Argon2id parameters.
type KDFParams struct {
	MemoryKiB   uint32 // memory in KiB
	Iterations  uint32 // passes over the memory
	Parallelism uint8  // lanes
}

// DefaultKDF returns the parameters used when none are given: 64 MiB,
// 3 passes, 1 lane (the reference values, and those of the legacy
// envelope).
func DefaultKDF() KDFParams { return KDFParams{MemoryKiB: 64 << 10, Iterations: 3, Parallelism: 1} }

// DefaultKDFLimit returns the largest parameters a Reader accepts from an
// envelope header unless told otherwise, and the largest a writer uses:
// DefaultKDF, the most this package ever writes. The header is checked
// before any key derivation, so a hostile header (71 bytes asking for
// gigabytes and minutes of Argon2) costs nothing.
func DefaultKDFLimit() KDFParams { return DefaultKDF() }

func (p KDFParams) isZero() bool { return p == KDFParams{} }

func (p KDFParams) String() string {
	return fmt.Sprintf("argon2id m=%dKiB t=%d p=%d", p.MemoryKiB, p.Iterations, p.Parallelism)
}

// valid reports whether Argon2 can run with p.
func (p KDFParams) valid() error {
	if p.Iterations < 1 || p.Parallelism < 1 || p.MemoryKiB < 8*uint32(p.Parallelism) {
		return fmt.Errorf("invalid KDF parameters (%s): need t >= 1, p >= 1, m >= 8p", p)
	}
	return nil
}

// within reports whether p stays inside limit.
func (p KDFParams) within(limit KDFParams) error {
	if p.MemoryKiB > limit.MemoryKiB || p.Iterations > limit.Iterations || p.Parallelism > limit.Parallelism {
		return fmt.Errorf("%w: KDF parameters (%s) exceed the limit (%s), the most memsvc writes; no key was derived", ErrTooLarge, p, limit)
	}
	return nil
}

func (p KDFParams) key(passphrase, salt []byte) []byte {
	return argon2.IDKey(passphrase, salt, p.Iterations, p.MemoryKiB, p.Parallelism, 32)
}

// Format is what the first bytes of an input say it is.
type Format uint8

// Formats.
const (
	// FormatUnknown: neither plaintext nor our envelope. It may be a
	// legacy encrypted archive, which has no magic, or not an archive.
	FormatUnknown Format = iota
	// FormatPlain: a plaintext CMA archive.
	FormatPlain
	// FormatEncrypted: our encrypted envelope.
	FormatEncrypted
	// FormatLegacy: upstream's encrypted envelope. Detect never returns
	// it; a Reader reports it after decrypting one.
	FormatLegacy
)

func (f Format) String() string {
	switch f {
	case FormatPlain:
		return "plain"
	case FormatEncrypted:
		return "encrypted"
	case FormatLegacy:
		return "legacy-encrypted"
	default:
		return "unknown"
	}
}

// Detect classifies an input by its first bytes; give it at least DetectLen
// bytes, or the whole input if it is shorter. Plaintext is recognised by its
// start: optional whitespace, "{", optional whitespace, "\"", and only
// printable UTF-8 text in the prefix (random bytes almost never pass).
func Detect(prefix []byte) Format {
	if bytes.HasPrefix(prefix, []byte(magic)) {
		return FormatEncrypted
	}
	if looksPlain(prefix) {
		return FormatPlain
	}
	return FormatUnknown
}

// IsEncrypted reports whether prefix starts our encrypted envelope.
func IsEncrypted(prefix []byte) bool { return Detect(prefix) == FormatEncrypted }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func looksPlain(p []byte) bool {
	if len(p) > DetectLen {
		p = p[:DetectLen]
	}
	i := 0
	for i < len(p) && isSpace(p[i]) {
		i++
	}
	if i == len(p) || p[i] != '{' {
		return false
	}
	j := i + 1
	for j < len(p) && isSpace(p[j]) {
		j++
	}
	if j < len(p) && p[j] != '"' {
		return false
	}
	// The prefix may end inside a multi-byte character.
	text := p
	for k := 1; k < utf8.UTFMax && k <= len(text); k++ {
		if start := len(text) - k; utf8.RuneStart(text[start]) {
			if !utf8.FullRune(text[start:]) {
				text = text[:start]
			}
			break
		}
	}
	if !utf8.Valid(text) {
		return false
	}
	for _, c := range text {
		if (c < 0x20 && !isSpace(c)) || c == 0x7f {
			return false
		}
	}
	return true
}

// nearMagic reports whether p starts with something within two bytes of the
// magic: a damaged envelope rather than something else.
func nearMagic(p []byte) bool {
	if len(p) < len(magic) {
		return false
	}
	diff := 0
	for i := range len(magic) {
		if p[i] != magic[i] {
			diff++
		}
	}
	return diff <= 2
}

// EncryptOptions configure encryption.
type EncryptOptions struct {
	// Passphrase is used byte for byte; it must not be empty.
	Passphrase []byte
	// KDF are the Argon2id parameters; zero means DefaultKDF. They must
	// stay within DefaultKDFLimit so every default reader can open the
	// archive.
	KDF KDFParams
	// ChunkSize is the plaintext chunk size, a power of two from 1 KiB to
	// 1 MiB; zero means 64 KiB. Only tests need another value.
	ChunkSize int
	// Rand supplies the salt and nonce prefix; nil means crypto/rand.
	Rand io.Reader
	// KDFSlot, when set, is called before the key derivation and its
	// release after it (KDFGate.Slot bounds how many run at once).
	KDFSlot func() (release func(), err error)
}

// sealer holds the per-archive state shared by both directions.
type sealer struct {
	aead      cipher.AEAD
	nonce     [chacha20poly1305.NonceSizeX]byte
	ad        [headerSize + 1]byte // header ‖ last flag
	chunkSize int
	counter   uint64
}

// newSealer derives the keys from the header fields and passphrase, checks
// or fills in the key check, and zeroes the key material it made. With
// check set, a differing key check is ErrWrongKey. slot, when not nil,
// admits the derivation.
func newSealer(hdr *[headerSize]byte, passphrase []byte, p KDFParams, check bool, slot func() (func(), error)) (*sealer, error) {
	master, err := deriveIn(slot, func() []byte { return p.key(passphrase, hdr[offSalt:offSalt+saltSize]) })
	if err != nil {
		return nil, err
	}
	defer clear(master)
	kc, err := hkdf.Key(sha256.New, master, nil, infoKeyCheck, keyCheckSize)
	if err != nil {
		return nil, fmt.Errorf("derive key: %w", err)
	}
	defer clear(kc)
	if check {
		if subtle.ConstantTimeCompare(kc, hdr[offKeyCheck:offKeyCheck+keyCheckSize]) != 1 {
			return nil, fmt.Errorf("%w (or a damaged envelope header): key check failed", ErrWrongKey)
		}
	} else {
		copy(hdr[offKeyCheck:], kc)
	}
	key, err := hkdf.Key(sha256.New, master, nil, infoPayloadKey, chacha20poly1305.KeySize)
	if err != nil {
		return nil, fmt.Errorf("derive key: %w", err)
	}
	defer clear(key)
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		return nil, fmt.Errorf("derive key: %w", err)
	}
	s := &sealer{aead: aead, chunkSize: 1 << hdr[offChunkShift]}
	copy(s.nonce[:], hdr[offNoncePrefix:offNoncePrefix+noncePrefixSize])
	copy(s.ad[:], hdr[:])
	return s, nil
}

func (s *sealer) prepare(last bool) {
	binary.BigEndian.PutUint64(s.nonce[noncePrefixSize:], s.counter)
	s.ad[headerSize] = 0
	if last {
		s.ad[headerSize] = 1
	}
}

// EncryptWriter encrypts what is written to it into an envelope. Close
// seals the final chunk; without it the envelope is truncated.
type EncryptWriter struct {
	w      io.Writer
	s      *sealer
	buf    []byte
	err    error
	closed bool
}

// NewEncryptWriter writes the envelope header to w and returns a writer for
// the plaintext. It runs the key derivation, which takes a while with the
// default parameters.
func NewEncryptWriter(w io.Writer, o EncryptOptions) (*EncryptWriter, error) {
	if len(o.Passphrase) == 0 {
		return nil, ErrEmptyPassphrase
	}
	p := o.KDF
	if p.isZero() {
		p = DefaultKDF()
	}
	if err := p.valid(); err != nil {
		return nil, err
	}
	if err := p.within(DefaultKDFLimit()); err != nil {
		return nil, err
	}
	size := o.ChunkSize
	if size == 0 {
		size = defaultChunkSize
	}
	shift := 0
	for 1<<shift < size {
		shift++
	}
	if 1<<shift != size || shift < minChunkShift || shift > maxChunkShift {
		return nil, fmt.Errorf("chunk size %d: want a power of two from %d to %d", size, 1<<minChunkShift, 1<<maxChunkShift)
	}
	var hdr [headerSize]byte
	copy(hdr[:], magic)
	hdr[offVersion] = envelopeVersion
	hdr[offKDF] = kdfArgon2id
	binary.BigEndian.PutUint32(hdr[offMemory:], p.MemoryKiB)
	binary.BigEndian.PutUint32(hdr[offIterations:], p.Iterations)
	hdr[offParallelism] = p.Parallelism
	hdr[offChunkShift] = byte(shift)
	rnd := o.Rand
	if rnd == nil {
		rnd = rand.Reader
	}
	if _, err := io.ReadFull(rnd, hdr[offSalt:offKeyCheck]); err != nil {
		return nil, fmt.Errorf("read random salt: %w", err)
	}
	s, err := newSealer(&hdr, o.Passphrase, p, false, o.KDFSlot)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(hdr[:]); err != nil {
		return nil, fmt.Errorf("write envelope header: %w", err)
	}
	return &EncryptWriter{w: w, s: s, buf: make([]byte, 0, size+tagSize)}, nil
}

// Write buffers p and writes every full chunk but the newest; the newest is
// held back because only Close knows whether it is the last.
func (e *EncryptWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	if e.closed {
		return 0, errors.New("write after close")
	}
	n := 0
	for len(p) > 0 {
		if len(e.buf) == e.s.chunkSize {
			if err := e.seal(false); err != nil {
				return n, err
			}
		}
		k := copy(e.buf[len(e.buf):e.s.chunkSize], p)
		e.buf = e.buf[:len(e.buf)+k]
		p = p[k:]
		n += k
	}
	return n, nil
}

func (e *EncryptWriter) seal(last bool) error {
	e.s.prepare(last)
	out := e.s.aead.Seal(e.buf[:0], e.s.nonce[:], e.buf, e.s.ad[:])
	if _, err := e.w.Write(out); err != nil {
		e.err = fmt.Errorf("write chunk %d: %w", e.s.counter, err)
		return e.err
	}
	e.s.counter++
	e.buf = e.buf[:0]
	return nil
}

// Close seals the last chunk. It does not close the underlying writer.
func (e *EncryptWriter) Close() error {
	if e.err != nil {
		return e.err
	}
	if e.closed {
		return nil
	}
	e.closed = true
	return e.seal(true)
}

// decryptReader yields the plaintext of an envelope, chunk by chunk.
type decryptReader struct {
	r     *bufio.Reader
	s     *sealer
	buf   []byte // ciphertext of one chunk
	out   []byte // its plaintext; separate so a failed Open leaves buf intact
	plain []byte
	done  bool
	err   error
}

// NewDecryptReader reads the envelope header from r, derives the key from
// o.Passphrase (within o.KDFLimit; the other options do not apply) and
// returns a reader of the plaintext, for tools that re-encrypt or unwrap
// archives. Chunk problems are reported by Read, and Read returns io.EOF
// only after the final chunk has been authenticated. The plaintext is not
// checked as an archive: use NewReader for that.
func NewDecryptReader(r io.Reader, o ReaderOptions) (io.Reader, error) {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 64<<10)
	}
	return openEnvelope(br, o)
}

func openEnvelope(br *bufio.Reader, o ReaderOptions) (*decryptReader, error) {
	var hdr [headerSize]byte
	n, err := io.ReadFull(br, hdr[:])
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		got := hdr[:n]
		isStart := n > 0 && n < len(magic) && bytes.HasPrefix([]byte(magic), got)
		if !isStart && !nearMagic(got) {
			return nil, ErrNotArchive
		}
		return nil, truncated("envelope header has %d of %d bytes", n, headerSize)
	case err != nil:
		return nil, fmt.Errorf("read envelope header: %w", err)
	}
	if string(hdr[:len(magic)]) != magic {
		if nearMagic(hdr[:]) {
			return nil, corrupt("damaged envelope magic %q", hdr[:len(magic)])
		}
		return nil, ErrNotArchive
	}
	if hdr[offVersion] != envelopeVersion {
		return nil, fmt.Errorf("%w: envelope version %d (this build reads %d)", ErrUnsupported, hdr[offVersion], envelopeVersion)
	}
	if hdr[offKDF] != kdfArgon2id {
		return nil, fmt.Errorf("%w: envelope KDF %d", ErrUnsupported, hdr[offKDF])
	}
	p := KDFParams{
		MemoryKiB:   binary.BigEndian.Uint32(hdr[offMemory:]),
		Iterations:  binary.BigEndian.Uint32(hdr[offIterations:]),
		Parallelism: hdr[offParallelism],
	}
	if err := p.valid(); err != nil {
		return nil, corrupt("envelope header: %v", err)
	}
	limit := o.KDFLimit
	if limit.isZero() {
		limit = DefaultKDFLimit()
	}
	if err := p.within(limit); err != nil {
		return nil, err
	}
	if shift := hdr[offChunkShift]; shift < minChunkShift || shift > maxChunkShift {
		return nil, corrupt("envelope header: chunk shift %d out of range %d..%d", shift, minChunkShift, maxChunkShift)
	}
	if len(o.Passphrase) == 0 {
		return nil, ErrNeedKey
	}
	s, err := newSealer(&hdr, o.Passphrase, p, true, o.KDFSlot)
	if err != nil {
		return nil, err
	}
	return &decryptReader{r: br, s: s, buf: make([]byte, s.chunkSize+tagSize), out: make([]byte, s.chunkSize)}, nil
}

func (d *decryptReader) Read(p []byte) (int, error) {
	for len(d.plain) == 0 {
		if d.err != nil {
			return 0, d.err
		}
		if d.done {
			return 0, io.EOF
		}
		if err := d.next(); err != nil {
			d.err = err
			return 0, err
		}
	}
	n := copy(p, d.plain)
	d.plain = d.plain[n:]
	return n, nil
}

// next reads, authenticates and decrypts one chunk. A chunk shorter than
// full size, or a full one followed by end of input, must be the last.
func (d *decryptReader) next() error {
	i := d.s.counter
	n, err := io.ReadFull(d.r, d.buf)
	last := false
	switch {
	case err == nil:
		if _, perr := d.r.Peek(1); perr == io.EOF {
			last = true
		} else if perr != nil {
			return fmt.Errorf("read chunk %d: %w", i, perr)
		}
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		last = true
		if n < tagSize {
			if i == 0 {
				return truncated("no chunks after the envelope header")
			}
			return truncated("input ends after chunk %d", i-1)
		}
	default:
		return fmt.Errorf("read chunk %d: %w", i, err)
	}
	d.s.prepare(last)
	out, err := d.s.aead.Open(d.out[:0], d.s.nonce[:], d.buf[:n], d.s.ad[:])
	if err != nil {
		if last && n == len(d.buf) {
			// A full chunk at the end that opens as a middle chunk
			// means the rest of the stream is missing.
			d.s.prepare(false)
			if _, err2 := d.s.aead.Open(d.out[:0], d.s.nonce[:], d.buf[:n], d.s.ad[:]); err2 == nil {
				return truncated("input ends after chunk %d", i)
			}
		}
		return corrupt("chunk %d (offset %d): authentication failed: damaged, reordered or truncated", i, headerSize+int64(i)*int64(len(d.buf)))
	}
	d.s.counter++
	d.plain = out
	d.done = last
	return nil
}
