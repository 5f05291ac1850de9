// Package store keeps memsvc's data in a pebble database: the four
// persistent curated stores, the raw journal and its indexes, engine
// settings, and any derived index that the engine keeps next to them. It is
// the only package that imports pebble.
//
// # Key layout
//
// Every key starts with a one-byte kind:
//
//	"F"                               layout version (one byte value, 2; see below)
//	"E"                               encryption header (see below), only in
//	                                  directories opened with a passphrase
//	"n" ns(4)                         namespace registry entry: state(1), then the
//	                                  name (see Namespaces)
//	"c" store(1) id(16)               curated record, value = EncodeRecord,
//	                                  or its encryption envelope
//	"j" id(16)                        raw journal entry, value = EncodeRaw,
//	                                  or its encryption envelope
//	"s" uvarint(len) session ts(12) id(16)
//	                                  raw session index, value = RawFlags
//	"S" tag(16) ts(12) id(16)         protected raw session index (written
//	                                  instead of "s" with a passphrase),
//	                                  value = RawFlags
//	"t" ts(12) id(16)                 raw time index, value = RawFlags
//	"m" name                          engine settings and counters (see engine)
//	"o" seq(8)                        audit outbox event with sequence seq
//	                                  (big endian), value = the event as the
//	                                  engine encodes it (JSON)
//	"x" ...                           derived indexes owned by the engine
//	"N" ns(4) <key>                   the key <key> ("c", "j", "s", "S", "t",
//	                                  "m" or "x" above) of namespace ns
//
// ts is a creation time as 8 bytes of Unix seconds with the sign bit
// flipped (so it sorts) followed by 4 bytes of nanoseconds, both big endian.
// Store bytes are the memory.StoreType values (1 episodic .. 4 emotional).
// RawFlags is one byte: visibility in bits 0-1, secrecy level in bits 2-3,
// suppressed in bit 4, dream-processed in bit 5, so raw recall filters
// without reading entries.
//
// # Namespaces
//
// Every curated record, raw entry, index entry, namespace setting and
// derived index belongs to one namespace (memory.ValidateNamespace names
// them). In the key layout a namespace is an NS, a number from a registry:
// 0 is memory.DefaultNamespace, and every other name gets the next unused
// number when it is first written to (CreateNamespace). Numbers are never
// reused, not even after the namespace was dropped.
//
// The default namespace owns the keys above as they are. Every other
// namespace ns owns a copy of the same layout behind the 5-byte prefix
// "N" ns(4), ns big endian: its records are "N" ns "c" store id, its raw
// time index "N" ns "t" ts id, and so on. So everything a namespace holds
// is one contiguous key range (a drop is one range deletion, a scan of a
// namespace never reads another's keys, and a namespace's index statistics
// and settings are its own), and the same record id may exist in two
// namespaces (an archive imported into a second namespace) as two records.
// "F", "E", "n" and "o" are global; "m" keys are the default namespace's
// settings and also hold the engine's global ones (the engine keeps their
// names apart).
//
// A registry entry "n" ns(4) holds a state byte, 1 live or 2 dropped, and
// the name. The default namespace has no entry: it always exists and is
// emptied, never removed, by a drop.
//
// The record and raw entry encodings do not repeat the namespace: the key
// is where a value lives, and an encrypted value is bound to its full key,
// prefix included, so a ciphertext moved into another namespace does not
// open (see Encryption at rest).
//
// Layout versions: 1 is the layout before namespaces, which is exactly the
// default namespace's part of layout 2. Opening a layout 1 directory
// therefore needs no migration: its data is the default namespace, and
// Open only rewrites "F" to 2, so a memsvc from before namespaces refuses
// the directory from then on rather than serving it without the other
// namespaces (or, importing with replace, leaving them behind).
//
// # Durability
//
// Every write goes through a Batch. Commit syncs the write-ahead log before
// returning, so an acknowledged write survives a crash or kill -9; a batch is
// applied atomically or not at all.
//
// # Damaged values
//
// A record value that cannot be read back (bytes that do not decode, or an
// encryption envelope that does not open) is quarantined, not fatal: scans
// skip it, it stays on disk untouched, it is logged once and listed by
// DB.Quarantined (details in quarantine.go).
//
// # Encryption at rest
//
// With Options.Passphrase set, record values ("c" and "j") are written as
// encryption envelopes. Encryption is lazy: plaintext values written earlier
// stay readable and are encrypted when they are next written, or all at once
// by DB.MigrateEncryption.
//
// The first Open with a passphrase writes the encryption header under the
// key "E" in the same synced way as any record, so it travels with the data
// in every copy of the directory (a separate file could be left behind by a
// backup and lose the salt). Its 80-byte value, integers big endian:
//
//	offset size
//	0      1    header version, 1
//	1      1    KDF, 1 = Argon2id (version 0x13)
//	2      1    cipher, 1 = XChaCha20-Poly1305
//	3      1    Argon2 parallelism (lanes)
//	4      4    Argon2 memory in KiB
//	8      4    Argon2 passes
//	12     32   salt, random per data directory
//	44     32   key check = HMAC-SHA256(Kc, bytes 0-43)
//	76     4    CRC-32C (Castagnoli) of bytes 0-75
//
// The keys come from the passphrase (white space around it ignored):
//
//	M  = Argon2id(passphrase, salt, passes, memory, lanes, 32 bytes)
//	Kr = HKDF-SHA256(M, salt, "memsvc store v1 record key")         record cipher key
//	Ks = HKDF-SHA256(M, salt, "memsvc store v1 session index key")  session tag key
//	Kc = HKDF-SHA256(M, salt, "memsvc store v1 key check")          key check key
//
// Open recomputes the key check and refuses a passphrase whose check
// differs with a *WrongPassphraseError, also on an empty store, so records
// under two keys cannot arise. The CRC tells a damaged header (ErrCorrupt)
// from a wrong passphrase. New directories use Options.KDF, by default
// DefaultKDF (19 MiB, 2 passes, 1 lane); directories created before that
// default keep 64 MiB, 3 passes, 4 lanes.
// M and the derived key bytes are wiped after use; the cipher keeps Kr in
// its own state for the life of the DB. Before it writes a header, Open
// reads every record value once and refuses a directory that already holds
// encrypted values: their header, and so their salt, is gone.
//
// Without the passphrase an encrypted directory (one with a header) opens
// for what is readable without it: plaintext values read as usual, an
// encrypted one returns ErrEncrypted, and a batch that writes records is
// refused with ErrEncrypted rather than writing plaintext into a directory
// the operator chose to encrypt.
//
// An encrypted value (the envelope) is:
//
//	offset size
//	0      1    0xE1, envelope version 1 (plaintext encodings start 0x01)
//	1      24   random nonce
//	25     n+16 XChaCha20-Poly1305(Kr, nonce, plaintext encoding, AAD)
//	AAD = 0xE1 || the value's full key ("c" store id, or "j" id, behind
//	      the "N" ns prefix outside the default namespace)
//
// Binding the key means a ciphertext copied to another record, from one
// store to another, or from one namespace to another, fails to open
// (ErrDecrypt) instead of reading as the wrong record. The overhead is 41
// bytes per value.
//
// With a passphrase the raw session index is written under "S", where the
// session id is replaced by tag = HMAC-SHA256(Ks, session id)[:16]; equal
// session ids still share a tag (the index must group them), so the tag
// hides the id but not which entries share a session. Until migration,
// entries indexed under "s" before encryption was enabled are merged into
// session scans.
//
// What stays in plaintext, because the store must find and order records
// without the key: the key layout itself (kinds, namespace numbers, store
// bytes, record ids, which are UUIDv7 and so carry a creation time in
// milliseconds), raw entry creation times in the "t" and "S" keys, the
// RawFlags bytes (visibility, secrecy, suppressed, dream-processed), the
// number and sizes of values, the "F" layout byte, the header, the
// namespace registry (names), and whatever the engine writes under "m"
// (settings and counters) and "o" (audit outbox events), and its derived
// indexes under "x" if it persists them (it must not while encrypting
// unless told to). Embeddings are inside the record values and are
// encrypted with them.
//
// A database opened with a passphrase also tunes pebble so that stale
// bytes do not linger: obsolete write-ahead logs are deleted rather than
// recycled (a recycled log keeps its old tail), and the MANIFEST, which
// remembers the first and last key of every table, is rewritten often.
// MigrateEncryption relies on both to leave no plaintext on disk.
package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"memsvc.dev/memsvc/pkg/memory"
)

