package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"memsvc.dev/memsvc/pkg/memory"
)

// MigrationCounts are the numbers of one line of a MigrationReport.
type MigrationCounts struct {
	// Total is the number of values looked at.
	Total uint64 `json:"total"`
	// Migrated is how many were plaintext and are now encrypted.
	Migrated uint64 `json:"migrated"`
	// AlreadyEncrypted is how many were encrypted (and opened with the
	// configured key) before the run.
	AlreadyEncrypted uint64 `json:"already_encrypted"`
}

func (c *MigrationCounts) add(o MigrationCounts) {
	c.Total += o.Total
	c.Migrated += o.Migrated
	c.AlreadyEncrypted += o.AlreadyEncrypted
}

func (c *MigrationCounts) count(wasSealed bool) {
	c.Total++
	if wasSealed {
		c.AlreadyEncrypted++
	} else {
		c.Migrated++
	}
}

// MigrationReport is what MigrateEncryption did, per store.
//
// memsvc keeps embeddings inside the curated records rather than in a
// separate vector table, so VectorIndex counts the curated records that
// carry an embedding (a content block with a non-empty vector). Those
// records are also counted in their own store's line.
type MigrationReport struct {
	RawJournal  MigrationCounts `json:"raw_journal"`
	Episodic    MigrationCounts `json:"episodic"`
	Semantic    MigrationCounts `json:"semantic"`
	Procedural  MigrationCounts `json:"procedural"`
	Emotional   MigrationCounts `json:"emotional"`
	VectorIndex MigrationCounts `json:"vector_index"`
}

// MigrationLine is one named line of a report.
type MigrationLine struct {
	Name string // raw_journal, episodic, semantic, procedural, emotional, vector_index
	MigrationCounts
}

// Lines returns the report's lines in the order the CLI prints them.
func (r *MigrationReport) Lines() []MigrationLine {
	return []MigrationLine{
		{"raw_journal", r.RawJournal},
		{"episodic", r.Episodic},
		{"semantic", r.Semantic},
		{"procedural", r.Procedural},
		{"emotional", r.Emotional},
		{"vector_index", r.VectorIndex},
	}
}

// store returns the line of a persistent curated store.
func (r *MigrationReport) store(st memory.StoreType) *MigrationCounts {
	switch st {
	case memory.StoreEpisodic:
		return &r.Episodic
	case memory.StoreSemantic:
		return &r.Semantic
	case memory.StoreProcedural:
		return &r.Procedural
	case memory.StoreEmotional:
		return &r.Emotional
	}
	panic(fmt.Sprintf("store: no migration line for store %d", st))
}

// defaultMigrateChunk is how many values one migration batch rewrites.
const defaultMigrateChunk = 256

// MigrateEncryption encrypts every plaintext record value with the
// database's passphrase and removes plaintext left behind on disk:
//
//  1. Namespace by namespace, raw journal entries, then the curated
//     records of each persistent store, are rewritten encrypted in synced
//     batches of a bounded size.
//     Already encrypted values are opened to prove they use this
//     directory's key; one that does not stops the run with an error that
//     matches ErrWrongPassphrase, and nothing is overwritten. A plaintext
//     value that does not decode stops the run with ErrCorrupt.
//  2. Raw entries are re-indexed under the protected session index and the
//     plaintext session index is deleted.
//  3. The derived indexes (KindDerived) of every namespace are deleted.
//     An engine that keeps its indexes there must rebuild them (it does
//     when it next opens the directory); one that keeps them in memory is
//     not affected.
//  4. The memtable is flushed, the whole key space compacted, and pebble
//     made to start two fresh MANIFESTs, so that no sstable, write-ahead
//     log or manifest still holds an old plaintext key or value once the
//     obsolete files are deleted (pebble does that in the background;
//     Close waits for it).
//
// Run it with no snapshot open (a snapshot keeps old versions alive) and
// preferably with the engine stopped. Writes by other goroutines are safe:
// each batch reads and rewrites its values with commits held off. A
// cancelled or failed run leaves a consistent directory, with the batches
// it committed encrypted; running again finishes the job. The report
// counts what the committed batches saw; a second run reports
// migrated = 0 and already_encrypted = total.
func (db *DB) MigrateEncryption(ctx context.Context) (MigrationReport, error) {
	return db.MigrateEncryptionWith(ctx, MigrateOptions{})
}

