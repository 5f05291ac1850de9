package store

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/crypto/chacha20poly1305"
)

// Derived files: copies of state the engine derives from the records
// (search index snapshots), kept next to the database so a start need not
// derive them again. They live in the subdirectory "derived" of the data
// directory and go through the database's file system (Options.FS), so
// the fault tests that fail or crash it cover them too. The engine
// decides what may be written; the store writes it whole or not at all
// (a ".part" file, synced, renamed over the old one, and the directory
// synced) and seals it under the record key when the database has a
// passphrase, so no derived plaintext reaches the disk of an encrypted
// directory.
//
// A derived file starts with the 7 bytes "msvcdrv" and a format byte:
//
//	0x01  plaintext: the content follows as it is
//	0xE1  sealed: a 16-byte random nonce prefix, then the content in
//	      chunks of 64 KiB (the last one shorter, possibly empty), each
//	      sealed as XChaCha20-Poly1305(Kr, nonce, chunk, AAD) with
//	      nonce = prefix || uint64 big endian (chunk number, with the
//	      top bit set on the last chunk)
//	      AAD   = "memsvc derived file v1" 0x00 name
//
// The chunk numbers and the last-chunk bit refuse chunks that were
// reordered, dropped or cut off; the name in the associated data refuses
// a file copied under another name (another namespace's, another role's).
// Plaintext derived files carry their own checksums (the engine's
// formats); the store does not add one.

// ErrNoDerived is returned by OpenDerived for a derived file that does
// not exist.
var ErrNoDerived = errors.New("no such derived file")

const (
	derivedDir    = "derived"
	derivedMagic  = "msvcdrv"
	derivedPlain  = 0x01
	derivedSealed = formatSealed
	derivedPart   = ".part"
	derivedChunk  = 64 << 10
	derivedPrefix = 16
	lastChunk     = 1 << 63
	derivedAADTag = "memsvc derived file v1"
)

// derivedPath returns the path of the derived file name.
func (db *DB) derivedPath(name string) string { return db.fs.PathJoin(db.dir, derivedDir, name) }

