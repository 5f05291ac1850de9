// Package store keeps memsvc's data in a pebble database: the four
// persistent curated stores, the raw journal and its indexes, engine
// settings, and any derived index that the engine keeps next to them. It is
// the only package that imports pebble.
//
// # Key layout
//
// Every key starts with a one-byte namespace:
//
//	"F"                               format version of the layout (one byte value)
//	"c" store(1) id(16)               curated record, value = EncodeRecord
//	"j" id(16)                        raw journal entry, value = EncodeRaw
//	"s" uvarint(len) session ts(12) id(16)
//	                                  raw session index, value = RawFlags
//	"t" ts(12) id(16)                 raw time index, value = RawFlags
//	"m" name                          engine settings and counters (see engine)
//	"x" ...                           derived indexes owned by the engine
//
// ts is a creation time as 8 bytes of Unix seconds with the sign bit
// flipped (so it sorts) followed by 4 bytes of nanoseconds, both big endian.
// Store bytes are the memory.StoreType values (1 episodic .. 4 emotional).
// RawFlags is one byte: visibility in bits 0-1, secrecy level in bits 2-3,
// suppressed in bit 4, dream-processed in bit 5, so raw recall filters
// without reading entries.
//
// # Durability
//
// Every write goes through a Batch. Commit syncs the write-ahead log before
// returning, so an acknowledged write survives a crash or kill -9; a batch is
// applied atomically or not at all.
package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"memsvc.dev/memsvc/pkg/memory"
)

// Namespace bytes of the key layout.
const (
	nsFormat  = 'F'
	nsCurated = 'c'
	nsRaw     = 'j'
	nsSession = 's'
	nsRawTime = 't'
	nsMeta    = 'm'
	// NSDerived is the namespace the engine's own indexes live under.
	NSDerived = 'x'
)

// layoutVersion is written to the "F" key of a new directory. Opening a
// directory with a newer layout fails instead of misreading it.
const layoutVersion = 1

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
	log  *slog.Logger

	closeOnce sync.Once
	closeErr  error
}

// Options configure Open.
type Options struct {
	// Logger receives pebble's own messages at debug level. Nil discards.
	Logger *slog.Logger
	// CacheBytes is the block cache size; 0 selects 32 MiB.
	CacheBytes int64
}

// Open opens (creating if needed) the database in dir. It fails at once with
// a *LockedError when another process holds the directory.
func Open(dir string, opts Options) (*DB, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
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
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	size := o.CacheBytes
	if size <= 0 {
		size = 32 << 20
	}
	cache := pebble.NewCache(size)
	defer cache.Unref()
	popts := &pebble.Options{
		FS:                 fs,
		Cache:              cache,
		Lock:               lock,
		Logger:             pebbleLogger{log},
		FormatMajorVersion: pebble.FormatNewest,
	}
	pdb, err := pebble.Open(dir, popts)
	if err != nil {
		return nil, fmt.Errorf("open database in %s: %w", dir, err)
	}
	db := &DB{pdb: pdb, lock: lock, dir: dir, log: log}
	if err := db.checkLayout(); err != nil {
		_ = pdb.Close()
		return nil, err
	}
	return db, nil
}

func (db *DB) checkLayout() error {
	v, err := db.Get([]byte{nsFormat})
	switch {
	case errors.Is(err, ErrNotFound):
		b := db.NewBatch()
		defer b.Close()
		b.Set([]byte{nsFormat}, []byte{layoutVersion})
		return b.Commit()
	case err != nil:
		return err
	case len(v) != 1 || v[0] > layoutVersion:
		return fmt.Errorf("data directory %s was written by a newer memsvc (layout %v); upgrade memsvc to open it", db.dir, v)
	}
	return nil
}

// Dir is the absolute data directory, or "" for an in-memory database.
func (db *DB) Dir() string { return db.dir }

// Close flushes and closes the database and releases the directory lock.
// Closing again returns the first result.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		db.closeErr = db.pdb.Close()
		if db.lock != nil {
			if err := db.lock.Close(); db.closeErr == nil {
				db.closeErr = err
			}
		}
	})
	return db.closeErr
}

type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
}
func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
}
func (p pebbleLogger) Fatalf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
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
}

// NewBatch starts an empty batch.
func (db *DB) NewBatch() *Batch { return &Batch{db: db, b: db.pdb.NewBatch()} }