// Kind bytes of the key layout.
const (
	kindFormat        = 'F'
	kindCrypt         = 'E'
	kindRegistry      = 'n'
	kindNamespaced    = 'N'
	kindCurated       = 'c'
	kindRaw           = 'j'
	kindSession       = 's'
	kindSealedSession = 'S'
	kindRawTime       = 't'
	kindMeta          = 'm'
	kindOutbox        = 'o'
	// KindDerived is the kind the engine's own indexes live under (in
	// each namespace; see DerivedPrefix).
	KindDerived = 'x'
	// NSDerived is KindDerived under the name it had before namespaces
	// (kept for code written against it).
	NSDerived = KindDerived
)

// layoutVersion is written to the "F" key of a new directory, and over
// layout 1 (see Namespaces). Opening a directory with a newer layout fails
// instead of misreading it.
const layoutVersion = 2

// Errors.
var (
	// ErrNotFound is returned by the Get functions when a key is absent.
	ErrNotFound = errors.New("store: not found")
	// ErrLocked means another process has the data directory open.
	ErrLocked = errors.New("data directory in use")
)

// LockedError says which directory is held. It matches ErrLocked.
type LockedError struct {
	Dir string
	Err error
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("data directory %s is already in use by another memsvc process (%v): "+
		"stop that process, use another --data-dir, or send the command to the running server with --server-url",
		e.Dir, e.Err)
}

func (e *LockedError) Is(target error) bool { return target == ErrLocked }
func (e *LockedError) Unwrap() error        { return e.Err }

// DB is an open data directory, or an in-memory database.
type DB struct {
	pdb  *pebble.DB
	lock *pebble.Lock
	dir  string
	fs   vfs.FS
	log  *slog.Logger

	// keys is nil without a passphrase; hasHeader is set when the
	// directory has an encryption header.
	keys      *keyring
	hasHeader bool
	kdf       KDFParams // of the header, when hasHeader
	// plainSessions is set while "s" may hold entries (keys != nil):
	// writes then also delete the plaintext form of replaced index keys.
	plainSessions atomic.Bool
	// commitMu lets MigrateEncryption rewrite a chunk of values with no
	// commit in between its read and its write (commits hold it shared).
	commitMu sync.RWMutex
	// manifests counts the MANIFEST files pebble has created (only with a
	// passphrase).
	manifests *atomic.Int64
	// migrateChunk is the number of values MigrateEncryption rewrites per
	// batch; tests lower it.
	migrateChunk int
	// migrateHook, when set by a test, runs before each migration batch
	// is committed.
	migrateHook func()
	// space refuses commits that would eat into the free-space reserve.
	space spaceGuard

	quarantine quarantine   // values that cannot be read (quarantine.go)
	recs       *recordCache // decoded records; nil when off (reccache.go)
	reg        registry     // namespace names and numbers (namespace.go)

	closeOnce sync.Once
	closeErr  error
}

// DefaultCacheBytes is the default block cache. The engine keeps its
// indexes and record metadata in memory and reads record bodies from the
// store to answer and to check raw entries for duplicates; 16 MiB holds
// that working set. A larger cache mostly keeps the blocks of the full scan
// at start-up, which nothing rereads, resident for good; at 8 MiB raw batch
// ingest and dream ticks slowed by a quarter to a half in the benchmark
// driver.
const DefaultCacheBytes = 16 << 20

