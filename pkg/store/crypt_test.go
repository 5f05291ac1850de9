package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// fastKDF makes key derivation cheap in tests; the parameters are stored
// in the header, so every later Open of the directory uses them too.
func fastKDF() KDFParams { return KDFParams{MemoryKiB: 64, Iterations: 1, Parallelism: 1} }

// openEnc opens dir with a passphrase; the test closes the database.
func openEnc(t *testing.T, dir, passphrase string) *DB {
	t.Helper()
	db, err := Open(dir, Options{Passphrase: []byte(passphrase), KDF: fastKDF()})
	if err != nil {
		t.Fatalf("Open with passphrase: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// openPlain opens dir without a passphrase; the test closes the database.
func openPlain(t *testing.T, dir string) *DB {
	t.Helper()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func closeDB(t *testing.T, db *DB) {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func countPrefix(t *testing.T, db *DB, p []byte) int {
	t.Helper()
	n := 0
	if err := db.ScanPrefix(p, false, func(_, _ []byte) (bool, error) { n++; return true, nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// dbMode is one way a database can hold its data: before() runs first and
// after() second, with encryption switched on in between for the modes
// that switch.
type dbMode struct {
	name  string
	setup func(t *testing.T, before, after func(*Batch)) *DB
}

// turnedOn writes before in plaintext, then reopens with a passphrase
// and writes after.
func turnedOn(t *testing.T, before, after func(*Batch)) *DB {
	dir := t.TempDir()
	db := openPlain(t, dir)
	commit(t, db, before)
	closeDB(t, db)
	db = openEnc(t, dir, "pw")
	commit(t, db, after)
	return db
}

func dbModes() []dbMode {
	return []dbMode{
		{"plaintext", func(t *testing.T, before, after func(*Batch)) *DB {
			db := openMem(t)
			commit(t, db, before)
			commit(t, db, after)
			return db
		}},
		{"encrypted", func(t *testing.T, before, after func(*Batch)) *DB {
			db := openEnc(t, t.TempDir(), "pw")
			commit(t, db, before)
			commit(t, db, after)
			return db
		}},
		{"encryption turned on", turnedOn},
		{"turned on and migrated", func(t *testing.T, before, after func(*Batch)) *DB {
			db := turnedOn(t, before, after)
			if _, err := db.MigrateEncryption(t.Context()); err != nil {
				t.Fatalf("MigrateEncryption: %v", err)
			}
			return db
		}},
	}
}

// sample is a set of records and raw entries that covers every store and
// both session index forms.
type sample struct {
	recs []*memory.MemoryRecord
	raws []*memory.RawJournalRecord
}

func newSample() sample {
	var s sample
	full := fullRecord() // procedural
	s.recs = append(s.recs, full, minimalRecord())
	for i := 1; i <= 6; i++ {
		s.recs = append(s.recs, realisticRecord(i, recID(100+i)))
	}
	s.raws = append(s.raws, fullRaw(), minimalRaw())
	for i := 1; i <= 6; i++ {
		s.raws = append(s.raws, realisticRaw(i, recID(200+i)))
	}
	return s
}

// renumber gives the sample other ids (the same sessions), so it can be
// stored next to a fresh sample.
func (s sample) renumber() {
	for _, r := range s.recs {
		r.ID[2] = 0xEE
	}
	for _, r := range s.raws {
		r.ID[2] = 0xEE
	}
}

func (s sample) put(b *Batch) { s.putIn(b, DefaultNS) }

func (s sample) putIn(b *Batch, ns NS) {
	for _, r := range s.recs {
		b.PutRecord(ns, r)
	}
	for _, r := range s.raws {
		b.PutRaw(ns, r, nil)
	}
}

// check reads everything back through every read path.
func (s sample) check(t *testing.T, db *DB) { t.Helper(); s.checkIn(t, db, DefaultNS) }

// checkIn is check in namespace ns: the sample and nothing else is there.
func (s sample) checkIn(t *testing.T, db *DB, ns NS) {
	t.Helper()
	for _, r := range s.recs {
		got, err := db.GetRecord(ns, r.Store, r.ID)
		if err != nil || !reflect.DeepEqual(got, normaliseRecord(r)) {
			t.Errorf("GetRecord(%s, %s) = %v, %v", r.Store, r.ID, got, err)
		}
	}
	for _, r := range s.raws {
		got, err := db.GetRaw(ns, r.ID)
		if err != nil || !reflect.DeepEqual(got, normaliseRaw(r)) {
			t.Errorf("GetRaw(%s) = %v, %v", r.ID, got, err)
		}
	}
	snap := db.NewSnapshot()
	defer snap.Close()
	type scanner struct {
		name string
		recs func(NS, memory.StoreType, func(*memory.MemoryRecord) error) error
		raws func(NS, func(*memory.RawJournalRecord) error) error
	}
	for _, sc := range []scanner{
		{"db", db.ScanRecords, db.ScanRaw},
		{"snapshot", snap.ScanRecords, snap.ScanRaw},
	} {
		n := 0
		for _, st := range memory.PersistentStores() {
			if err := sc.recs(ns, st, func(*memory.MemoryRecord) error { n++; return nil }); err != nil {
				t.Errorf("%s ScanRecords(%s): %v", sc.name, st, err)
			}
		}
		if n != len(s.recs) {
			t.Errorf("%s scans %d records, want %d", sc.name, n, len(s.recs))
		}
		n = 0
		if err := sc.raws(ns, func(*memory.RawJournalRecord) error { n++; return nil }); err != nil {
			t.Errorf("%s ScanRaw: %v", sc.name, err)
		}
		if n != len(s.raws) {
			t.Errorf("%s scans %d raw entries, want %d", sc.name, n, len(s.raws))
		}
	}
	bySession := map[string]int{}
	for _, r := range s.raws {
		bySession[r.SessionID]++
	}
	for session, want := range bySession {
		if got := newestIn(t, db, ns, RawRange{Session: &session}); len(got) != want {
			t.Errorf("session %q: %d entries, want %d", session, len(got), want)
		}
	}
	if got := newestIn(t, db, ns, RawRange{}); len(got) != len(s.raws) {
		t.Errorf("time index: %d entries, want %d", len(got), len(s.raws))
	}
}

// sealedValues counts sealed and plaintext record values in every
// namespace.
func sealedValues(t *testing.T, db *DB) (sealed, plain int) {
	t.Helper()
	for _, p := range db.valuePrefixes() {
		err := db.ScanPrefix(p, false, func(_, v []byte) (bool, error) {
			if isSealed(v) {
				sealed++
			} else {
				plain++
			}
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return sealed, plain
}

func TestEncryptedRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := newSample()
	db := openEnc(t, dir, "correct horse")
	if got := db.Encryption(); got != EncryptionOn {
		t.Errorf("Encryption() = %v, want on", got)
	}
	commit(t, db, s.put)
	s.check(t, db)
	if sealed, plain := sealedValues(t, db); sealed != len(s.recs)+len(s.raws) || plain != 0 {
		t.Errorf("%d sealed and %d plaintext values, want all %d sealed", sealed, plain, len(s.recs)+len(s.raws))
	}
	if n := countPrefix(t, db, []byte{kindSession}); n != 0 {
		t.Errorf("%d plaintext session index keys written with a passphrase", n)
	}
	if n := countPrefix(t, db, []byte{kindSealedSession}); n != len(s.raws) {
		t.Errorf("%d protected session index keys, want %d", n, len(s.raws))
	}
	closeDB(t, db)

	// The same passphrase with white space around it is the same key.
	db = openEnc(t, dir, "  correct horse\n")
	s.check(t, db)
}

func TestPlaintextReadableAfterEnablingEncryption(t *testing.T) {
	dir := t.TempDir()
	before, after := newSample(), newSample()
	// The second half gets other ids but the same sessions, so session
	// scans merge entries indexed before and after.
	after.renumber()
	db := openPlain(t, dir)
	if got := db.Encryption(); got != EncryptionOff {
		t.Errorf("Encryption() = %v, want off", got)
	}
	commit(t, db, before.put)
	closeDB(t, db)

	db = openEnc(t, dir, "pw")
	before.check(t, db)
	commit(t, db, after.put)
	all := sample{append(before.recs, after.recs...), append(before.raws, after.raws...)}
	all.check(t, db)
	sealed, plain := sealedValues(t, db)
	if want := len(after.recs) + len(after.raws); sealed != want || plain != want {
		t.Errorf("%d sealed and %d plaintext values, want %d of each (encryption is lazy)", sealed, plain, want)
	}
	// Rewriting a plaintext record encrypts it.
	commit(t, db, func(b *Batch) { b.PutRecord(DefaultNS, before.recs[0]) })
	if v, _ := db.Get(recordKey(DefaultNS, before.recs[0].Store, before.recs[0].ID)); !isSealed(v) {
		t.Error("rewritten record is still plaintext")
	}
}

func TestWrongPassphraseRefused(t *testing.T) {
	tests := []struct {
		name string
		fill func(*Batch)
	}{
		{"empty store", func(*Batch) {}},
		{"with records", newSample().put},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			abs, _ := filepath.Abs(dir)
			db := openEnc(t, dir, "passphrase A")
			commit(t, db, tc.fill)
			closeDB(t, db)
			for attempt := range 2 { // a refused Open releases the lock
				db2, err := Open(dir, Options{Passphrase: []byte("passphrase B")})
				if err == nil {
					db2.Close()
					t.Fatal("Open with the wrong passphrase succeeded")
				}
				var wpe *WrongPassphraseError
				if !errors.Is(err, ErrWrongPassphrase) || !errors.As(err, &wpe) || wpe.Dir != abs {
					t.Fatalf("attempt %d: error %v (%T), want a *WrongPassphraseError for %s", attempt, err, err, abs)
				}
				if errors.Is(err, ErrCorrupt) || errors.Is(err, ErrLocked) {
					t.Errorf("wrong passphrase reported as %v", err)
				}
				for _, want := range []string{abs, "does not match", "security.store_encryption_passphrase"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not mention %q", err, want)
					}
				}
			}
			db = openEnc(t, dir, "passphrase A")
			if got := db.Encryption(); got != EncryptionOn {
				t.Errorf("right passphrase after a refusal: %v", got)
			}
		})
	}
}

func TestBlankPassphraseRefused(t *testing.T) {
	for _, p := range []string{" ", "\t\n", "\u00a0 \u2003"} {
		dir := t.TempDir()
		db, err := Open(dir, Options{Passphrase: []byte(p)})
		if err == nil {
			db.Close()
			t.Fatalf("blank passphrase %q accepted", p)
		}
		if !strings.Contains(err.Error(), "blank") {
			t.Errorf("blank passphrase %q: %v", p, err)
		}
		// Nothing was created that a later Open would trip over.
		closeDB(t, openPlain(t, dir))
	}
}

func TestEncryptedValueWithoutPassphrase(t *testing.T) {
	dir := t.TempDir()
	plain, enc := newSample(), newSample()
	enc.renumber()
	db := openPlain(t, dir)
	commit(t, db, plain.put)
	closeDB(t, db)
	db = openEnc(t, dir, "pw")
	commit(t, db, enc.put)
	closeDB(t, db)

	db = openPlain(t, dir)
	if got := db.Encryption(); got != EncryptionLocked {
		t.Errorf("Encryption() = %v, want locked", got)
	}
	for _, r := range plain.recs {
		if _, err := db.GetRecord(DefaultNS, r.Store, r.ID); err != nil {
			t.Errorf("plaintext record without passphrase: %v", err)
		}
	}
	for _, r := range plain.raws {
		if _, err := db.GetRaw(DefaultNS, r.ID); err != nil {
			t.Errorf("plaintext raw entry without passphrase: %v", err)
		}
	}
	isEncrypted := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrEncrypted) || errors.Is(err, ErrCorrupt) || errors.Is(err, ErrWrongPassphrase) {
			t.Errorf("%s: %v, want ErrEncrypted only", what, err)
		}
		if err != nil && !strings.Contains(err.Error(), "configure security.store_encryption_passphrase") {
			t.Errorf("%s: %q does not say what to configure", what, err)
		}
	}
	_, err := db.GetRecord(DefaultNS, enc.recs[0].Store, enc.recs[0].ID)
	isEncrypted("GetRecord", err)
	_, err = db.GetRaw(DefaultNS, enc.raws[0].ID)
	isEncrypted("GetRaw", err)
	isEncrypted("ScanRecords", db.ScanRecords(DefaultNS, enc.recs[0].Store, func(*memory.MemoryRecord) error { return nil }))
	isEncrypted("ScanRaw", db.ScanRaw(DefaultNS, func(*memory.RawJournalRecord) error { return nil }))
	snap := db.NewSnapshot()
	isEncrypted("Snapshot.ScanRaw", snap.ScanRaw(DefaultNS, func(*memory.RawJournalRecord) error { return nil }))
	snap.Close()
	// A session scan cannot see the protected index: it fails rather than
	// answer with only the plaintext-indexed entries.
	isEncrypted("session scan", db.ScanRawNewest(DefaultNS, RawRange{Session: &plain.raws[0].SessionID},
		func(memory.ID, RawFlags) (bool, error) { return true, nil }))
	// The time index has no secret and still lists everything.
	if got := newest(t, db, RawRange{}); len(got) != len(plain.raws)+len(enc.raws) {
		t.Errorf("time index without passphrase: %d entries", len(got))
	}
	if _, err := db.MigrateEncryption(t.Context()); !errors.Is(err, ErrNoPassphrase) {
		t.Errorf("MigrateEncryption without passphrase: %v", err)
	}
}

func TestSealedValueBoundToItsKey(t *testing.T) {
	db := openEnc(t, t.TempDir(), "pw")
	a, b := realisticRecord(1, idA), realisticRecord(2, idB)
	a.Store, b.Store = memory.StoreEpisodic, memory.StoreEpisodic
	raw := realisticRaw(3, idC)
	commit(t, db, func(bt *Batch) {
		bt.PutRecord(DefaultNS, a)
		bt.PutRecord(DefaultNS, b)
		bt.PutRaw(DefaultNS, raw, nil)
	})
	sealedA, err := db.Get(recordKey(DefaultNS, a.Store, a.ID))
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(sealedA)
	flipped[len(flipped)/2] ^= 1
	other, err := db.CreateNamespace("other")
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name  string
		key   []byte
		value []byte
		read  func() error
	}{
		{"another record's key", recordKey(DefaultNS, b.Store, b.ID), sealedA,
			func() error { _, err := db.GetRecord(DefaultNS, b.Store, b.ID); return err }},
		{"same id in another store", recordKey(DefaultNS, memory.StoreSemantic, a.ID), sealedA,
			func() error { _, err := db.GetRecord(DefaultNS, memory.StoreSemantic, a.ID); return err }},
		{"same key in another namespace", recordKey(other, a.Store, a.ID), sealedA,
			func() error { _, err := db.GetRecord(other, a.Store, a.ID); return err }},
		{"raw journal key", rawKey(DefaultNS, raw.ID), sealedA,
			func() error { _, err := db.GetRaw(DefaultNS, raw.ID); return err }},
		{"flipped ciphertext bit", recordKey(DefaultNS, a.Store, a.ID), flipped,
			func() error { _, err := db.GetRecord(DefaultNS, a.Store, a.ID); return err }},
		{"truncated envelope", recordKey(DefaultNS, a.Store, a.ID), sealedA[:sealOverhead-1],
			func() error { _, err := db.GetRecord(DefaultNS, a.Store, a.ID); return err }},
		{"envelope byte only", recordKey(DefaultNS, a.Store, a.ID), []byte{formatSealed},
			func() error { _, err := db.GetRecord(DefaultNS, a.Store, a.ID); return err }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			commit(t, db, func(bt *Batch) { bt.Set(tc.key, tc.value) })
			err := tc.read()
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("read after moving a ciphertext: %v, want a corruption error", err)
			}
			if errors.Is(err, ErrEncrypted) || errors.Is(err, ErrWrongPassphrase) {
				t.Errorf("reported as %v", err)
			}
		})
	}
	// The original is untouched by all this.
	commit(t, db, func(bt *Batch) { bt.Set(recordKey(DefaultNS, a.Store, a.ID), sealedA) })
	if got, err := db.GetRecord(DefaultNS, a.Store, a.ID); err != nil || got.ID != a.ID {
		t.Errorf("original after the swaps: %v, %v", got, err)
	}
}

func TestEnvelopeLayout(t *testing.T) {
	db := openEnc(t, t.TempDir(), "pw")
	rec := realisticRecord(1, idA)
	plain := EncodeRecord(rec)
	key := recordKey(DefaultNS, rec.Store, rec.ID)
	one, two := db.keys.seal(key, bytes.Clone(plain)), db.keys.seal(key, bytes.Clone(plain))
	if one[0] != formatSealed || len(one) != len(plain)+41 {
		t.Errorf("envelope starts %#x and is %d bytes for %d plaintext bytes", one[0], len(one), len(plain))
	}
	if bytes.Equal(one[1:25], two[1:25]) || bytes.Equal(one, two) {
		t.Error("two seals of the same value share a nonce")
	}
	if bytes.Contains(one, plain[20:60]) {
		t.Error("envelope contains plaintext")
	}
	if formatSealed == formatRecordV1 || formatSealed == formatRawV1 {
		t.Error("envelope byte collides with a plaintext format byte")
	}
	// seal wipes the plaintext it was handed.
	buf := bytes.Clone(plain)
	db.keys.seal(key, buf)
	if !bytes.Equal(buf, make([]byte, len(buf))) {
		t.Error("seal left the plaintext buffer intact")
	}
}

// rewriteHeader replaces the header value of a closed directory.
func rewriteHeader(t *testing.T, dir string, edit func(h []byte) []byte) {
	t.Helper()
	db := openPlain(t, dir)
	v, err := db.Get([]byte{kindCrypt})
	if err != nil {
		t.Fatal(err)
	}
	commit(t, db, func(b *Batch) { b.Set([]byte{kindCrypt}, edit(v)) })
	closeDB(t, db)
}

// withCRC fixes the header checksum after an edit.
func withCRC(h []byte) []byte {
	if len(h) == headerSize {
		binary.BigEndian.PutUint32(h[offCRC:], crc32.Checksum(h[:offCRC], crcTable()))
	}
	return h
}

func TestDamagedHeader(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(h []byte) []byte
		want    error  // nil: not a sentinel
		message string // part of the message
	}{
		{"empty", func([]byte) []byte { return []byte{} }, ErrCorrupt, "empty"},
		{"truncated", func(h []byte) []byte { return h[:40] }, ErrCorrupt, "40 bytes"},
		{"extended", func(h []byte) []byte { return append(h, 0) }, ErrCorrupt, "81 bytes"},
		{"salt bit flipped", func(h []byte) []byte { h[offSalt+3] ^= 0x10; return h }, ErrCorrupt, "checksum"},
		{"checksum flipped", func(h []byte) []byte { h[offCRC] ^= 1; return h }, ErrCorrupt, "checksum"},
		{"unknown KDF", func(h []byte) []byte { h[1] = 9; return withCRC(h) }, ErrCorrupt, "unknown"},
		{"unknown cipher", func(h []byte) []byte { h[2] = 9; return withCRC(h) }, ErrCorrupt, "unknown"},
		{"zero lanes", func(h []byte) []byte { h[3] = 0; return withCRC(h) }, ErrCorrupt, "out of range"},
		{"huge memory", func(h []byte) []byte { binary.BigEndian.PutUint32(h[4:], 1<<31); return withCRC(h) }, ErrCorrupt, "out of range"},
		{"zero passes", func(h []byte) []byte { binary.BigEndian.PutUint32(h[8:], 0); return withCRC(h) }, ErrCorrupt, "out of range"},
		{"newer version", func(h []byte) []byte { h[0] = headerVersion + 1; return withCRC(h) }, nil, "upgrade memsvc"},
		// The key check covers the parameters: a consistent header with other
		// parameters derives another key and is refused as such.
		{"other passes", func(h []byte) []byte { binary.BigEndian.PutUint32(h[8:], 2); return withCRC(h) }, ErrWrongPassphrase, "does not match"},
		{"other salt", func(h []byte) []byte { h[offSalt] ^= 0xff; return withCRC(h) }, ErrWrongPassphrase, "does not match"},
		{"other key check", func(h []byte) []byte { h[offCheck] ^= 0xff; return withCRC(h) }, ErrWrongPassphrase, "does not match"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			abs, _ := filepath.Abs(dir)
			closeDB(t, openEnc(t, dir, "pw"))
			rewriteHeader(t, dir, tc.edit)
			db, err := Open(dir, Options{Passphrase: []byte("pw")})
			if err == nil {
				db.Close()
				t.Fatal("Open accepted a damaged header")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("error %v, want %v", err, tc.want)
			}
			for _, want := range []string{abs, tc.message} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			if tc.want == ErrWrongPassphrase {
				return
			}
			// Without a passphrase the damage is reported as well: the
			// directory's encrypted records could not be read anyway.
			if db, err := Open(dir, Options{}); err == nil {
				db.Close()
				t.Error("Open without passphrase accepted a damaged header")
			}
		})
	}
}