// Set writes value under key.
func (b *Batch) Set(key, value []byte) { _ = b.b.Set(key, value, nil) }

// Delete removes key.
func (b *Batch) Delete(key []byte) { _ = b.b.Delete(key, nil) }

// DeleteRange removes every key in [lower, upper).
func (b *Batch) DeleteRange(lower, upper []byte) { _ = b.b.DeleteRange(lower, upper, nil) }

// Empty reports whether the batch holds no writes.
func (b *Batch) Empty() bool { return b.b.Empty() }

// Commit applies the batch and syncs the write-ahead log. Concurrent commits
// share one sync.
func (b *Batch) Commit() error { return b.b.Commit(pebble.Sync) }

// CommitNoSync applies the batch without waiting for the disk; for derived
// data that is rebuilt after a crash.
func (b *Batch) CommitNoSync() error { return b.b.Commit(pebble.NoSync) }

// Close releases the batch; it may be called after Commit.
func (b *Batch) Close() { _ = b.b.Close() }

// Keys.

func recordKey(st memory.StoreType, id memory.ID) []byte {
	k := make([]byte, 0, 18)
	k = append(k, nsCurated, byte(st))
	return append(k, id[:]...)
}

func rawKey(id memory.ID) []byte {
	k := make([]byte, 0, 17)
	k = append(k, nsRaw)
	return append(k, id[:]...)
}

// appendTime appends the sortable 12-byte form of t.
func appendTime(k []byte, t time.Time) []byte {
	k = binary.BigEndian.AppendUint64(k, uint64(t.Unix())^(1<<63))
	return binary.BigEndian.AppendUint32(k, uint32(t.Nanosecond()))
}

func sessionPrefix(session string) []byte {
	k := make([]byte, 0, 1+binary.MaxVarintLen64+len(session))
	k = append(k, nsSession)
	k = binary.AppendUvarint(k, uint64(len(session)))
	return append(k, session...)
}

func sessionKey(r *memory.RawJournalRecord) []byte {
	k := appendTime(sessionPrefix(r.SessionID), r.CreatedAt)
	return append(k, r.ID[:]...)
}

func rawTimeKey(r *memory.RawJournalRecord) []byte {
	k := appendTime([]byte{nsRawTime}, r.CreatedAt)
	return append(k, r.ID[:]...)
}

// MetaKey is the key of an engine setting.
func MetaKey(name string) []byte { return append([]byte{nsMeta}, name...) }

// Curated records.

// PutRecord writes a curated record of a persistent store.
func (b *Batch) PutRecord(rec *memory.MemoryRecord) {
	b.Set(recordKey(rec.Store, rec.ID), EncodeRecord(rec))
}

// DeleteRecord removes a curated record.
func (b *Batch) DeleteRecord(st memory.StoreType, id memory.ID) {
	b.Delete(recordKey(st, id))
}

// GetRecord reads one curated record, or ErrNotFound.
func (db *DB) GetRecord(st memory.StoreType, id memory.ID) (*memory.MemoryRecord, error) {
	v, err := db.Get(recordKey(st, id))
	if err != nil {
		return nil, err
	}
	rec, err := DecodeRecord(v)
	if err != nil {
		return nil, fmt.Errorf("%s record %s: %w", st, id, err)
	}
	return rec, nil
}

// ScanRecords calls fn for every record of store st in id order.
func (db *DB) ScanRecords(st memory.StoreType, fn func(*memory.MemoryRecord) error) error {
	return scanRecords(db.pdb, st, fn)
}

func scanRecords(r pebble.Reader, st memory.StoreType, fn func(*memory.MemoryRecord) error) error {
	p := []byte{nsCurated, byte(st)}
	return scan(r, p, PrefixEnd(p), false, func(k, v []byte) (bool, error) {
		rec, err := DecodeRecord(v)
		if err != nil {
			return false, fmt.Errorf("%s record %x: %w", st, k[2:], err)
		}
		return true, fn(rec)
	})
}

// Raw journal.

