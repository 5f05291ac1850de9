package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"memsvc.dev/memsvc/internal/testsync"
	"memsvc.dev/memsvc/pkg/engine/searchindex"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// snapEnv opens a data directory with index snapshots allowed (or a
// passphrase) and tells whether a start loaded the indexes from a
// snapshot.
type snapEnv struct {
	t     *testing.T
	dir   string
	sopts store.Options
	opts  Options
	logs  *testsync.Buffer
	db    *store.DB
	e     *Engine
}

func newSnapEnv(t *testing.T, sopts store.Options, persist bool) *snapEnv {
	s := &snapEnv{t: t, dir: t.TempDir(), sopts: sopts, opts: Options{PersistIndexes: persist, SimilarLinks: -1}}
	t.Cleanup(s.close)
	return s
}

// open starts the engine and reports whether it loaded the default
// namespace's indexes from a snapshot.
func (s *snapEnv) open() bool {
	s.t.Helper()
	db, err := store.Open(s.dir, s.sopts)
	if err != nil {
		s.t.Fatal(err)
	}
	s.logs = &testsync.Buffer{}
	opts := s.opts
	opts.Logger = slog.New(slog.NewTextHandler(s.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e, err := Open(context.Background(), db, opts)
	if err != nil {
		s.t.Fatal(err)
	}
	s.db, s.e = db, e
	return strings.Contains(s.logs.String(), "search indexes loaded")
}

func (s *snapEnv) close() {
	if s.e == nil {
		return
	}
	if err := s.e.Close(); err != nil {
		s.t.Errorf("close engine: %v", err)
	}
	if err := s.db.Close(); err != nil {
		s.t.Errorf("close store: %v", err)
	}
	s.e, s.db = nil, nil
}

func (s *snapEnv) store(text string, st memory.StoreType) memory.ID {
	s.t.Helper()
	return storeText(s.t, s.e, text, st)
}

func (s *snapEnv) raw(session, text string) {
	s.t.Helper()
	r := rawReq(session, text)
	if _, err := s.e.EncodeStoreRaw(context.Background(), &r); err != nil {
		s.t.Fatal(err)
	}
}

func (s *snapEnv) snapshotPath() string {
	return filepath.Join(s.dir, "derived", snapshotName(store.DefaultNS))
}

// checkIndexes compares the default namespace's indexes with indexes
// built afresh from the records: the same documents, and the same hits
// with the same scores for every query.
func (s *snapEnv) checkIndexes(queries ...string) {
	s.t.Helper()
	ns := s.e.defaultSpace()
	ctx := context.Background()
	text, err := searchindex.Build(ns.indexConfig, func(add searchindex.AddFunc) error { return s.e.fillCurated(ctx, ns, add) })
	if err != nil {
		s.t.Fatal(err)
	}
	raw, err := searchindex.Build(ns.indexConfig, func(add searchindex.AddFunc) error { return s.e.fillRaw(ctx, ns, add) })
	if err != nil {
		s.t.Fatal(err)
	}
	for _, pair := range [][2]*searchindex.Index{{ns.text, text}, {ns.rawText, raw}} {
		got, want := documents(pair[0]), documents(pair[1])
		if !slices.Equal(got, want) {
			s.t.Fatalf("index holds %d documents, the records %d", len(got), len(want))
		}
		for _, q := range queries {
			query := searchindex.Query{Terms: pair[1].QueryTerms(q), Limit: 50}
			a, err1 := pair[0].Search(query)
			b, err2 := pair[1].Search(query)
			if err1 != nil || err2 != nil || !slices.Equal(a, b) {
				s.t.Fatalf("query %q: index %v, records %v (%v, %v)", q, a, b, err1, err2)
			}
		}
	}
}

// documents lists an index's document ids, sorted.
func documents(ix *searchindex.Index) []memory.ID {
	var ids []memory.ID
	ix.Documents(func(id memory.ID, _ searchindex.Attrs) bool {
		ids = append(ids, id)
		return true
	})
	slices.SortFunc(ids, compareIDs)
	return ids
}

var snapQueries = []string{"alpha", "bravo charlie", "delta", "working", "session echo", "nothing"}

func (s *snapEnv) fill(from, n int) {
	s.t.Helper()
	words := []string{"alpha", "bravo", "charlie", "delta", "echo"}
	for i := from; i < from+n; i++ {
		s.store(fmt.Sprintf("%s %s record %d", words[i%5], words[(i/5)%5], i), memory.StoreEpisodic)
		s.raw(fmt.Sprintf("s%d", i%3), fmt.Sprintf("session %s entry %d", words[i%5], i))
	}
}

// TestIndexSnapshotRoundTrip: a clean close writes a snapshot; the next
// start loads it instead of building from the records, without the
// working store's records (they do not survive a restart), and the
// indexes hold exactly what indexes built from the records would, before
// and after further changes.
func TestIndexSnapshotRoundTrip(t *testing.T) {
	s := newSnapEnv(t, store.Options{}, true)
	if s.open() {
		t.Fatal("an empty directory loaded a snapshot")
	}
	s.fill(0, 40)
	working := s.store("working memory bravo", memory.StoreWorking)
	forgotten := s.store("alpha to be forgotten", memory.StoreSemantic)
	if _, err := s.e.Forget(context.Background(), &memory.ForgetRequest{RecordIDs: []memory.ID{forgotten}, Confirm: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	s.close()
	if _, err := os.Stat(s.snapshotPath()); err != nil {
		t.Fatalf("no snapshot after a clean close: %v", err)
	}
	if !s.open() {
		t.Fatalf("the snapshot was not loaded; log:\n%s", s.logs)
	}
	if s.e.defaultSpace().text.Has(working) {
		t.Error("a working-store record came back with the snapshot")
	}
	s.checkIndexes(snapQueries...)
	s.fill(40, 10)
	s.checkIndexes(snapQueries...)
	s.close()
	if !s.open() {
		t.Fatalf("the second snapshot was not loaded; log:\n%s", s.logs)
	}
	s.checkIndexes(snapQueries...)
}

// TestIndexSnapshotNotOfTheLastChange: a snapshot that does not hold the
// last committed change (an older one put back, as a crash after later
// writes would leave it) or that is damaged is not loaded: the indexes
// are built from the records and hold every record.
func TestIndexSnapshotNotOfTheLastChange(t *testing.T) {
	s := newSnapEnv(t, store.Options{}, true)
	s.open()
	s.fill(0, 20)
	s.close()
	old, err := os.ReadFile(s.snapshotPath())
	if err != nil {
		t.Fatal(err)
	}
	s.open()
	late := s.store("foxtrot arrived after the snapshot", memory.StoreEpisodic)
	s.close()
	damaged, err := os.ReadFile(s.snapshotPath())
	if err != nil {
		t.Fatal(err)
	}
	damaged[len(damaged)/2] ^= 0x40
	for name, content := range map[string][]byte{"older": old, "damaged": damaged} {
		if err := os.WriteFile(s.snapshotPath(), content, 0o600); err != nil {
			t.Fatal(err)
		}
		if s.open() {
			t.Fatalf("%s snapshot loaded", name)
		}
		if !s.e.defaultSpace().text.Has(late) {
			t.Fatalf("%s snapshot: the last record is not indexed", name)
		}
		s.checkIndexes(append(snapQueries, "foxtrot")...)
		s.close()
	}
	// The snapshot written at the last close is good again.
	if !s.open() {
		t.Fatalf("the rewritten snapshot was not loaded; log:\n%s", s.logs)
	}
	s.checkIndexes(append(snapQueries, "foxtrot")...)
}

// TestIndexSnapshotNotWrittenWhenNotAllowed: without PersistIndexes and
// without store encryption no snapshot is written, and one left by an
// earlier configuration is deleted at start.
func TestIndexSnapshotNotWrittenWhenNotAllowed(t *testing.T) {
	s := newSnapEnv(t, store.Options{}, true)
	s.checkSnapshotDropped("with persistence off", func(o *Options) { o.PersistIndexes = false })
}

// checkSnapshotDropped writes a snapshot with the environment's options,
// then restarts with forbid applied to them (when is how the messages
// name that setting): no snapshot is loaded, the old one is deleted, the
// indexes built at start hold what the records say, and none is written
// at close.
func (s *snapEnv) checkSnapshotDropped(when string, forbid func(*Options)) {
	t := s.t
	t.Helper()
	s.open()
	s.fill(0, 5)
	s.close()
	if _, err := os.Stat(s.snapshotPath()); err != nil {
		t.Fatalf("no snapshot before the restart %s: %v", when, err)
	}
	forbid(&s.opts)
	if s.open() {
		t.Fatalf("a snapshot was loaded %s", when)
	}
	if _, err := os.Stat(s.snapshotPath()); !os.IsNotExist(err) {
		t.Fatalf("snapshot still there %s: %v", when, err)
	}
	s.fill(5, 5)
	s.checkIndexes(snapQueries...)
	s.close()
	if names, err := os.ReadDir(filepath.Join(s.dir, "derived")); err != nil || len(names) != 0 {
		t.Fatalf("derived files %s: %v, %v", when, names, err)
	}
}

// TestIndexSnapshotSealed: with store encryption the snapshot is written
// sealed even though PersistIndexes is off (no index term in plaintext
// on disk), and loaded at the next start.
func TestIndexSnapshotSealed(t *testing.T) {
	s := newSnapEnv(t, store.Options{Passphrase: []byte("snapshot passphrase")}, false)
	s.open()
	s.store("Zyxquuxing sealed away", memory.StoreEpisodic)
	s.fill(0, 5)
	s.close()
	data, err := os.ReadFile(s.snapshotPath())
	if err != nil {
		t.Fatalf("no sealed snapshot: %v", err)
	}
	if bytes.Contains(data, []byte("zyxquux")) || bytes.Contains(data, []byte("alpha")) {
		t.Fatal("index terms in plaintext in the snapshot of an encrypted store")
	}
	if !s.open() {
		t.Fatalf("the sealed snapshot was not loaded; log:\n%s", s.logs)
	}
	s.checkIndexes(append(snapQueries, "zyxquux")...)
}

// TestIndexSnapshotSealedKeptWhenLocked: a start without the passphrase
// (a CLI command run without it, say) cannot read the sealed snapshot and
// fails on the encrypted records, but leaves the snapshot alone, so the
// next start with the passphrase still loads it instead of building the
// indexes.
func TestIndexSnapshotSealedKeptWhenLocked(t *testing.T) {
	s := newSnapEnv(t, store.Options{Passphrase: []byte("snapshot passphrase")}, false)
	s.open()
	s.fill(0, 5)
	s.close()
	before, err := os.ReadFile(s.snapshotPath())
	if err != nil {
		t.Fatalf("no sealed snapshot: %v", err)
	}

	db, err := store.Open(s.dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	logs := &testsync.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e, err := Open(context.Background(), db, Options{PersistIndexes: true, SimilarLinks: -1, Logger: log})
	if err == nil {
		_ = e.Close()
		t.Fatal("opened the encrypted records without the passphrase")
	}
	if !errors.Is(err, store.ErrEncrypted) {
		t.Errorf("open without the passphrase: %v, want ErrEncrypted", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(s.snapshotPath())
	if err != nil || !bytes.Equal(after, before) {
		t.Fatalf("the sealed snapshot did not survive a start without the passphrase (%v); log:\n%s", err, logs)
	}
	if !s.open() {
		t.Fatalf("the sealed snapshot was not loaded; log:\n%s", s.logs)
	}
	s.checkIndexes(snapQueries...)
}

// TestIndexSnapshotForbiddenEvenSealed: with NoIndexSnapshots (the
// configuration set security.persist_search_indexes = false explicitly)
// an encrypted store keeps no snapshot, not even sealed: the one an
// earlier start wrote is deleted, none is written at close, and the
// indexes built at start hold what the records say.
func TestIndexSnapshotForbiddenEvenSealed(t *testing.T) {
	s := newSnapEnv(t, store.Options{Passphrase: []byte("snapshot passphrase")}, false)
	s.checkSnapshotDropped("with sealed snapshots forbidden", func(o *Options) { o.NoIndexSnapshots = true })
}