func TestEncryptedRecordsWithoutHeaderRefused(t *testing.T) {
	dir := t.TempDir()
	db := openEnc(t, dir, "pw")
	commit(t, db, newSample().put)
	commit(t, db, func(b *Batch) { b.Delete([]byte{kindCrypt}) })
	closeDB(t, db)
	_, err := Open(dir, Options{Passphrase: []byte("pw"), KDF: fastKDF()})
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "no encryption header") {
		t.Fatalf("Open of encrypted records without a header: %v", err)
	}
	// No new header was written: the directory is left as it was.
	db = openPlain(t, dir)
	if got := db.Encryption(); got != EncryptionOff {
		t.Errorf("Encryption() = %v after the refused Open", got)
	}
}

func TestKeyDerivationIsDistinct(t *testing.T) {
	h := &header{kdf: fastKDF()}
	master := bytes.Repeat([]byte{7}, 32)
	seen := map[string]string{}
	for _, info := range []string{infoRecordKey, infoSessionKey, infoKeyCheck} {
		k := string(h.subkey(master, info))
		if other, ok := seen[k]; ok {
			t.Errorf("%q and %q derive the same key", info, other)
		}
		seen[k] = info
	}
	// Another salt gives other keys.
	h2 := &header{kdf: h.kdf}
	h2.salt[0] = 1
	if bytes.Equal(h.subkey(master, infoRecordKey), h2.subkey(master, infoRecordKey)) {
		t.Error("the salt does not reach the record key")
	}
	// Two directories created with the same passphrase get different salts.
	a, _, err := newHeader([]byte("pw"), fastKDF())
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := newHeader([]byte("pw"), fastKDF())
	if a.salt == b.salt || a.check == b.check {
		t.Error("two new headers share a salt")
	}
	if _, _, err := newHeader([]byte("pw"), KDFParams{MemoryKiB: 8, Iterations: 1, Parallelism: 4}); err == nil {
		t.Error("newHeader accepted memory below 8 KiB per lane")
	}
}