// PutRaw writes a raw journal entry and its index entries. When the entry
// replaces an earlier version, pass that version as old so stale index
// entries are removed; otherwise pass nil.
func (b *Batch) PutRaw(rec, old *memory.RawJournalRecord) {
	if old != nil {
		b.Delete(sessionKey(old))
		b.Delete(rawTimeKey(old))
	}
	flags := []byte{byte(FlagsOf(rec))}
	b.Set(rawKey(rec.ID), EncodeRaw(rec))
	b.Set(sessionKey(rec), flags)
	b.Set(rawTimeKey(rec), flags)
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

// DeleteRaw removes a raw journal entry and its index entries.
func (b *Batch) DeleteRaw(rec *memory.RawJournalRecord) {
	b.Delete(rawKey(rec.ID))
	b.Delete(sessionKey(rec))
	b.Delete(rawTimeKey(rec))
}

// GetRaw reads one raw journal entry, or ErrNotFound.
func (db *DB) GetRaw(id memory.ID) (*memory.RawJournalRecord, error) {
	v, err := db.Get(rawKey(id))
	if err != nil {
		return nil, err
	}
	rec, err := DecodeRaw(v)
	if err != nil {
		return nil, fmt.Errorf("raw record %s: %w", id, err)
	}
	return rec, nil
}

// HasRaw reports whether a raw journal entry with this id exists.
func (db *DB) HasRaw(id memory.ID) (bool, error) {
	_, closer, err := db.pdb.Get(rawKey(id))
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, closer.Close()
}

// ScanRaw calls fn for every raw journal entry in id order.
func (db *DB) ScanRaw(fn func(*memory.RawJournalRecord) error) error {
	return scanRaw(db.pdb, fn)
}

func scanRaw(r pebble.Reader, fn func(*memory.RawJournalRecord) error) error {
	p := []byte{nsRaw}
	return scan(r, p, PrefixEnd(p), false, func(k, v []byte) (bool, error) {
		rec, err := DecodeRaw(v)
		if err != nil {
			return false, fmt.Errorf("raw record %x: %w", k[1:], err)
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

// ScanRawNewest calls fn with the ids and flags of raw entries in rng,
// newest first, until fn returns false. Only index entries are read; fetch
// the entries with GetRaw.
func (db *DB) ScanRawNewest(rng RawRange, fn func(id memory.ID, flags RawFlags) (bool, error)) error {
	var prefix []byte
	if rng.Session != nil {
		prefix = sessionPrefix(*rng.Session)
	} else {
		prefix = []byte{nsRawTime}
	}
	lower, upper := prefix, PrefixEnd(prefix)
	if !rng.Start.IsZero() {
		lower = appendTime(bytes.Clone(prefix), rng.Start)
	}
	if !rng.End.IsZero() {
		// Inclusive end: everything up to the end time's last id.
		upper = PrefixEnd(appendTime(bytes.Clone(prefix), rng.End))
	}
	return db.Scan(lower, upper, true, func(k, v []byte) (bool, error) {
		if len(k) < len(prefix)+12+16 || len(v) != 1 {
			return false, fmt.Errorf("%w: bad raw index entry", ErrCorrupt)
		}
		var id memory.ID
		copy(id[:], k[len(k)-16:])
		return fn(id, RawFlags(v[0]))
	})
}

// Snapshot is a consistent, read-only view of the database at one moment;
// writes after it was taken are invisible to it.
type Snapshot struct{ s *pebble.Snapshot }

// NewSnapshot takes a snapshot. Close it when done.
func (db *DB) NewSnapshot() *Snapshot { return &Snapshot{s: db.pdb.NewSnapshot()} }

// ScanRecords is DB.ScanRecords over the snapshot.
func (s *Snapshot) ScanRecords(st memory.StoreType, fn func(*memory.MemoryRecord) error) error {
	return scanRecords(s.s, st, fn)
}

// ScanRaw is DB.ScanRaw over the snapshot.
func (s *Snapshot) ScanRaw(fn func(*memory.RawJournalRecord) error) error { return scanRaw(s.s, fn) }

// Close releases the snapshot.
func (s *Snapshot) Close() error { return s.s.Close() }

// Settings.

// GetMeta reads an engine setting, or ErrNotFound.
func (db *DB) GetMeta(name string) ([]byte, error) { return db.Get(MetaKey(name)) }

// PutMeta writes an engine setting.
func (b *Batch) PutMeta(name string, value []byte) { b.Set(MetaKey(name), value) }

var _ io.Closer = (*DB)(nil)