// Options configure Open.
type Options struct {
	// Logger receives pebble's own messages at debug level. Nil discards.
	Logger *slog.Logger
	// CacheBytes is the block cache size; 0 selects DefaultCacheBytes.
	CacheBytes int64
	// RecordCacheBytes bounds the cache of decoded curated records
	// (reccache.go); 0 selects DefaultRecordCacheBytes, negative turns it
	// off.
	RecordCacheBytes int64
	// MinFreeBytes is the free space the store keeps on the file system of
	// its directory: Open refuses a directory with less, and a commit that
	// would leave less is refused with a *NoSpaceError (matching
	// ErrNoSpace) before pebble sees it. 0 turns the reserve off.
	MinFreeBytes uint64
	// DiskFree reports the bytes available on the file system holding a
	// path; nil selects DiskFree. Tests use it to simulate a full disk.
	DiskFree func(path string) (uint64, error)
	// Passphrase turns on encryption at rest (see the package comment);
	// nil or empty leaves values in plaintext. White space around it is
	// ignored and a passphrase of only white space is refused. Open does
	// not keep or change the slice: the caller may wipe it when Open
	// returns.
	Passphrase []byte
	// FS, when set, holds the database in place of the operating system's
	// file system, and dir names a directory in it. Tests use it to fail or
	// crash the file system under the store.
	FS vfs.FS
	// Fatal, when set, is told about an error pebble cannot continue from
	// (a failed write-ahead log write or sync) instead of the process
	// exiting. The database must not be used after it was called. Tests
	// with FS use it to treat that moment as a crash.
	Fatal func(msg string)
	// KDF sets the Argon2id parameters of the encryption header Open
	// writes when it starts encrypting a directory; the zero value selects
	// DefaultKDF. Open then refuses parameters Check refuses. A directory
	// that has a header keeps the parameters written in it, and Open
	// ignores KDF there, whatever it says.
	KDF KDFParams
}

// Open opens (creating if needed) the database in dir. It fails at once with
// a *LockedError when another process holds the directory.
func Open(dir string, opts Options) (*DB, error) {
	if opts.FS != nil {
		if err := opts.FS.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("create data directory: %w", err)
		}
		// pebble locks the directory in FS itself.
		return open(dir, opts.FS, nil, opts)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	// Opening writes (the lock file, a new write-ahead log, the options
	// file); on a full disk pebble would fail there, possibly fatally.
	if err := newSpaceGuard(abs, opts).check(0); err != nil {
		err.(*NoSpaceError).Opening = true
		return nil, err
	}
	lock, err := pebble.LockDirectory(abs, vfs.Default)
	if err != nil {
		if isLockErr(err) {
			return nil, &LockedError{Dir: abs, Err: err}
		}
		return nil, fmt.Errorf("lock data directory %s: %w", abs, err)
	}
	db, err := open(abs, vfs.Default, lock, opts)
	if err != nil {
		_ = lock.Close()
		return nil, err
	}
	return db, nil
}

// OpenInMemory returns an empty database that lives in memory only, for
// derived indexes that must not reach the disk and for tests.
func OpenInMemory() (*DB, error) {
	return open("", vfs.NewMem(), nil, Options{})
}

func isLockErr(err error) bool {
	if _, ok := errors.AsType[*os.PathError](err); ok {
		// Creating the LOCK file failed (permissions, read-only
		// file system): a real error, not another process.
		return false
	}
	return errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) ||
		bytes.Contains([]byte(err.Error()), []byte("lock held"))
}

func open(dir string, fs vfs.FS, lock *pebble.Lock, o Options) (*DB, error) {
	passphrase, err := preparePassphrase(o.Passphrase)
	if err != nil {
		return nil, err
	}

	o.Passphrase = passphrase
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	size := o.CacheBytes
	if size <= 0 {
		size = DefaultCacheBytes
	}
	cache := pebble.NewCache(size)
	defer cache.Unref()
	popts := &pebble.Options{
		FS:                 fs,
		Cache:              cache,
		Lock:               lock,
		Logger:             pebbleLogger{l: log, fatal: o.Fatal},
		FormatMajorVersion: pebble.FormatNewest,
	}
	manifests := new(atomic.Int64)
	if len(o.Passphrase) > 0 {
		forgetPlaintext(popts, manifests)
	}
	pdb, err := pebble.Open(dir, popts)
	if err != nil {
		return nil, fmt.Errorf("open database in %s: %w", dir, err)
	}
	db := &DB{pdb: pdb, lock: lock, dir: dir, fs: fs, log: log, manifests: manifests, space: newSpaceGuard(dir, o)}
	switch {
	case o.RecordCacheBytes == 0:
		db.recs = newRecordCache(DefaultRecordCacheBytes)
	case o.RecordCacheBytes > 0:
		db.recs = newRecordCache(o.RecordCacheBytes)
	}
	if err := db.checkLayout(); err != nil {
		_ = pdb.Close()
		return nil, err
	}
	if err := db.loadRegistry(); err != nil {
		_ = pdb.Close()
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	if err := db.setupEncryption(o); err != nil {
		_ = pdb.Close()
		return nil, err
	}
	if err := db.tidyDerived(); err != nil {
		_ = pdb.Close()
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	return db, nil
}

func (db *DB) checkLayout() error {
	v, err := db.Get([]byte{kindFormat})
	switch {
	case errors.Is(err, ErrNotFound):
		// A new directory, unless it holds keys: then another program
		// wrote this database.
		if used, err := db.hasPrefix(nil); err != nil || used {
			return errors.Join(err, fmt.Errorf("%s holds a database that memsvc did not write (no layout version); "+
				"choose another --data-dir", db.dir))
		}
	case err != nil:
		return err
	case len(v) != 1 || v[0] > layoutVersion:
		return fmt.Errorf("data directory %s was written by a newer memsvc (layout %v); upgrade memsvc to open it", db.dir, v)
	case v[0] == layoutVersion:
		return nil
	default:
		// Layout 1 is layout 2 with the default namespace only (see
		// Namespaces in the package comment): nothing to move.
		db.log.Info("data directory upgraded for namespaces: everything it holds is in the default namespace",
			"dir", db.dir, "layout", layoutVersion)
	}
	b := db.NewBatch()
	defer b.Close()
	b.Set([]byte{kindFormat}, []byte{layoutVersion})
	return b.Commit()
}

// Dir is the absolute data directory, or "" for an in-memory database.
func (db *DB) Dir() string { return db.dir }

// Compact flushes the memtable and compacts the whole key space, so that
// reads afterwards meet a settled tree instead of the compactions a bulk
// load leaves behind: for benchmarks, and for maintenance after a bulk
// load or a large drop. Writers may carry on meanwhile.
func (db *DB) Compact(ctx context.Context) error {
	if err := db.pdb.Flush(); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	// Every key starts with an ASCII kind byte, so [0x00, 0xff) covers the
	// whole database.
	if err := db.pdb.Compact(ctx, []byte{0x00}, []byte{0xff}, true); err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	return nil
}

// Close flushes and closes the database and releases the directory lock.
// Closing again returns the first result.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		db.closeErr = db.pdb.Close()
		if db.keys != nil {
			clear(db.keys.indexKey)
		}
		if db.lock != nil {
			if err := db.lock.Close(); db.closeErr == nil {
				db.closeErr = err
			}
		}
	})
	return db.closeErr
}