func FuzzParseHeader(f *testing.F) {
	h, _, err := newHeader([]byte("pw"), fastKDF())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(h.marshal())
	f.Add([]byte{})
	f.Add([]byte{headerVersion + 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := parseHeader(b)
		if err != nil {
			return
		}
		if err := got.kdf.Check(); err != nil {
			t.Fatalf("parsed header with bad parameters: %v", err)
		}
		if !bytes.Equal(got.marshal(), b) {
			t.Fatalf("header does not round-trip:\n% x\n% x", got.marshal(), b)
		}
	})
}

// TestSessionIDNeverWrittenInPlaintext: with a passphrase, a session id
// reaches the disk only as its keyed tag, also in the tombstones written
// when an entry is updated or deleted before migration.
func TestSessionIDNeverWrittenInPlaintext(t *testing.T) {
	const word = "Wombatoid"
	dir := t.TempDir()
	db := openPlain(t, dir)
	commit(t, db, func(b *Batch) { b.PutRaw(DefaultNS, realisticRaw(1, idA), nil) }) // a plaintext session index entry
	closeDB(t, db)

	db = openEnc(t, dir, "pw")
	if !db.plainSessions.Load() {
		t.Fatal("the plaintext session index entry went unnoticed")
	}
	raw := realisticRaw(2, idB)
	raw.SessionID = "session-" + word
	commit(t, db, func(b *Batch) { b.PutRaw(DefaultNS, raw, nil) })
	moved := *raw
	moved.CreatedAt = moved.CreatedAt.Add(time.Minute)
	commit(t, db, func(b *Batch) { b.PutRaw(DefaultNS, &moved, raw) })
	if got := newest(t, db, RawRange{Session: &raw.SessionID}); len(got) != 1 {
		t.Errorf("session scan after the update: %v", got)
	}
	commit(t, db, func(b *Batch) { b.DeleteRaw(DefaultNS, &moved) })
	if got := newest(t, db, RawRange{Session: &raw.SessionID}); len(got) != 0 {
		t.Errorf("session scan after the delete: %v", got)
	}
	closeDB(t, db)
	if got := filesWith(t, dir, word); len(got) != 0 {
		t.Errorf("session id in plaintext in %v", got)
	}
}