// MigrateOptions configure MigrateEncryptionWith.
type MigrateOptions struct {
	// Committed, when set, is called after every chunk that rewrote
	// values, with the counts committed so far and not yet acknowledged:
	// the chunk's own, plus those of chunks an earlier run committed
	// before it was stopped. Every chunk adds its counts to a record kept
	// under the meta key UnauditedMigrationKey in the same batch as its
	// values, so the counts survive a kill; Committed acknowledges them
	// by deleting that record (Batch.ClearUnauditedMigration) in the
	// batch that records them elsewhere, such as an audit entry. An error
	// stops the migration.
	Committed func(unaudited MigrationReport) error
	// Progress, when set, is called after every chunk with the counts of
	// the run so far (Total: the values looked at), for a progress line.
	Progress func(sofar MigrationReport)
}

// UnauditedMigrationKey is the meta key under which a migration with
// MigrateOptions.Committed keeps the counts it has committed and the
// caller has not yet acknowledged.
const UnauditedMigrationKey = "migrate_encryption_unaudited"

// UnauditedMigration returns the counts an earlier migration committed and
// left unacknowledged (it was stopped between a chunk and Committed), and
// whether there are any.
func (db *DB) UnauditedMigration() (MigrationReport, bool, error) {
	var rep MigrationReport
	v, err := db.GetMeta(UnauditedMigrationKey)
	switch {
	case errors.Is(err, ErrNotFound):
		return rep, false, nil
	case err != nil:
		return rep, false, err
	}
	if err := json.Unmarshal(v, &rep); err != nil {
		return rep, false, fmt.Errorf("%w: unaudited migration counts: %w", ErrCorrupt, err)
	}
	return rep, true, nil
}

// ClearUnauditedMigration acknowledges the counts UnauditedMigration
// returns.
func (b *Batch) ClearUnauditedMigration() { b.Delete(MetaKey(UnauditedMigrationKey)) }

// Add adds the counts of o to every line of r.
func (r *MigrationReport) Add(o MigrationReport) {
	r.RawJournal.add(o.RawJournal)
	r.Episodic.add(o.Episodic)
	r.Semantic.add(o.Semantic)
	r.Procedural.add(o.Procedural)
	r.Emotional.add(o.Emotional)
	r.VectorIndex.add(o.VectorIndex)
}

// MigrateEncryptionWith is MigrateEncryption with options.
func (db *DB) MigrateEncryptionWith(ctx context.Context, opts MigrateOptions) (MigrationReport, error) {
	var rep MigrationReport
	if db.keys == nil {
		return rep, fmt.Errorf("migrate store encryption: %w", ErrNoPassphrase)
	}
	m := &migration{db: db, opts: opts, rep: &rep}
	for _, ns := range db.spaces() {
		if err := m.space(ctx, ns); err != nil {
			return rep, err
		}
	}
	if err := db.purgePlaintext(ctx); err != nil {
		return rep, err
	}
	return rep, nil
}

// space migrates the raw journal, then the curated records, of namespace
// ns.
func (m *migration) space(ctx context.Context, ns NS) error {
	db := m.db
	err := m.namespace(ctx, ns.key(kindRaw, 0), func(b *pebble.Batch, k, v []byte, c *chunkCounts) error {
		return db.migrateRaw(b, ns, k, v, c)
	}, func(r *MigrationReport, c *chunkCounts) { r.RawJournal.add(c.store) })
	if err != nil {
		return fmt.Errorf("migrate raw journal: %w", err)
	}
	for _, st := range memory.PersistentStores() {
		err := m.namespace(ctx, append(ns.key(kindCurated, 1), byte(st)), func(b *pebble.Batch, k, v []byte, c *chunkCounts) error {
			return db.migrateRecord(b, ns, st, k, v, c)
		}, func(r *MigrationReport, c *chunkCounts) {
			r.store(st).add(c.store)
			r.VectorIndex.add(c.vectors)
		})
		if err != nil {
			return fmt.Errorf("migrate %s records: %w", st, err)
		}
	}
	return nil
}