type pebbleLogger struct {
	l     *slog.Logger
	fatal func(msg string) // nil: exit the process
}

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
}
func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
}
func (p pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.l.Error(msg, "component", "pebble")
	if p.fatal != nil {
		p.fatal(msg)
		return
	}
	os.Exit(1)
}

// Get returns a copy of the value under key, or ErrNotFound.
func (db *DB) Get(key []byte) ([]byte, error) {
	v, closer, err := db.pdb.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	out := bytes.Clone(v)
	if out == nil {
		out = []byte{}
	}
	return out, closer.Close()
}

// Scan calls fn for every key in [lower, upper) in key order (reverse order
// when reverse is set) until fn returns false or an error. The key and value
// are only valid during the call.
func (db *DB) Scan(lower, upper []byte, reverse bool, fn func(key, value []byte) (bool, error)) error {
	return scan(db.pdb, lower, upper, reverse, fn)
}

func scan(r pebble.Reader, lower, upper []byte, reverse bool, fn func(key, value []byte) (bool, error)) error {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return err
	}
	var ok bool
	if reverse {
		ok = it.Last()
	} else {
		ok = it.First()
	}
	for ; ok; ok = step(it, reverse) {
		v, err := it.ValueAndErr()
		if err != nil {
			_ = it.Close()
			return err
		}
		more, err := fn(it.Key(), v)
		if err != nil || !more {
			cerr := it.Close()
			if err != nil {
				return err
			}
			return cerr
		}
	}
	if err := it.Error(); err != nil {
		_ = it.Close()
		return err
	}
	return it.Close()
}

func step(it *pebble.Iterator, reverse bool) bool {
	if reverse {
		return it.Prev()
	}
	return it.Next()
}

// PrefixEnd returns the smallest key greater than every key with prefix p.
func PrefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil // p is all 0xff: no upper bound
}

// ScanPrefix is Scan over every key that starts with prefix.
func (db *DB) ScanPrefix(prefix []byte, reverse bool, fn func(key, value []byte) (bool, error)) error {
	return db.Scan(prefix, PrefixEnd(prefix), reverse, fn)
}

// Batch collects writes that are applied atomically by Commit.
type Batch struct {
	db *DB
	b  *pebble.Batch
	// records is set by PutRecord and PutRaw.
	records bool
	// healed are quarantined keys the batch rewrites; released are the
	// namespaces whose records DeleteAllRecords or DropNamespace delete.
	// Both release quarantined values on commit.
	healed   [][]byte
	released []NS
	// dropped are the namespaces DropNamespace removes from the registry
	// on commit.
	dropped []NS
	// recKeys are the curated-record keys the batch writes or deletes,
	// and rangeDeleted is set when it deletes a range: what the record
	// cache drops on commit (reccache.go).
	recKeys      [][]byte
	rangeDeleted bool
}

// NewBatch starts an empty batch.
func (db *DB) NewBatch() *Batch { return &Batch{db: db, b: db.pdb.NewBatch()} }

// Set writes value under key.
func (b *Batch) Set(key, value []byte) {
	b.noteWrite(key)
	_ = b.b.Set(key, value, nil)
}

// Delete removes key.
func (b *Batch) Delete(key []byte) {
	b.noteWrite(key)
	_ = b.b.Delete(key, nil)
}

// DeleteRange removes every key in [lower, upper).
func (b *Batch) DeleteRange(lower, upper []byte) {
	b.rangeDeleted = true
	_ = b.b.DeleteRange(lower, upper, nil)
}

// Empty reports whether the batch holds no writes.
func (b *Batch) Empty() bool { return b.b.Empty() }

// Commit applies the batch and syncs the write-ahead log. Concurrent commits
// share one sync.
func (b *Batch) Commit() error { return b.commit(pebble.Sync) }

// CommitNoSync applies the batch without waiting for the disk; for derived
// data that is rebuilt after a crash.
func (b *Batch) CommitNoSync() error { return b.commit(pebble.NoSync) }

// SyncWAL waits until every batch committed so far, with or without a
// sync, is on disk. The write-ahead log is one sequential file, so syncing
// it (here, with an empty log record) covers every earlier commit: a
// caller can commit several batches with CommitNoSync, then make them all
// durable at once.
func (db *DB) SyncWAL() error {
	return db.pdb.LogData(nil, pebble.Sync)
}