func TestDeleteAllRecords(t *testing.T) {
	for _, mode := range dbModes() {
		t.Run(mode.name, func(t *testing.T) {
			before, after := newSample(), newSample()
			for _, r := range after.raws {
				r.ID[2] = 0xEE
			}
			db := mode.setup(t, func(b *Batch) { before.put(b); b.PutMeta("mode", []byte("human")) },
				func(b *Batch) {
					for _, r := range after.raws {
						b.PutRaw(DefaultNS, r, nil)
					}
				})
			state := db.Encryption()
			commit(t, db, func(b *Batch) { b.DeleteAllRecords(DefaultNS) })
			for _, ns := range []byte{kindCurated, kindRaw, kindSession, kindSealedSession, kindRawTime} {
				if n := countPrefix(t, db, []byte{ns}); n != 0 {
					t.Errorf("%d keys left under %q", n, ns)
				}
			}
			if v, err := db.GetMeta("mode"); err != nil || string(v) != "human" {
				t.Errorf("setting after DeleteAllRecords: %q, %v", v, err)
			}
			if got := db.Encryption(); got != state {
				t.Errorf("encryption %v after DeleteAllRecords, was %v", got, state)
			}
		})
	}
}

func TestLockedDirectoryRefusesPlaintextRecords(t *testing.T) {
	dir := t.TempDir()
	closeDB(t, openEnc(t, dir, "pw")) // header only
	db := openPlain(t, dir)
	tests := []struct {
		name string
		fill func(*Batch)
	}{
		{"curated record", func(b *Batch) { b.PutRecord(DefaultNS, minimalRecord()) }},
		{"raw entry", func(b *Batch) { b.PutRaw(DefaultNS, minimalRaw(), nil) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, sync := range []bool{true, false} {
				b := db.NewBatch()
				tc.fill(b)
				var err error
				if sync {
					err = b.Commit()
				} else {
					err = b.CommitNoSync()
				}
				b.Close()
				if !errors.Is(err, ErrEncrypted) {
					t.Errorf("commit (sync %v) in a locked directory: %v", sync, err)
				}
			}
		})
	}
	if sealed, plain := sealedValues(t, db); sealed+plain != 0 {
		t.Errorf("%d values written", sealed+plain)
	}
	// Settings and deletes are not records and go through.
	commit(t, db, func(b *Batch) { b.PutMeta("k", []byte("v")); b.DeleteRecord(DefaultNS, memory.StoreEpisodic, idA) })
}