func checkDerivedName(name string) error {
	if name == "" || strings.ContainsAny(name, `/\`) || strings.HasSuffix(name, derivedPart) || name[0] == '.' {
		return fmt.Errorf("derived file name %.40q: want a plain file name", name)
	}
	return nil
}

// WriteDerived replaces the derived file name with what fill writes, all
// of it or nothing: it writes name.part, syncs it, renames it over name
// and syncs the directory. size is what fill is expected to write; it is
// checked against the free-space reserve first. With a passphrase the
// content is sealed; a directory that is encrypted but was opened without
// its passphrase refuses with ErrEncrypted.
func (db *DB) WriteDerived(name string, size int, fill func(w io.Writer) error) (err error) {
	if err := checkDerivedName(name); err != nil {
		return err
	}
	if db.keys == nil && db.hasHeader {
		return fmt.Errorf("data directory %s is encrypted; not writing derived data in plaintext: %w", db.dir, ErrEncrypted)
	}
	if err := db.space.check(size); err != nil {
		return err
	}
	dir := db.fs.PathJoin(db.dir, derivedDir)
	if err := db.fs.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create derived file directory: %w", err)
	}
	path := db.derivedPath(name)
	part := path + derivedPart
	f, err := db.fs.Create(part, vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("create derived file: %w", err)
	}
	defer func() {
		if f != nil {
			_ = f.Close()
		}
		if err != nil {
			_ = db.fs.Remove(part)
		}
	}()
	bw := bufio.NewWriterSize(f, derivedChunk)
	var w io.Writer = bw
	var sw *sealWriter
	if db.keys != nil {
		sw, err = db.keys.newSealWriter(bw, name)
		if err != nil {
			return err
		}
		w = sw
	} else if _, err := bw.WriteString(derivedMagic + string(rune(derivedPlain))); err != nil {
		return fmt.Errorf("write derived file: %w", err)
	}
	if err := fill(w); err != nil {
		return err
	}
	if sw != nil {
		if err := sw.close(); err != nil {
			return fmt.Errorf("write derived file: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write derived file: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync derived file: %w", err)
	}
	cerr := f.Close()
	f = nil
	if cerr != nil {
		return fmt.Errorf("close derived file: %w", cerr)
	}
	if err := db.fs.Rename(part, path); err != nil {
		return fmt.Errorf("rename derived file: %w", err)
	}
	return db.syncDerivedDir(dir)
}

func (db *DB) syncDerivedDir(dir string) error {
	d, err := db.fs.OpenDir(dir)
	if err != nil {
		return fmt.Errorf("sync derived file directory: %w", err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync derived file directory: %w", err)
	}
	return nil
}

// OpenDerived opens the derived file name for reading its content (opened
// when sealed). It returns ErrNoDerived when there is none, ErrEncrypted
// for a sealed file without the passphrase, and an error matching
// ErrCorrupt for a file that is not a derived file or does not open
// under the directory's key; the reader's Read returns ErrCorrupt for
// content that was damaged or cut short.
func (db *DB) OpenDerived(name string) (io.ReadCloser, error) {
	if err := checkDerivedName(name); err != nil {
		return nil, err
	}
	f, err := db.fs.Open(db.derivedPath(name))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, os.ErrNotExist) {
			return nil, ErrNoDerived
		}
		return nil, fmt.Errorf("open derived file: %w", err)
	}
	br := bufio.NewReaderSize(f, derivedChunk+chacha20poly1305.Overhead+1)
	var head [len(derivedMagic) + 1]byte
	if _, err := io.ReadFull(br, head[:]); err != nil || string(head[:len(derivedMagic)]) != derivedMagic {
		_ = f.Close()
		return nil, fmt.Errorf("%w: %s is not a derived file", ErrCorrupt, name)
	}
	switch head[len(derivedMagic)] {
	case derivedPlain:
		if db.hasHeader {
			// Written before encryption was turned on: refuse it (it is
			// removed at Open with the passphrase).
			_ = f.Close()
			return nil, fmt.Errorf("%w: derived file %s is plaintext in an encrypted directory", ErrCorrupt, name)
		}
		return readCloser{br, f}, nil
	case derivedSealed:
		if db.keys == nil {
			_ = f.Close()
			return nil, ErrEncrypted
		}
		r := &openReader{k: db.keys, r: br, aad: derivedAAD(name)}
		if _, err := io.ReadFull(br, r.prefix[:]); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("%w: derived file %s is cut short", ErrCorrupt, name)
		}
		return readCloser{r, f}, nil
	}
	_ = f.Close()
	return nil, fmt.Errorf("%w: derived file %s has unknown format %#x", ErrCorrupt, name, head[len(derivedMagic)])
}

// RemoveDerived deletes the derived file name (and a leftover name.part);
// a file that does not exist is not an error.
func (db *DB) RemoveDerived(name string) error {
	if err := checkDerivedName(name); err != nil {
		return err
	}
	for _, p := range []string{db.derivedPath(name), db.derivedPath(name) + derivedPart} {
		if err := db.fs.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove derived file: %w", err)
		}
	}
	return nil
}

// DerivedNames lists the derived files in name order (not the .part
// files of writes that did not finish).
func (db *DB) DerivedNames() ([]string, error) {
	names, err := db.fs.List(db.fs.PathJoin(db.dir, derivedDir))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("list derived files: %w", err)
	}
	out := names[:0]
	for _, n := range names {
		if checkDerivedName(n) == nil {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// tidyDerived deletes the .part files of writes that did not finish and,
// with a passphrase, every derived file that is not sealed: no derived
// plaintext may stay on the disk of an encrypted directory, whether it
// was written before encryption was turned on or by a write cut short.
func (db *DB) tidyDerived() error {
	dir := db.fs.PathJoin(db.dir, derivedDir)
	names, err := db.fs.List(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("list derived files: %w", err)
	}
	for _, n := range names {
		path := db.fs.PathJoin(dir, n)
		if !strings.HasSuffix(n, derivedPart) && (db.keys == nil || db.isSealedFile(path)) {
			continue
		}
		if err := db.fs.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove derived file: %w", err)
		}
	}
	return nil
}

// isSealedFile reports whether the file at path is a sealed derived file.
func (db *DB) isSealedFile(path string) bool {
	f, err := db.fs.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var head [len(derivedMagic) + 1]byte
	_, err = io.ReadFull(f, head[:])
	return err == nil && string(head[:len(derivedMagic)]) == derivedMagic && head[len(derivedMagic)] == derivedSealed
}

func derivedAAD(name string) []byte {
	return append([]byte(derivedAADTag+"\x00"), name...)
}

type readCloser struct {
	io.Reader
	io.Closer
}

// sealWriter seals what is written to it in chunks.
type sealWriter struct {
	k      *keyring
	w      io.Writer
	aad    []byte
	prefix [derivedPrefix]byte
	n      uint64 // chunks written
	buf    []byte // the current chunk's plaintext
	out    []byte
}

func (k *keyring) newSealWriter(w io.Writer, name string) (*sealWriter, error) {
	s := &sealWriter{k: k, w: w, aad: derivedAAD(name), buf: make([]byte, 0, derivedChunk)}
	_, _ = rand.Read(s.prefix[:])
	head := append([]byte(derivedMagic), derivedSealed)
	if _, err := w.Write(append(head, s.prefix[:]...)); err != nil {
		return nil, fmt.Errorf("write derived file: %w", err)
	}
	return s, nil
}

func (s *sealWriter) nonce(last bool) []byte {
	n := make([]byte, 0, chacha20poly1305.NonceSizeX)
	n = append(n, s.prefix[:]...)
	c := s.n
	if last {
		c |= lastChunk
	}
	return binary.BigEndian.AppendUint64(n, c)
}

// Write seals every full chunk, keeping the rest: a chunk is sealed only
// once more data follows it (or at close, as the last one).
func (s *sealWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if len(s.buf) == derivedChunk {
			if err := s.flush(false); err != nil {
				return 0, err
			}
		}
		k := copy(s.buf[len(s.buf):derivedChunk], p)
		s.buf = s.buf[:len(s.buf)+k]
		p = p[k:]
	}
	return n, nil
}

func (s *sealWriter) flush(last bool) error {
	s.out = s.k.aead.Seal(s.out[:0], s.nonce(last), s.buf, s.aad)
	clear(s.buf)
	s.buf = s.buf[:0]
	s.n++
	_, err := s.w.Write(s.out)
	return err
}

func (s *sealWriter) close() error { return s.flush(true) }

// openReader opens the chunks of a sealed derived file.
type openReader struct {
	k      *keyring
	r      *bufio.Reader
	aad    []byte
	prefix [derivedPrefix]byte
	n      uint64
	plain  []byte // opened, not yet read
	buf    []byte
	done   bool
	err    error
}

func (o *openReader) Read(p []byte) (int, error) {
	for len(o.plain) == 0 {
		if o.err != nil {
			return 0, o.err
		}
		if o.done {
			return 0, io.EOF
		}
		o.err = o.next()
	}
	n := copy(p, o.plain)
	o.plain = o.plain[n:]
	return n, nil
}

// next opens the next chunk; it is the last one when nothing follows it.
func (o *openReader) next() error {
	if o.buf == nil {
		o.buf = make([]byte, derivedChunk+chacha20poly1305.Overhead)
	}
	n, err := io.ReadFull(o.r, o.buf)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		o.done = true
	case err != nil:
		return fmt.Errorf("read derived file: %w", err)
	default:
		if _, err := o.r.Peek(1); errors.Is(err, io.EOF) {
			o.done = true
		}
	}
	if n < chacha20poly1305.Overhead {
		return fmt.Errorf("%w: derived file is cut short", ErrCorrupt)
	}
	nonce := make([]byte, 0, chacha20poly1305.NonceSizeX)
	nonce = append(nonce, o.prefix[:]...)
	c := o.n
	if o.done {
		c |= lastChunk
	}
	nonce = binary.BigEndian.AppendUint64(nonce, c)
	plain, err := o.k.aead.Open(o.buf[:0], nonce, o.buf[:n], o.aad)
	if err != nil {
		return fmt.Errorf("%w: derived file does not open under the directory's key (damaged, cut short, or written under another name or key)", ErrCorrupt)
	}
	o.n++
	o.plain = plain
	if len(plain) == 0 && o.done {
		return io.EOF
	}
	return nil
}
