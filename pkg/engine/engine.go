// Package engine is memsvc's domain: the curated stores, the raw journal,
// the working store and the operations on them. It implements
// memory.Service in process over a store.DB.
//
// # Concurrency
//
// Operations that touch one record (store, update, raw append) run
// concurrently; they take a shared hold on Engine.big plus a striped lock per
// record, so two writers of the same record never interleave and commits of
// different records share a disk sync. With the audit log on, audited
// commits take their outbox sequences in group commits (commit.go): the
// changes waiting at once share one sync, and the log's sequence has no
// holes. Operations that restructure many
// records (forget) take Engine.big exclusively. The in-memory indexes are
// guarded by Engine.mu and updated after the disk write commits, so what the
// engine reports never runs ahead of what is durable, except for the side
// effects of recalls, which are written behind (writebehind.go).
//
// Everything a request touches belongs to one namespace (nsstate.go).
package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"memsvc.dev/memsvc/pkg/archive"
	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/engine/internal/lockorder"
	"memsvc.dev/memsvc/pkg/engine/rank"
	"memsvc.dev/memsvc/pkg/engine/textindex"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// Options configure an Engine.
type Options struct {
	// Logger for operational messages. Nil discards.
	Logger *slog.Logger
	// Now is the clock. Nil selects time.Now.
	Now func() time.Time
	// WorkingCapacity bounds the working store; 0 selects 7.
	WorkingCapacity int
	// SimilarLinks is how many similarity associations a new record gets
	// (in the background); 0 selects 3, negative disables them.
	SimilarLinks int
	// ArchiveKDF sets the passphrase hashing cost of encrypted exports;
	// zero fields take the archive package's defaults.
	ArchiveKDF archive.KDFParams
	// KDFGate bounds the archive key derivations (encrypted exports and
	// imports) that run at once; nil selects a gate of
	// archive.MaxConcurrentKDF for this engine.
	KDFGate *archive.KDFGate
	// ImportMaxBytes bounds the size of an imported archive; 0 selects
	// the archive package's default (512 MiB).
	ImportMaxBytes int64
	// Audit, when set, receives one entry per committed state change
	// (through an outbox in the store). The caller opens and closes it.
	Audit *audit.Log
	// PersistIndexes allows snapshots of the full-text indexes (text
	// derived from the records) in the data directory, so a start loads
	// them instead of building them from the records. With store
	// encryption they are written sealed whatever this says (no plaintext
	// reaches the disk); without it and with this false, nothing derived
	// is written and every start builds the indexes (snapshot.go).
	PersistIndexes bool
	// NoIndexSnapshots forbids index snapshots of any kind, sealed ones
	// included, and deletes any left by an earlier configuration: the
	// configuration said explicitly that no search index may be kept on
	// disk (security.persist_search_indexes = false). It overrides
	// PersistIndexes and the sealed snapshots of an encrypted store.
	NoIndexSnapshots bool
	// Decay holds the decay model's parameters; zero fields take defaults.
	Decay DecayConfig

	// lockReport, when set, checks the lock order in any build and
	// receives every lock taken out of order (tests of the checker).
	lockReport func(error)
	// recallFlushEvery, recallPendingMax and recallFlushAt, when set,
	// replace the write-behind bounds of recall effects (writebehind.go;
	// tests).
	recallFlushEvery time.Duration
	recallPendingMax int
	recallFlushAt    int
	// consolidationStepped, when set, is called after each committed
	// step of a consolidation, still holding big (crash tests).
	consolidationStepped func(step string)
	// beforeWALSync, when set, is called by syncWAL before it syncs
	// (tests).
	beforeWALSync func()
}