// Append adds the writes of o after those of b, so that both commit
// together: a group commit of several changes shares one sync. o is left as
// it was and still has to be closed. A batch that Commit would refuse is
// refused here, and b is left as it was.
func (b *Batch) Append(o *Batch) error {
	if err := o.writable(); err != nil {
		return err
	}
	if err := b.b.Apply(o.b, nil); err != nil {
		return err
	}
	b.records = b.records || o.records
	b.healed = append(b.healed, o.healed...)
	b.released = append(b.released, o.released...)
	b.dropped = append(b.dropped, o.dropped...)
	b.recKeys = append(b.recKeys, o.recKeys...)
	b.rangeDeleted = b.rangeDeleted || o.rangeDeleted
	return nil
}

// writable refuses record values in a directory that is encrypted but was
// opened without its passphrase: they would be written in plaintext where
// the operator asked for encryption.
func (b *Batch) writable() error {
	if b.records && b.db.keys == nil && b.db.hasHeader {
		return fmt.Errorf("data directory %s is encrypted; not writing records in plaintext: %w", b.db.dir, ErrEncrypted)
	}
	return nil
}

// commit applies the batch, unless writable refuses it.
func (b *Batch) commit(o *pebble.WriteOptions) error {
	if err := b.writable(); err != nil {
		return err
	}
	if err := b.db.space.check(b.b.Len()); err != nil {
		return err
	}
	b.db.commitMu.RLock()
	defer b.db.commitMu.RUnlock()
	defer b.holdCached()()
	if err := b.b.Commit(o); err != nil {
		return err
	}
	if b.healed != nil || b.released != nil {
		b.db.quarantine.release(b.healed, b.released)
	}
	if b.dropped != nil {
		b.db.reg.forget(b.dropped)
	}
	return nil
}

// putValue writes a record value, noting a quarantined key it replaces;
// sealed, plain is wiped.
func (b *Batch) putValue(key, plain []byte) { b.putStored(key, b.db.sealValue(key, plain)) }

// putStored writes v, a record value as stored (sealed when the database
// has a passphrase), noting a quarantined key it replaces.
func (b *Batch) putStored(key, v []byte) {
	if b.db.quarantine.has(key) {
		b.healed = append(b.healed, key)
	}
	b.records = true
	b.Set(key, v)
}

// Close releases the batch; it may be called after Commit.
func (b *Batch) Close() { _ = b.b.Close() }

// Keys.

// appendPrefix appends the key prefix of namespace ns to k: nothing for the
// default namespace, "N" ns(4) for the others.
func (ns NS) appendPrefix(k []byte) []byte {
	if ns == DefaultNS {
		return k
	}
	k = append(k, kindNamespaced)
	return binary.BigEndian.AppendUint32(k, uint32(ns))
}

// prefixLen is the length of ns's key prefix.
func (ns NS) prefixLen() int {
	if ns == DefaultNS {
		return 0
	}
	return 5
}

// key returns ns's prefix followed by kind, with room for n more bytes.
func (ns NS) key(kind byte, n int) []byte {
	k := make([]byte, 0, ns.prefixLen()+1+n)
	return append(ns.appendPrefix(k), kind)
}

func recordKey(ns NS, st memory.StoreType, id memory.ID) []byte {
	k := append(ns.key(kindCurated, 17), byte(st))
	return append(k, id[:]...)
}

func rawKey(ns NS, id memory.ID) []byte {
	return append(ns.key(kindRaw, 16), id[:]...)
}

// appendTime appends the sortable 12-byte form of t.
func appendTime(k []byte, t time.Time) []byte {
	k = binary.BigEndian.AppendUint64(k, uint64(t.Unix())^(1<<63))
	return binary.BigEndian.AppendUint32(k, uint32(t.Nanosecond()))
}

func sessionPrefix(ns NS, session string) []byte {
	k := ns.key(kindSession, binary.MaxVarintLen64+len(session)+12+16)
	k = binary.AppendUvarint(k, uint64(len(session)))
	return append(k, session...)
}

func sessionKey(ns NS, r *memory.RawJournalRecord) []byte {
	k := appendTime(sessionPrefix(ns, r.SessionID), r.CreatedAt)
	return append(k, r.ID[:]...)
}

// sealedSessionPrefix is the protected form of sessionPrefix.
func (k *keyring) sealedSessionPrefix(ns NS, session string) []byte {
	p := ns.key(kindSealedSession, sessionTagSize+12+16)
	return append(p, k.sessionTag(session)...)
}

func (k *keyring) sealedSessionKey(ns NS, r *memory.RawJournalRecord) []byte {
	p := appendTime(k.sealedSessionPrefix(ns, r.SessionID), r.CreatedAt)
	return append(p, r.ID[:]...)
}

func rawTimeKey(ns NS, r *memory.RawJournalRecord) []byte {
	k := appendTime(ns.key(kindRawTime, 12+16), r.CreatedAt)
	return append(k, r.ID[:]...)
}

// MetaKey is the key of a global engine setting, one that belongs to no
// namespace. The default namespace's settings share the "m" kind: see
// NSMetaKey.
func MetaKey(name string) []byte { return append([]byte{kindMeta}, name...) }

// NSMetaKey is the key of the setting name of namespace ns. For the
// default namespace it is MetaKey(name): the engine must not use the name
// of a global setting for a namespace setting.
func NSMetaKey(ns NS, name string) []byte { return append(ns.key(kindMeta, len(name)), name...) }

// DerivedPrefix is the prefix under which the engine keeps the derived
// indexes of namespace ns (KindDerived behind the namespace's prefix).
// Dropping the namespace deletes them with it.
func DerivedPrefix(ns NS) []byte { return ns.key(KindDerived, 0) }

// Curated records.

// PutRecord writes a curated record of a persistent store into namespace
// ns, encrypted when the database has a passphrase.
func (b *Batch) PutRecord(ns NS, rec *memory.MemoryRecord) {
	b.putValue(recordKey(ns, rec.Store, rec.ID), EncodeRecord(rec))
}

