package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

// filesWith lists the files under dir whose bytes contain word. The
// database may be open, so files can vanish under it.
func filesWith(t *testing.T, dir, word string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // deleted by pebble while we looked
		}
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(word)) {
			out = append(out, filepath.Base(p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func counts(total, migrated, already uint64) MigrationCounts {
	return MigrationCounts{Total: total, Migrated: migrated, AlreadyEncrypted: already}
}

func TestMigrateEncryptionReport(t *testing.T) {
	dir := t.TempDir()
	withVector := func(n int, st memory.StoreType) *memory.MemoryRecord {
		r := realisticRecord(n, recID(n))
		r.Store = st
		return r
	}
	without := func(n int, st memory.StoreType, emb []float32) *memory.MemoryRecord {
		r := minimalRecord()
		r.ID, r.Store = recID(n), st
		r.Content.Blocks[0].Embedding = emb
		return r
	}
	plain := sample{
		recs: []*memory.MemoryRecord{
			withVector(1, memory.StoreEpisodic), withVector(2, memory.StoreEpisodic),
			without(3, memory.StoreEpisodic, []float32{}), // an empty vector is no vector
			withVector(4, memory.StoreSemantic), withVector(5, memory.StoreSemantic),
			without(6, memory.StoreProcedural, nil),
		},
	}
	for i := range 5 {
		plain.raws = append(plain.raws, realisticRaw(i, recID(100+i)))
	}
	enc := sample{
		recs: []*memory.MemoryRecord{withVector(7, memory.StoreEmotional), without(8, memory.StoreEpisodic, nil)},
		raws: []*memory.RawJournalRecord{realisticRaw(5, recID(105)), realisticRaw(6, recID(106))},
	}

	db := openPlain(t, dir)
	commit(t, db, plain.put)
	commit(t, db, func(b *Batch) { b.Set([]byte{KindDerived, 'c', 'w'}, []byte("term")) })
	closeDB(t, db)
	db = openEnc(t, dir, "pw")
	commit(t, db, enc.put)

	want := MigrationReport{
		RawJournal:  counts(7, 5, 2),
		Episodic:    counts(4, 3, 1),
		Semantic:    counts(2, 2, 0),
		Procedural:  counts(1, 1, 0),
		Emotional:   counts(1, 0, 1),
		VectorIndex: counts(5, 4, 1),
	}
	rep, err := db.MigrateEncryption(t.Context())
	if err != nil {
		t.Fatalf("MigrateEncryption: %v", err)
	}
	if rep != want {
		t.Errorf("report\n got %+v\nwant %+v", rep, want)
	}
	// The second run finds everything encrypted.
	again, err := db.MigrateEncryption(t.Context())
	if err != nil {
		t.Fatalf("second MigrateEncryption: %v", err)
	}
	for _, l := range again.Lines() {
		if l.Migrated != 0 || l.AlreadyEncrypted != l.Total {
			t.Errorf("second run %s: %+v", l.Name, l.MigrationCounts)
		}
	}
	if again.RawJournal.Total != 7 || again.VectorIndex.Total != 5 {
		t.Errorf("second run totals: %+v", again)
	}

	all := sample{append(plain.recs, enc.recs...), append(plain.raws, enc.raws...)}
	all.check(t, db)
	if sealed, plaintext := sealedValues(t, db); plaintext != 0 || sealed != len(all.recs)+len(all.raws) {
		t.Errorf("after migration: %d sealed, %d plaintext values", sealed, plaintext)
	}
	for _, ns := range []byte{kindSession, KindDerived} {
		if n := countPrefix(t, db, []byte{ns}); n != 0 {
			t.Errorf("%d keys left under %q", n, ns)
		}
	}
	closeDB(t, db)
	all.check(t, openEnc(t, dir, "pw"))
}

func TestMigrationReportLines(t *testing.T) {
	rep := MigrationReport{RawJournal: counts(1, 1, 0), Episodic: counts(2, 0, 2), Semantic: counts(3, 3, 0),
		Procedural: counts(4, 0, 4), Emotional: counts(5, 5, 0), VectorIndex: counts(6, 0, 6)}
	var names []string
	for i, l := range rep.Lines() {
		names = append(names, l.Name)
		if l.Total != uint64(i+1) {
			t.Errorf("line %s has total %d, want %d", l.Name, l.Total, i+1)
		}
	}
	want := []string{"raw_journal", "episodic", "semantic", "procedural", "emotional", "vector_index"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("lines %v, want %v", names, want)
	}
}

func TestMigrateWithoutPassphrase(t *testing.T) {
	for _, mode := range []string{"plaintext directory", "encrypted directory"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			db := openPlain(t, dir)
			commit(t, db, newSample().put)
			if mode == "encrypted directory" {
				closeDB(t, db)
				closeDB(t, openEnc(t, dir, "pw"))
				db = openPlain(t, dir)
			}
			_, err := db.MigrateEncryption(t.Context())
			if !errors.Is(err, ErrNoPassphrase) || !strings.Contains(err.Error(), "security.store_encryption_passphrase") {
				t.Fatalf("MigrateEncryption without passphrase: %v", err)
			}
			if sealed, _ := sealedValues(t, db); sealed != 0 {
				t.Errorf("%d values sealed without a passphrase", sealed)
			}
		})
	}
}

// countdownCtx reports cancellation from its n+1-th Err call on, so a
// migration stops between two given batches.
type countdownCtx struct {
	context.Context
	left atomic.Int64
}

func (c *countdownCtx) Err() error {
	if c.left.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

func TestMigrateInterruptedAndResumed(t *testing.T) {
	// newSample has 8 raw entries and 2 episodic, 2 semantic, 3 procedural
	// and 1 emotional records. In batches of 2 that is 4 + 1 + 1 + 2 + 1
	// batches; the cuts fall inside the raw journal, at its end, and inside
	// the curated stores.
	tests := []struct {
		batches  int64
		migrated uint64
	}{{0, 0}, {1, 2}, {3, 6}, {4, 8}, {5, 10}, {7, 14}, {8, 15}}
	for _, tc := range tests {
		batches := tc.batches
		t.Run(fmt.Sprintf("after %d batches", batches), func(t *testing.T) {
			dir := t.TempDir()
			s := newSample()
			db := openPlain(t, dir)
			commit(t, db, s.put)
			commit(t, db, func(b *Batch) { b.Set([]byte{KindDerived, 'k'}, []byte("v")) })
			closeDB(t, db)

			db = openEnc(t, dir, "pw")
			db.migrateChunk = 2
			ctx := &countdownCtx{Context: t.Context()}
			ctx.left.Store(batches)
			first, err := db.MigrateEncryption(ctx)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted migration: %v", err)
			}
			var migrated uint64
			for _, l := range first.Lines()[:5] {
				migrated += l.Migrated
			}
			if migrated != tc.migrated {
				t.Errorf("interrupted run migrated %d values, want %d", migrated, tc.migrated)
			}
			// Consistent in between: everything reads, each entry is listed
			// once by session scans that see both index forms.
			s.check(t, db)
			closeDB(t, db)
			db = openEnc(t, dir, "pw")
			s.check(t, db)

			second, err := db.MigrateEncryption(t.Context())
			if err != nil {
				t.Fatalf("resumed migration: %v", err)
			}
			for i, l := range second.Lines() {
				f := first.Lines()[i]
				if l.Total != l.Migrated+l.AlreadyEncrypted || l.AlreadyEncrypted != f.Migrated {
					t.Errorf("%s: first run %+v, second run %+v", l.Name, f.MigrationCounts, l.MigrationCounts)
				}
			}
			if second.RawJournal.Total != uint64(len(s.raws)) {
				t.Errorf("raw journal total %d, want %d", second.RawJournal.Total, len(s.raws))
			}
			if sealed, plain := sealedValues(t, db); plain != 0 || sealed != len(s.recs)+len(s.raws) {
				t.Errorf("after resuming: %d sealed, %d plaintext", sealed, plain)
			}
			if n := countPrefix(t, db, []byte{kindSession}); n != 0 {
				t.Errorf("%d plaintext session keys after resuming", n)
			}
			s.check(t, db)
		})
	}
}

func TestMigrateRefusesForeignCiphertext(t *testing.T) {
	_, foreign, err := newHeader([]byte("another directory"), fastKDF())
	if err != nil {
		t.Fatal(err)
	}
	rec := realisticRecord(1, idB)
	rec.Store = memory.StoreSemantic
	raw := realisticRaw(1, idB)
	tests := []struct {
		name string
		key  []byte
		enc  []byte
	}{
		{"curated record", recordKey(DefaultNS, rec.Store, rec.ID), EncodeRecord(rec)},
		{"raw entry", rawKey(DefaultNS, raw.ID), EncodeRaw(raw)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			db := openPlain(t, dir)
			// A plaintext neighbour in the same batch (idA sorts first).
			neighbour := realisticRecord(2, idA)
			neighbour.Store = rec.Store
			commit(t, db, func(b *Batch) { b.PutRecord(DefaultNS, neighbour); b.PutRaw(DefaultNS, realisticRaw(2, idA), nil) })
			closeDB(t, db)
			db = openEnc(t, dir, "pw")
			sealed := foreign.seal(tc.key, tc.enc)
			commit(t, db, func(b *Batch) { b.Set(tc.key, sealed) })

			_, err := db.MigrateEncryption(t.Context())
			if !errors.Is(err, ErrWrongPassphrase) || !errors.Is(err, ErrDecrypt) {
				t.Fatalf("migration over a foreign ciphertext: %v", err)
			}
			if !strings.Contains(err.Error(), "nothing was overwritten") {
				t.Errorf("error %q does not say nothing was overwritten", err)
			}
			if v, _ := db.Get(tc.key); !bytes.Equal(v, sealed) {
				t.Error("foreign ciphertext was overwritten")
			}
			// The failing batch was not committed.
			var neighbourKey []byte
			if tc.key[0] == kindRaw {
				neighbourKey = rawKey(DefaultNS, idA)
			} else {
				neighbourKey = recordKey(DefaultNS, neighbour.Store, neighbour.ID)
			}
			if v, _ := db.Get(neighbourKey); isSealed(v) {
				t.Error("the batch with the foreign ciphertext was committed")
			}
		})
	}
}