// chunkCounts collects the counts of one batch; they join the report once
// the batch is committed.
type chunkCounts struct{ store, vectors MigrationCounts }

// migration is one run of MigrateEncryptionWith.
type migration struct {
	db   *DB
	opts MigrateOptions
	rep  *MigrationReport
}

// namespace walks every value under prefix in chunks. Each chunk is read,
// rewritten and committed while other commits wait, so no concurrent write
// can be overwritten by a stale re-encryption. line adds a chunk's counts
// to a report.
func (m *migration) namespace(ctx context.Context, prefix []byte,
	each func(b *pebble.Batch, k, v []byte, c *chunkCounts) error, line func(*MigrationReport, *chunkCounts)) error {
	chunk := m.db.migrateChunk
	if chunk <= 0 {
		chunk = defaultMigrateChunk
	}
	next, upper := prefix, PrefixEnd(prefix)
	for next != nil {
		if err := ctx.Err(); err != nil {
			return err
		}
		var c chunkCounts
		resume, unaudited, err := m.chunkAt(next, upper, chunk, each, line, &c)
		if err != nil {
			return err
		}
		line(m.rep, &c)
		if m.opts.Progress != nil {
			m.opts.Progress(*m.rep)
		}
		if unaudited != nil {
			if err := m.opts.Committed(*unaudited); err != nil {
				return err
			}
		}
		next = resume
	}
	return nil
}

// chunkAt rewrites up to n values from lower on and returns the key to
// resume at (nil at the end of the range) and, when the chunk committed
// something and the caller tracks it, the unacknowledged counts.
func (m *migration) chunkAt(lower, upper []byte, n int,
	each func(b *pebble.Batch, k, v []byte, c *chunkCounts) error, line func(*MigrationReport, *chunkCounts),
	c *chunkCounts) (resume []byte, unaudited *MigrationReport, err error) {
	db := m.db
	db.commitMu.Lock()
	defer db.commitMu.Unlock()
	b := db.pdb.NewBatch()
	defer b.Close()
	seen := 0
	err = scan(db.pdb, lower, upper, false, func(k, v []byte) (bool, error) {
		if seen == n {
			resume = bytes.Clone(k)
			return false, nil
		}
		seen++
		return true, each(b, k, v, c)
	})
	if err != nil {
		return nil, nil, err
	}
	if db.migrateHook != nil {
		db.migrateHook()
	}
	if b.Empty() {
		return resume, nil, nil
	}
	if m.opts.Committed != nil {
		pending, _, err := db.UnauditedMigration()
		if err != nil {
			return nil, nil, err
		}
		line(&pending, c)
		v, err := json.Marshal(pending)
		if err != nil {
			return nil, nil, err
		}
		if err := b.Set(MetaKey(UnauditedMigrationKey), v, nil); err != nil {
			return nil, nil, err
		}
		unaudited = &pending
	}
	if err := db.space.check(b.Len()); err != nil {
		return nil, nil, err
	}
	// Rewritten values decode as before; keeping the record cache out
	// of the way keeps that from mattering.
	release := db.recs.hold(nil, true)
	err = b.Commit(pebble.Sync)
	release()
	if err != nil {
		return nil, nil, err
	}
	return resume, unaudited, nil
}

// openSealed opens an existing envelope during migration; failure means
// another key (or damage), which must stop the migration.
func (db *DB) openSealed(what string, id, k, v []byte) ([]byte, error) {
	plain, err := db.keys.open(k, v)
	if err != nil {
		return nil, fmt.Errorf("%s %x does not decrypt with the configured passphrase; nothing was overwritten: %w (%w)",
			what, id, ErrWrongPassphrase, err)
	}
	return plain, nil
}