// PutEncodedRecord is PutRecord for record id of store st already encoded
// by EncodeRecord (enc), for a writer that keeps records encoded: it
// writes them without decoding and encoding them again, and leaves enc as
// it was (PutRecord wipes the plaintext it seals; enc is the writer's).
func (b *Batch) PutEncodedRecord(ns NS, st memory.StoreType, id memory.ID, enc []byte) {
	key := recordKey(ns, st, id)
	v := enc
	if b.db.keys != nil {
		v = b.db.keys.sealKept(key, enc)
	}
	b.putStored(key, v)
}

// sealValue returns what to store under key for the plaintext encoding
// plain.
func (db *DB) sealValue(key, plain []byte) []byte {
	if db.keys == nil {
		return plain
	}
	return db.keys.seal(key, plain)
}

// decodeAt decodes the value v stored under key with decode, decrypting
// it first when it is sealed (in place when the caller owns v).
func decodeAt[T any](k *keyring, key, v []byte, owned bool, decode func([]byte) (T, error)) (T, error) {
	plain, wipe, err := k.plainValue(key, v, owned)
	if err != nil {
		var zero T
		return zero, err
	}
	rec, err := decode(plain)
	if wipe {
		clear(plain)
	}
	return rec, err
}

// DeleteRecord removes a curated record of namespace ns.
func (b *Batch) DeleteRecord(ns NS, st memory.StoreType, id memory.ID) {
	b.Delete(recordKey(ns, st, id))
}

// GetRecord reads one curated record of namespace ns, or ErrNotFound.
// The record is the caller's to change: with the record cache on
// (reccache.go) it is a copy of the cached one.
func (db *DB) GetRecord(ns NS, st memory.StoreType, id memory.ID) (*memory.MemoryRecord, error) {
	key := recordKey(ns, st, id)
	var gen uint64
	if db.recs != nil {
		var rec *memory.MemoryRecord
		var ok bool
		if rec, gen, ok = db.recs.get(key); ok {
			return rec, nil
		}
	}
	// Decoded straight from pebble's buffer: DecodeRecord copies what it
	// keeps.
	v, closer, err := db.pdb.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	rec, err := decodeAt(db.keys, key, v, false, DecodeRecord)
	if cerr := closer.Close(); err == nil && cerr != nil {
		return nil, cerr
	}
	if err != nil {
		db.damaged(key, ns, st, err)
		return nil, fmt.Errorf("%s record %s: %w", st, id, err)
	}
	if db.recs != nil {
		db.recs.put(key, gen, rec)
	}
	return rec, nil
}

// ScanRecords calls fn for every record of store st in namespace ns, in id
// order, skipping quarantined values (see Quarantined). It reads no other
// namespace's keys.
func (db *DB) ScanRecords(ns NS, st memory.StoreType, fn func(*memory.MemoryRecord) error) error {
	return db.scanRecords(db.pdb, ns, st, fn)
}

func (db *DB) scanRecords(r pebble.Reader, ns NS, st memory.StoreType, fn func(*memory.MemoryRecord) error) error {
	p := append(ns.key(kindCurated, 1), byte(st))
	return scan(r, p, PrefixEnd(p), false, func(k, v []byte) (bool, error) {
		rec, err := decodeAt(db.keys, k, v, false, DecodeRecord)
		if err != nil {
			if db.damaged(k, ns, st, err) {
				return true, nil
			}
			return false, fmt.Errorf("%s record %x: %w", st, k[len(p):], err)
		}
		return true, fn(rec)
	})
}

// Raw journal.

// PutRaw writes a raw journal entry of namespace ns and its index entries.
// When the entry replaces an earlier version, pass that version as old so
// stale index entries are removed; otherwise pass nil.
func (b *Batch) PutRaw(ns NS, rec, old *memory.RawJournalRecord) {
	if old != nil {
		b.deleteRawIndex(ns, old)
	}
	flags := []byte{byte(FlagsOf(rec))}
	b.putValue(rawKey(ns, rec.ID), EncodeRaw(rec))
	if k := b.db.keys; k != nil {
		b.Set(k.sealedSessionKey(ns, rec), flags)
	} else {
		b.Set(sessionKey(ns, rec), flags)
	}
	b.Set(rawTimeKey(ns, rec), flags)
}

// deleteRawIndex removes the index entries of rec. With a passphrase the
// plaintext session key is only deleted while such keys may exist, so a
// tombstone never writes a session id to disk after migration.
func (b *Batch) deleteRawIndex(ns NS, rec *memory.RawJournalRecord) {
	k := b.db.keys
	switch {
	case k == nil:
		b.Delete(sessionKey(ns, rec))
	case b.db.plainSessions.Load():
		// Only entries written before encryption was turned on have a
		// plaintext key. Deleting one that does not exist would put the
		// session id on disk, in the tombstone.
		if pk := sessionKey(ns, rec); b.db.exists(pk) {
			b.Delete(pk)
		}
	}
	if k != nil {
		b.Delete(k.sealedSessionKey(ns, rec))
	}
	b.Delete(rawTimeKey(ns, rec))
}

// exists reports whether key is present; when the read fails it says yes,
// so a caller deleting the key errs on the side of deleting.
func (db *DB) exists(key []byte) bool {
	_, closer, err := db.pdb.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return false
	}
	if err == nil {
		_ = closer.Close()
	}
	return true
}

// recordKinds are the kinds that hold a namespace's curated records, raw
// entries and raw indexes.
var recordKinds = []byte{kindCurated, kindRaw, kindSession, kindSealedSession, kindRawTime}

// DeleteAllRecords removes every curated record and raw journal entry of
// namespace ns with all their index entries, in whichever form they were
// written. Settings, derived indexes, other namespaces, the encryption
// header and the audit outbox stay.
func (b *Batch) DeleteAllRecords(ns NS) {
	for _, kind := range recordKinds {
		p := ns.key(kind, 0)
		b.DeleteRange(p, PrefixEnd(p))
	}
	b.released = append(b.released, ns)
}

// RawFlags are the filterable attributes of a raw entry, kept in its index
// entries.
type RawFlags byte