func TestMigrateRefusesCorruptPlaintext(t *testing.T) {
	db := openEnc(t, t.TempDir(), "pw")
	bad := []byte{formatRecordV1, 1, 2, 3}
	commit(t, db, func(b *Batch) { b.Set(recordKey(DefaultNS, memory.StoreEpisodic, idA), bad) })
	_, err := db.MigrateEncryption(t.Context())
	if !errors.Is(err, ErrCorrupt) || errors.Is(err, ErrWrongPassphrase) {
		t.Fatalf("migration over a corrupt value: %v", err)
	}
	if v, _ := db.Get(recordKey(DefaultNS, memory.StoreEpisodic, idA)); !bytes.Equal(v, bad) {
		t.Error("corrupt value was rewritten")
	}
}

func TestMigrationLeavesNoPlaintext(t *testing.T) {
	const word = "Quokkaplasm"
	tests := []struct {
		name string
		// plain writes before encryption is turned on, enc after (in the
		// process that migrates).
		plain, enc func(t *testing.T, db *DB)
		// check runs after migration and reopening.
		check func(t *testing.T, db *DB)
	}{
		{
			name: "records, raw entries and session ids",
			plain: func(t *testing.T, db *DB) {
				commit(t, db, func(b *Batch) {
					for i := range 20 {
						r := realisticRecord(i, recID(i))
						r.Content.Blocks[0].Data = memory.Bytes("the " + word + " record")
						r.Content.Summary = ptr("a " + word)
						r.Metadata = memory.JSON(`{"topic":"` + word + `"}`)
						b.PutRecord(DefaultNS, r)
						raw := realisticRaw(i, recID(i))
						raw.SessionID = "session-" + word
						raw.Content = memory.TextContent("said " + word)
						b.PutRaw(DefaultNS, raw, nil)
					}
				})
				// Into an sstable, where only compaction drops old versions.
				if err := db.pdb.Flush(); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, db *DB) {
				r, err := db.GetRecord(DefaultNS, memory.PersistentStores()[3], recID(3))
				if err != nil || !strings.Contains(string(r.Content.Blocks[0].Data), word) {
					t.Errorf("record after migration: %v, %v", r, err)
				}
				if got := newest(t, db, RawRange{Session: ptr("session-" + word)}); len(got) != 20 {
					t.Errorf("session scan after migration: %d entries", len(got))
				}
			},
		},
		{
			name: "derived namespace only",
			plain: func(t *testing.T, db *DB) {
				commit(t, db, func(b *Batch) { b.Set([]byte("xc"+word), []byte(word)) })
			},
		},
		{
			// Written in the migrating process: enough to fill a memtable, so
			// the write-ahead log has been switched and would be recycled.
			name: "derived namespace written with a passphrase",
			enc: func(t *testing.T, db *DB) {
				value := bytes.Repeat([]byte(word+" "), 800)
				for i := range 600 {
					b := db.NewBatch()
					b.Set(fmt.Appendf(nil, "xr%05d%s", i, word), value)
					if err := b.CommitNoSync(); err != nil {
						t.Fatal(err)
					}
					b.Close()
				}
				if got := filesWith(t, db.Dir(), word); len(got) == 0 {
					t.Fatal("the derived text is on disk nowhere before migration; the test proves nothing")
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.plain != nil {
				db := openPlain(t, dir)
				tc.plain(t, db)
				closeDB(t, db)
				if got := filesWith(t, dir, word); len(got) == 0 {
					t.Fatalf("%q is in no file before migration; the test proves nothing", word)
				}
			}
			db := openEnc(t, dir, "pw")
			if tc.enc != nil {
				tc.enc(t, db)
			}
			if _, err := db.MigrateEncryption(t.Context()); err != nil {
				t.Fatalf("MigrateEncryption: %v", err)
			}
			closeDB(t, db)
			if got := filesWith(t, dir, word); len(got) != 0 {
				t.Errorf("%q still on disk after migration in %v", word, got)
			}
			if tc.check != nil {
				tc.check(t, openEnc(t, dir, "pw"))
			}
		})
	}
}

// TestMigrateWithConcurrentWriters checks that a migration batch never
// overwrites a newer version written while it runs.
func TestMigrateWithConcurrentWriters(t *testing.T) {
	const records, rounds = 24, 6
	dir := t.TempDir()
	db := openPlain(t, dir)
	recs := make([]*memory.MemoryRecord, records)
	commit(t, db, func(b *Batch) {
		for i := range recs {
			recs[i] = realisticRecord(i, recID(i))
			b.PutRecord(DefaultNS, recs[i])
		}
	})
	closeDB(t, db)
	db = openEnc(t, dir, "pw")
	db.migrateChunk = 3

	// Every batch reads and rewrites with commits held off.
	db.migrateHook = func() {
		if db.commitMu.TryRLock() {
			db.commitMu.RUnlock()
			t.Error("a commit could run between a migration batch's read and its write")
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	wg.Go(func() {
		for round := 1; round <= rounds; round++ {
			for _, r := range recs {
				c := *r
				c.Version = uint32(round)
				b := db.NewBatch()
				b.PutRecord(DefaultNS, &c)
				err := b.Commit()
				b.Close()
				if err != nil {
					errs <- err
					return
				}
			}
		}
	})
	_, err := db.MigrateEncryption(t.Context())
	wg.Wait()
	close(errs)
	if err != nil {
		t.Fatalf("MigrateEncryption: %v", err)
	}
	if err := <-errs; err != nil {
		t.Fatalf("writer: %v", err)
	}
	for _, r := range recs {
		got, err := db.GetRecord(DefaultNS, r.Store, r.ID)
		if err != nil || got.Version != rounds {
			t.Errorf("record %s after migration: version %v, %v; want %d", r.ID, got.Version, err, rounds)
		}
	}
	if _, plain := sealedValues(t, db); plain != 0 {
		t.Errorf("%d plaintext values left", plain)
	}
}

// TestMigrationCountsEveryChunkOnce: with MigrateOptions.Committed every
// chunk that rewrote values is reported once, with its counts persisted in
// the same batch; a run stopped between a chunk's commit and its
// acknowledgement leaves those counts for the next run, and over both runs
// the acknowledged counts add up to exactly what was migrated.
func TestMigrationCountsEveryChunkOnce(t *testing.T) {
	dir := t.TempDir()
	s := newSample()
	db := openPlain(t, dir)
	commit(t, db, s.put)
	closeDB(t, db)

	db = openEnc(t, dir, "pw")
	db.migrateChunk = 2
	var acked, firstReport MigrationReport
	calls := 0
	errKilled := errors.New("killed before acknowledging")
	ack := func(stopAt int) func(MigrationReport) error {
		return func(r MigrationReport) error {
			calls++
			if calls == 1 {
				firstReport = r
			}
			// Persisted with the chunk, before the caller heard of it.
			stored, ok, err := db.UnauditedMigration()
			if err != nil || !ok || stored != r {
				t.Fatalf("chunk %d: stored counts %+v %v %v, reported %+v", calls, stored, ok, err, r)
			}
			if calls == stopAt {
				return errKilled
			}
			b := db.NewBatch()
			defer b.Close()
			b.ClearUnauditedMigration()
			if err := b.Commit(); err != nil {
				t.Fatal(err)
			}
			acked.Add(r)
			return nil
		}
	}
	first, err := db.MigrateEncryptionWith(t.Context(), MigrateOptions{Committed: ack(3)})
	if !errors.Is(err, errKilled) || calls != 3 {
		t.Fatalf("stopped run: %v after %d chunks", err, calls)
	}
	left, ok, err := db.UnauditedMigration()
	if err != nil || !ok || left.RawJournal.Migrated != 2 {
		t.Fatalf("counts left by the stopped run: %+v %v %v", left, ok, err)
	}
	closeDB(t, db)

	db = openEnc(t, dir, "pw")
	db.migrateChunk = 2
	calls = 0
	second, err := db.MigrateEncryptionWith(t.Context(), MigrateOptions{Committed: ack(-1)})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := db.UnauditedMigration(); ok {
		t.Fatal("unacknowledged counts left after a complete run")
	}
	// The second run's first chunk (the raw journal's last two entries)
	// was reported together with the stopped run's third.
	if firstReport.RawJournal.Migrated != 4 {
		t.Errorf("first report of the second run: %+v, want the 2 left over and its own 2", firstReport)
	}
	var migrated MigrationReport
	migrated.Add(first)
	migrated.Add(second)
	for i, l := range acked.Lines() {
		if want := migrated.Lines()[i].Migrated; l.Migrated != want {
			t.Errorf("%s: acknowledged %d migrated values, the runs migrated %d", l.Name, l.Migrated, want)
		}
	}
	if acked.RawJournal.Migrated+acked.Episodic.Migrated+acked.Semantic.Migrated+acked.Procedural.Migrated+acked.Emotional.Migrated != uint64(len(s.recs)+len(s.raws)) {
		t.Errorf("acknowledged %+v, want every one of %d values once", acked, len(s.recs)+len(s.raws))
	}
}