// encryptWith starts encryption in dir with passphrase "pw" and the
// parameters p, writes a sample and closes the database; the sample checks
// what a later Open reads.
func encryptWith(t *testing.T, dir string, p KDFParams) sample {
	t.Helper()
	db, err := Open(dir, Options{Passphrase: []byte("pw"), KDF: p})
	if err != nil {
		t.Fatal(err)
	}
	smp := newSample()
	commit(t, db, smp.put)
	closeDB(t, db)
	return smp
}

// headerKDF reads the key derivation parameters stored in dir's header.
func headerKDF(t *testing.T, dir string) KDFParams {
	t.Helper()
	db := openPlain(t, dir)
	p, ok := db.KDF()
	if !ok {
		t.Fatal("no encryption header")
	}
	closeDB(t, db)
	return p
}

// TestNewDirectoryGetsDefaultKDF: a directory encrypted without
// Options.KDF gets OWASP's recommended Argon2id setting in its header.
func TestNewDirectoryGetsDefaultKDF(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Options{Passphrase: []byte("pw")})
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := db.KDF(); !ok || p != DefaultKDF() {
		t.Errorf("KDF() = %v, %v after creating the header, want %v", p, ok, DefaultKDF())
	}
	closeDB(t, db)
	want := KDFParams{MemoryKiB: 19 * 1024, Iterations: 2, Parallelism: 1}
	if got := headerKDF(t, dir); got != want || DefaultKDF() != want {
		t.Errorf("header of a new directory says %v (default %v), want %v", got, DefaultKDF(), want)
	}
}