// Engine implements memory.Service over a store.DB.
//
// # Lock order
//
// A goroutine takes the engine's locks in this order, skipping any it does
// not need, and never takes two locks of one rank (except record stripes,
// in increasing index):
//
//  1. dreamMu, tickMu, modeMu, consMu: serialise dream ticks, decay
//     ticks, set-mode and consolidations, each a whole operation.
//  2. big: shared by operations on single records, exclusive for those
//     that restructure many (forget, import, consolidate, prune).
//  3. workMu, rawMu, nsMu: serialise working-store writes, raw writes
//     that carry client ids, and the creation of namespaces.
//  4. locks[i]: record stripes (lockRecord, lockRecords).
//  5. aud.mu: held by the leader of an audited group commit through the
//     commit (commit.go).
//  6. aud.flushMu: one flush of the audit outbox at a time.
//  7. mu: the in-memory state (the namespaces and, in each, entries, raw
//     counts, working store, modes).
//  8. vecMu, evo.mu, aud.queue, wb.mu: the vector indexes, a namespace's
//     evolution observations, the queue of audited changes waiting for a
//     group commit and the pending recall effects (writebehind.go);
//     nothing is taken under them.
//
// searchindex guards each index with a lock of its own under mu, and
// the store's locks are below every engine lock. In test binaries built
// with -race a lockorder.Checker watches every acquisition and panics on
// one that breaks this order.
type Engine struct {
	db   *store.DB
	log  *slog.Logger
	now  func() time.Time
	ids  *memory.IDSource
	opts Options

	order   *lockorder.Checker // nil unless lock order is checked
	big     lockorder.RWMutex
	seed    maphash.Seed
	locks   [64]lockorder.Mutex
	workMu  lockorder.Mutex // serialises writes to the working store
	rawMu   lockorder.Mutex // serialises raw writes that carry client ids
	tickMu  lockorder.Mutex // serialises decay ticks
	dreamMu lockorder.Mutex // serialises dream ticks
	modeMu  lockorder.Mutex // serialises set-mode
	consMu  lockorder.Mutex // serialises consolidations

	nsMu lockorder.Mutex // serialises the creation of namespaces

	wb *writeBehind // recall effects not yet written

	clockBits atomic.Uint64 // engine-wide decay clock in seconds, as float64 bits

	// function knows the function words of queries and texts (ranking
	// and human-mode rendering); it is read-only after Open.
	function *rank.Analyzer
	// ranking is how text recall ranks (textrank.go); read-only after
	// Open.
	ranking textRanking

	vecMu lockorder.RWMutex // guards the vector indexes' matrices

	// Index snapshots (snapshot.go): one written at a time, and at most
	// one in the background.
	snapWrite   sync.Mutex
	snapRunning atomic.Bool
	snapWG      sync.WaitGroup

	link    *linker
	aud     *auditState
	bgDecay atomic.Bool // a background decay loop is running
	bgDream atomic.Bool // a background dream loop is running

	mu       lockorder.RWMutex   // guards the fields below and the nsState fields so marked
	spaces   map[string]*nsState // every namespace that exists, by name
	lastTick time.Time           // wall time of the last engine-wide (background) decay tick
}

var _ memory.Service = (*Engine)(nil)

// Open loads the in-memory indexes from db and returns an engine serving it.
// The caller keeps ownership of db and closes it after the engine.
func Open(ctx context.Context, db *store.DB, opts Options) (*Engine, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.WorkingCapacity <= 0 {
		opts.WorkingCapacity = 7
	}
	if opts.SimilarLinks == 0 {
		opts.SimilarLinks = 3
	}
	opts.Decay = opts.Decay.withDefaults()
	e := &Engine{
		db:   db,
		log:  opts.Logger,
		now:  func() time.Time { return opts.Now().UTC() },
		opts: opts,
		seed: maphash.MakeSeed(),

		function: rank.NewAnalyzer(textindex.Tokenize),
		ranking:  recommendedTextRanking(),
	}
	e.initLocks()
	e.ids = memory.NewIDSource(e.now, nil)
	if e.opts.KDFGate == nil {
		e.opts.KDFGate = archive.NewKDFGate(archive.MaxConcurrentKDF)
	}
	if err := e.loadClock(); err != nil {
		return nil, fmt.Errorf("load decay clock: %w", err)
	}
	if err := e.loadSpaces(); err != nil {
		return nil, err
	}
	if err := e.openIndexes(ctx); err != nil {
		return nil, err
	}
	if err := e.openAudit(); err != nil {
		return nil, err
	}
	e.startWriteBehind()
	if q := e.Quarantined(); len(q) > 0 {
		e.log.Warn("serving without quarantined records that cannot be read; see the log lines above", "quarantined", len(q))
	}
	e.startLinker()
	return e, nil
}

// Ranks of the lock order (see Engine).
const (
	rankOperation lockorder.Rank = iota + 1
	rankBig
	rankWriter
	rankRecord
	rankAudit
	rankOutbox
	rankState
	rankLeaf
)

// initLocks ranks the engine's locks and, in test binaries built with
// -race (or when a test asks for it), has a checker watch them.
func (e *Engine) initLocks() {
	if e.opts.lockReport != nil {
		e.order = lockorder.NewChecker(e.opts.lockReport)
	} else if lockorder.Enabled() {
		e.order = lockorder.NewChecker(nil)
	}
	c := e.order
	e.dreamMu.Init(c, "dreamMu", rankOperation)
	e.tickMu.Init(c, "tickMu", rankOperation)
	e.modeMu.Init(c, "modeMu", rankOperation)
	e.consMu.Init(c, "consMu", rankOperation)
	e.big.Init(c, "big", rankBig)
	e.workMu.Init(c, "workMu", rankWriter)
	e.rawMu.Init(c, "rawMu", rankWriter)
	e.nsMu.Init(c, "nsMu", rankWriter)
	for i := range e.locks {
		e.locks[i].InitFamily(c, "record", rankRecord, i)
	}
	e.mu.Init(c, "mu", rankState)
	e.vecMu.Init(c, "vecMu", rankLeaf)
}

// Quarantined lists the stored values the engine cannot read (damaged
// bytes, or ciphertext that does not authenticate): they stay on disk
// untouched and out of every index, and the rest of the data is served.
// Curated records are found at start; raw entries when first read (at
// start when the search indexes are rebuilt in memory). For the stats and
// the server's readiness detail.
func (e *Engine) Quarantined() []store.Damaged { return e.db.Quarantined() }