// FlagsOf computes the index flags of rec.
func FlagsOf(rec *memory.RawJournalRecord) RawFlags {
	f := RawFlags(rec.Visibility&3) | RawFlags(rec.SecrecyLevel&3)<<2
	if rec.Suppressed {
		f |= 1 << 4
	}
	if IsDreamProcessed(rec) {
		f |= 1 << 5
	}
	return f
}

// Visibility of the entry.
func (f RawFlags) Visibility() memory.Visibility { return memory.Visibility(f & 3) }

// SecrecyLevel of the entry.
func (f RawFlags) SecrecyLevel() memory.SecrecyLevel { return memory.SecrecyLevel(f >> 2 & 3) }

// Suppressed reports whether the entry is hidden from recall and dreams.
func (f RawFlags) Suppressed() bool { return f&(1<<4) != 0 }

// DreamProcessed reports whether dream processing has summarised the entry.
func (f RawFlags) DreamProcessed() bool { return f&(1<<5) != 0 }

// IsDreamProcessed reports whether metadata._dream.processed_at is a string,
// the marker dream processing leaves on the entries it summarised.
func IsDreamProcessed(rec *memory.RawJournalRecord) bool {
	if !bytes.Contains(rec.Metadata, []byte(`"processed_at"`)) {
		return false
	}
	var md struct {
		Dream struct {
			ProcessedAt any `json:"processed_at"`
		} `json:"_dream"`
	}
	if json.Unmarshal(rec.Metadata, &md) != nil {
		return false
	}
	_, ok := md.Dream.ProcessedAt.(string)
	return ok
}

// DeleteRaw removes a raw journal entry of namespace ns and its index
// entries.
func (b *Batch) DeleteRaw(ns NS, rec *memory.RawJournalRecord) {
	b.Delete(rawKey(ns, rec.ID))
	b.deleteRawIndex(ns, rec)
}

// GetRaw reads one raw journal entry of namespace ns, or ErrNotFound.
func (db *DB) GetRaw(ns NS, id memory.ID) (*memory.RawJournalRecord, error) {
	key := rawKey(ns, id)
	v, err := db.Get(key)
	if err != nil {
		return nil, err
	}
	rec, err := decodeAt(db.keys, key, v, true, DecodeRaw)
	if err != nil {
		db.damaged(key, ns, 0, err)
		return nil, fmt.Errorf("raw record %s: %w", id, err)
	}
	return rec, nil
}

// HasRaw reports whether namespace ns holds a raw journal entry with this
// id.
func (db *DB) HasRaw(ns NS, id memory.ID) (bool, error) {
	_, closer, err := db.pdb.Get(rawKey(ns, id))
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, closer.Close()
}

// ScanRaw calls fn for every raw journal entry of namespace ns in id
// order, skipping quarantined values (see Quarantined).
func (db *DB) ScanRaw(ns NS, fn func(*memory.RawJournalRecord) error) error {
	return db.scanRaw(db.pdb, ns, fn)
}

func (db *DB) scanRaw(r pebble.Reader, ns NS, fn func(*memory.RawJournalRecord) error) error {
	p := ns.key(kindRaw, 0)
	return scan(r, p, PrefixEnd(p), false, func(k, v []byte) (bool, error) {
		rec, err := decodeAt(db.keys, k, v, false, DecodeRaw)
		if err != nil {
			if db.damaged(k, ns, 0, err) {
				return true, nil
			}
			return false, fmt.Errorf("raw record %x: %w", k[len(p):], err)
		}
		return true, fn(rec)
	})
}

// RawRange selects raw entries by creation time, newest first.
type RawRange struct {
	// Session restricts the scan to one session when non-nil.
	Session *string
	// Start and End bound the creation time (inclusive) when non-zero.
	Start, End time.Time
}

// ScanRawNewest calls fn with the ids and flags of the raw entries of
// namespace ns in rng, newest first, until fn returns false. Only index
// entries are read, and only the namespace's; fetch the entries with
// GetRaw.
//
// With a passphrase a session scan reads the protected session index and,
// until MigrateEncryption has run, the plaintext one, merged. Without a
// passphrase in a directory whose session index is protected it returns
// ErrEncrypted rather than a partial answer.
func (db *DB) ScanRawNewest(ns NS, rng RawRange, fn func(id memory.ID, flags RawFlags) (bool, error)) error {
	var prefixes [][]byte
	switch {
	case rng.Session == nil:
		prefixes = [][]byte{ns.key(kindRawTime, 0)}
	case db.keys != nil:
		prefixes = [][]byte{db.keys.sealedSessionPrefix(ns, *rng.Session)}
		if db.plainSessions.Load() {
			prefixes = append(prefixes, sessionPrefix(ns, *rng.Session))
		}
	default:
		if db.hasHeader {
			sealed, err := db.hasPrefix(ns.key(kindSealedSession, 0))
			if err != nil {
				return err
			}
			if sealed {
				return fmt.Errorf("session index: %w", ErrEncrypted)
			}
		}
		prefixes = [][]byte{sessionPrefix(ns, *rng.Session)}
	}
	spans := make([]indexSpan, len(prefixes))
	for i, p := range prefixes {
		sp := indexSpan{lower: p, upper: PrefixEnd(p), prefixLen: len(p)}
		if !rng.Start.IsZero() {
			sp.lower = appendTime(bytes.Clone(p), rng.Start)
		}
		if !rng.End.IsZero() {
			// Inclusive end: everything up to the end time's last id.
			sp.upper = PrefixEnd(appendTime(bytes.Clone(p), rng.End))
		}
		spans[i] = sp
	}
	return scanIndexNewest(db.pdb, spans, fn)
}

// indexSpan is a key range of a raw index whose keys end in ts(12) id(16).
type indexSpan struct {
	lower, upper []byte
	prefixLen    int
}

const indexSuffixLen = 12 + 16