// TestKDFOptionHonoured: Options.KDF sets a new directory's parameters;
// a later Open with other parameters (or none, or ones Check refuses)
// keeps the header's, and the passphrase still opens it.
func TestKDFOptionHonoured(t *testing.T) {
	dir := t.TempDir()
	chosen := KDFParams{MemoryKiB: 256, Iterations: 3, Parallelism: 2}
	smp := encryptWith(t, dir, chosen)
	if got := headerKDF(t, dir); got != chosen {
		t.Fatalf("header says %v, want the chosen %v", got, chosen)
	}
	for _, o := range []KDFParams{{}, fastKDF(), {MemoryKiB: 8, Iterations: 1, Parallelism: 2}} {
		db, err := Open(dir, Options{Passphrase: []byte("pw"), KDF: o})
		if err != nil {
			t.Fatalf("reopen with KDF %v: %v", o, err)
		}
		smp.check(t, db)
		closeDB(t, db)
		if got := headerKDF(t, dir); got != chosen {
			t.Errorf("after an Open with KDF %v the header says %v, want %v", o, got, chosen)
		}
	}
	if _, err := Open(dir, Options{Passphrase: []byte("other"), KDF: chosen}); !errors.Is(err, ErrWrongPassphrase) {
		t.Errorf("Open with another passphrase: %v, want ErrWrongPassphrase", err)
	}
}