func (db *DB) migrateRecord(b *pebble.Batch, ns NS, st memory.StoreType, k, v []byte, c *chunkCounts) error {
	sealed := isSealed(v)
	plain := v
	id := k[ns.prefixLen()+2:]
	if sealed {
		var err error
		if plain, err = db.openSealed(st.String()+" record", id, k, v); err != nil {
			return err
		}
		defer clear(plain)
	}
	rec, err := DecodeRecord(plain)
	if err != nil {
		return fmt.Errorf("%s record %x: %w", st, id, err)
	}
	if !sealed {
		if err := b.Set(k, db.keys.sealKept(k, v), nil); err != nil {
			return err
		}
	}
	c.store.count(sealed)
	if rec.Content.Embedding() != nil {
		c.vectors.count(sealed)
	}
	return nil
}

func (db *DB) migrateRaw(b *pebble.Batch, ns NS, k, v []byte, c *chunkCounts) error {
	id := k[ns.prefixLen()+1:]
	if isSealed(v) {
		plain, err := db.openSealed("raw record", id, k, v)
		if err != nil {
			return err
		}
		defer clear(plain)
		if _, err := DecodeRaw(plain); err != nil {
			return fmt.Errorf("raw record %x: %w", id, err)
		}
		c.store.count(true)
		return nil
	}
	rec, err := DecodeRaw(v)
	if err != nil {
		return fmt.Errorf("raw record %x: %w", id, err)
	}
	if err := b.Set(k, db.keys.sealKept(k, v), nil); err != nil {
		return err
	}
	// The plaintext "s" entry goes with the whole namespace at the end;
	// until then session scans merge the two forms.
	if err := b.Set(db.keys.sealedSessionKey(ns, rec), []byte{byte(FlagsOf(rec))}, nil); err != nil {
		return err
	}
	c.store.count(false)
	return nil
}

// purgePlaintext deletes the plaintext session index and the derived
// indexes of every namespace, then flushes and compacts everything so that
// old versions are dropped from the sstables and the write-ahead log.
func (db *DB) purgePlaintext(ctx context.Context) error {
	b := db.NewBatch()
	defer b.Close()
	for _, ns := range db.spaces() {
		for _, p := range [][]byte{ns.key(kindSession, 0), DerivedPrefix(ns)} {
			b.DeleteRange(p, PrefixEnd(p))
		}
	}
	if err := b.Commit(); err != nil {
		return fmt.Errorf("delete plaintext indexes: %w", err)
	}
	if err := db.tidyDerived(); err != nil {
		return err
	}
	db.plainSessions.Store(false)
	if err := db.pdb.Flush(); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	// A full compaction rewrites every table before the old ones go.
	if err := db.space.check(int(min(db.pdb.Metrics().DiskSpaceUsage(), 1<<40))); err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	// Every key starts with an ASCII namespace byte, so [0x00, 0xff)
	// covers the whole database.
	if err := db.pdb.Compact(ctx, []byte{0x00}, []byte{0xff}, true); err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	return db.rotateManifests()
}

// maxRotationFlushes bounds the flushes rotateManifests may need; pebble
// rotates once the tables changed since the last snapshot outnumber the
// live ones, which after a full compaction are few.
const maxRotationFlushes = 64

// rotateManifests makes pebble write two new manifests: the first is a
// snapshot of the compacted tables, and the second lets pebble delete every
// manifest before the first (it keeps one previous manifest). Each flush of
// a small write is a manifest edit.
func (db *DB) rotateManifests() error {
	target := db.manifests.Load() + 2
	for i := 0; db.manifests.Load() < target; i++ {
		if i == maxRotationFlushes {
			return fmt.Errorf("rotate manifest: pebble made no new manifest after %d flushes", i)
		}
		b := db.NewBatch()
		b.Set([]byte{kindFormat}, []byte{layoutVersion})
		err := b.Commit()
		b.Close()
		if err != nil {
			return fmt.Errorf("rotate manifest: %w", err)
		}
		if err := db.pdb.Flush(); err != nil {
			return fmt.Errorf("rotate manifest: flush: %w", err)
		}
	}
	return nil
}