// pendingDream reports whether a default dream tick would process an entry:
// not yet processed, not suppressed, visibility normal, not secret.
func pendingDream(f store.RawFlags) bool {
	return !f.DreamProcessed() && !f.Suppressed() &&
		f.Visibility() == memory.VisibilityNormal && f.SecrecyLevel() != memory.SecrecySecret
}

func (e *Engine) stripe(id memory.ID) int {
	return int(maphash.Bytes(e.seed, id[:]) % uint64(len(e.locks)))
}

// lockRecord takes the striped lock of id and returns its unlock.
func (e *Engine) lockRecord(id memory.ID) func() {
	m := &e.locks[e.stripe(id)]
	m.Lock()
	return m.Unlock
}

// get reads a curated record of namespace ns from the working store or
// disk; a record of another namespace is not found. The derived fidelity
// fields are not filled in; see present.
func (e *Engine) get(ns *nsState, id memory.ID) (*memory.MemoryRecord, error) {
	e.mu.RLock()
	ent, ok := ns.st.entries[id]
	var st memory.StoreType
	if ok {
		st = ent.store
	}
	var wrec *memory.MemoryRecord
	if ok && st == memory.StoreWorking {
		wrec = ns.working.get(id)
	}
	e.mu.RUnlock()
	if !ok {
		return nil, memory.NotFound(id)
	}
	if st == memory.StoreWorking {
		if wrec == nil {
			return nil, memory.NotFound(id)
		}
		return wrec, nil
	}
	if rec, ok, err := e.pendingRecord(ns, id); ok || err != nil {
		return rec, err
	}
	rec, err := e.db.GetRecord(ns.id, st, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, memory.NotFound(id)
	}
	return rec, err
}

// dreamKindOf reads metadata._dream.kind.
func dreamKindOf(rec *memory.MemoryRecord) dreamKind {
	if !bytes.Contains(rec.Metadata, []byte(`"_dream"`)) {
		return notDreamt
	}
	var md struct {
		Dream struct {
			Kind string `json:"kind"`
		} `json:"_dream"`
	}
	if json.Unmarshal(rec.Metadata, &md) != nil {
		return notDreamt
	}
	switch md.Dream.Kind {
	case "episodic_summary":
		if rec.Store == memory.StoreEpisodic {
			return dreamSummary
		}
	case "semantic_summary":
		if rec.Store == memory.StoreSemantic {
			return dreamSemantic
		}
	}
	return notDreamt
}

// SetBackground tells the engine whether background decay and dream loops
// are running, for the stats.
func (e *Engine) SetBackground(decay, dream bool) {
	e.bgDecay.Store(decay)
	e.bgDream.Store(dream)
}

// Settings of a namespace (store.NSMetaKey).
const (
	recallCountKey = "recall_count"
	lastDreamKey   = "last_dream_tick"
)

// unsavedRecalls is nsState.savedRecalls when the store's recall count is
// unknown: no real count reaches it.
const unsavedRecalls = math.MaxUint64

// loadCounters reads the namespace's persisted operation counters.
func (e *Engine) loadCounters(ns *nsState) error {
	n, ok, err := storedUint64(e.db.GetNSMeta(ns.id, recallCountKey))
	if err != nil {
		return fmt.Errorf("recall count: %w", err)
	}
	if ok {
		ns.recalls.Store(n)
	}
	ns.savedRecalls.Store(n) // an absent count reads as 0
	t, ok, err := storedUint64(e.db.GetNSMeta(ns.id, lastDreamKey))
	if err != nil {
		return fmt.Errorf("last dream tick: %w", err)
	}
	if ok {
		ns.lastDream = time.Unix(0, int64(t)).UTC()
	}
	return nil
}

// storedUint64 reads a setting of eight little-endian bytes, as setting
// reads any setting.
func storedUint64(v []byte, err error) (_ uint64, ok bool, _ error) {
	v, ok, err = setting(v, err)
	switch {
	case !ok:
		return 0, false, err
	case len(v) != 8:
		return 0, false, store.ErrCorrupt
	}
	return binary.LittleEndian.Uint64(v), true, nil
}

func uint64Bytes(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

// Close stops the engine and saves its counters. It does not close the
// store.
//
// A count the store already holds is not written again: a write here
// leaves a write-ahead log that the next open of the directory flushes
// into a table of its own, and every second such table sets off a
// compaction, which a one-shot command such as `memsvc stats` would pay
// for its own unchanged counters.
func (e *Engine) Close() error {
	e.stopLinker()
	wberr := e.stopWriteBehind()
	e.stopAudit()
	e.big.Lock()
	defer e.big.Unlock()
	b := e.db.NewBatch()
	defer b.Close()
	for _, ns := range e.allSpaces() {
		if n := ns.recalls.Load(); n != ns.savedRecalls.Load() {
			b.PutNSMeta(ns.id, recallCountKey, uint64Bytes(n))
		}
	}
	var err error
	if !b.Empty() {
		err = b.Commit()
	}
	if err == nil {
		err = wberr
	}
	if serr := e.saveSnapshots(); serr != nil {
		// Only a faster next start is lost: it builds the indexes.
		e.log.Warn("index snapshot not written at close", "err", serr)
	}
	return err
}