// TestOldDefaultKDFStillOpens: a directory whose header names the
// parameters new directories got before (64 MiB, 3 passes, 4 lanes)
// opens with its passphrase, and reads, under today's default.
func TestOldDefaultKDFStillOpens(t *testing.T) {
	dir := t.TempDir()
	old := KDFParams{MemoryKiB: 64 << 10, Iterations: 3, Parallelism: 4}
	smp := encryptWith(t, dir, old)
	db, err := Open(dir, Options{Passphrase: []byte("pw")})
	if err != nil {
		t.Fatalf("Open of a directory with the old parameters: %v", err)
	}
	smp.check(t, db)
	if p, _ := db.KDF(); p != old {
		t.Errorf("KDF() = %v, want the header's %v", p, old)
	}
	closeDB(t, db)
}

// TestKDFOptionOutOfRange: Open refuses parameters Argon2id or the
// header limits cannot take, before it writes a header.
func TestKDFOptionOutOfRange(t *testing.T) {
	for _, p := range []KDFParams{
		{MemoryKiB: 64, Iterations: 0, Parallelism: 1},
		{MemoryKiB: 64, Iterations: 1, Parallelism: 0},
		{MemoryKiB: 8, Iterations: 1, Parallelism: 2},
		{MemoryKiB: 2 << 20, Iterations: 1, Parallelism: 1},
		{MemoryKiB: 64, Iterations: 65, Parallelism: 1},
	} {
		dir := t.TempDir()
		_, err := Open(dir, Options{Passphrase: []byte("pw"), KDF: p})
		if err == nil || !strings.Contains(err.Error(), "KDF parameters out of range") {
			t.Errorf("Open with %v: %v, want a refusal", p, err)
			continue
		}
		if db := openPlain(t, dir); db.Encryption() != EncryptionOff {
			t.Errorf("Open with %v left a header behind", p)
		}
	}
}