// scanIndexNewest walks the spans backwards at once, yielding entries in
// descending (time, id) order. An entry present in several spans (an entry
// indexed under both session forms during migration) is yielded once, with
// the flags of the earliest span.
func scanIndexNewest(r pebble.Reader, spans []indexSpan, fn func(id memory.ID, flags RawFlags) (bool, error)) (err error) {
	its := make([]*pebble.Iterator, 0, len(spans))
	defer func() {
		for _, it := range its {
			if cerr := it.Close(); err == nil {
				err = cerr
			}
		}
	}()
	valid := make([]bool, len(spans))
	for i, sp := range spans {
		it, err := r.NewIter(&pebble.IterOptions{LowerBound: sp.lower, UpperBound: sp.upper})
		if err != nil {
			return err
		}
		its = append(its, it)
		valid[i] = it.Last()
	}
	suffix := func(i int) ([]byte, error) {
		k := its[i].Key()
		if len(k) != spans[i].prefixLen+indexSuffixLen {
			return nil, fmt.Errorf("%w: bad raw index key", ErrCorrupt)
		}
		return k[len(k)-indexSuffixLen:], nil
	}
	// live calls f with every iterator that has an entry left and the key
	// suffix it is at.
	live := func(f func(i int, suf []byte)) error {
		for i := range its {
			if !valid[i] {
				continue
			}
			suf, err := suffix(i)
			if err != nil {
				return err
			}
			f(i, suf)
		}
		return nil
	}
	var last [indexSuffixLen]byte
	for {
		best := -1
		var bestSuffix []byte
		if err := live(func(i int, suf []byte) {
			if best < 0 || bytes.Compare(suf, bestSuffix) > 0 {
				best, bestSuffix = i, suf
			}
		}); err != nil {
			return err
		}
		if best < 0 {
			break
		}
		v, err := its[best].ValueAndErr()
		if err != nil {
			return err
		}
		if len(v) != 1 {
			return fmt.Errorf("%w: bad raw index entry", ErrCorrupt)
		}
		copy(last[:], bestSuffix)
		var id memory.ID
		copy(id[:], last[12:])
		more, err := fn(id, RawFlags(v[0]))
		if err != nil || !more {
			return err
		}
		if err := live(func(i int, suf []byte) {
			if bytes.Equal(suf, last[:]) {
				valid[i] = its[i].Prev()
			}
		}); err != nil {
			return err
		}
	}
	for _, it := range its {
		if err := it.Error(); err != nil {
			return err
		}
	}
	return nil
}

// hasPrefix reports whether any key starts with p.
func (db *DB) hasPrefix(p []byte) (bool, error) {
	found := false
	err := db.ScanPrefix(p, false, func(_, _ []byte) (bool, error) {
		found = true
		return false, nil
	})
	return found, err
}

// Snapshot is a consistent, read-only view of the database at one moment;
// writes after it was taken are invisible to it.
type Snapshot struct {
	s  *pebble.Snapshot
	db *DB
}

// NewSnapshot takes a snapshot. Close it when done.
func (db *DB) NewSnapshot() *Snapshot { return &Snapshot{s: db.pdb.NewSnapshot(), db: db} }

// ScanRecords is DB.ScanRecords over the snapshot.
func (s *Snapshot) ScanRecords(ns NS, st memory.StoreType, fn func(*memory.MemoryRecord) error) error {
	return s.db.scanRecords(s.s, ns, st, fn)
}

// ScanRaw is DB.ScanRaw over the snapshot.
func (s *Snapshot) ScanRaw(ns NS, fn func(*memory.RawJournalRecord) error) error {
	return s.db.scanRaw(s.s, ns, fn)
}

// Close releases the snapshot.
func (s *Snapshot) Close() error { return s.s.Close() }

// Audit outbox.

func outboxKey(seq uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{kindOutbox}, seq)
}

// PutOutbox writes the audit outbox event with sequence seq.
func (b *Batch) PutOutbox(seq uint64, event []byte) { b.Set(outboxKey(seq), event) }

// DeleteOutbox removes the outbox event with sequence seq.
func (b *Batch) DeleteOutbox(seq uint64) { b.Delete(outboxKey(seq)) }

// ScanOutbox calls fn with every outbox event in sequence order until fn
// returns false. The event is only valid during the call.
func (db *DB) ScanOutbox(fn func(seq uint64, event []byte) (bool, error)) error {
	return db.ScanOutboxFrom(0, fn)
}

// ScanOutboxFrom is ScanOutbox from sequence from on. Starting past the
// events already taken skips their deletions, which pile up in the store
// until a compaction and would otherwise be stepped over on every scan.
func (db *DB) ScanOutboxFrom(from uint64, fn func(seq uint64, event []byte) (bool, error)) error {
	lower := []byte{kindOutbox} // from 0 on: malformed keys too
	if from > 0 {
		lower = outboxKey(from)
	}
	return db.Scan(lower, PrefixEnd(lower[:1]), false, func(k, v []byte) (bool, error) {
		if len(k) != 9 {
			return false, fmt.Errorf("outbox key %x: %w", k, ErrCorrupt)
		}
		return fn(binary.BigEndian.Uint64(k[1:]), v)
	})
}

// Settings.

// GetMeta reads a global engine setting, or ErrNotFound.
func (db *DB) GetMeta(name string) ([]byte, error) { return db.Get(MetaKey(name)) }

// PutMeta writes a global engine setting.
func (b *Batch) PutMeta(name string, value []byte) { b.Set(MetaKey(name), value) }

// GetNSMeta reads a setting of namespace ns, or ErrNotFound.
func (db *DB) GetNSMeta(ns NS, name string) ([]byte, error) { return db.Get(NSMetaKey(ns, name)) }

// PutNSMeta writes a setting of namespace ns.
func (b *Batch) PutNSMeta(ns NS, name string, value []byte) { b.Set(NSMetaKey(ns, name), value) }

// DeleteNSMeta removes a setting of namespace ns.
func (b *Batch) DeleteNSMeta(ns NS, name string) { b.Delete(NSMetaKey(ns, name)) }

var _ io.Closer = (*DB)(nil)
