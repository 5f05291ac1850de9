// Package engine is memsvc's domain: the curated stores, the raw journal,
// the working store and the operations on them. It implements
// memory.Service in process over a store.DB.
//
// # Concurrency
//
// Operations that touch one record (store, update, raw append) run
// concurrently; they take a shared hold on Engine.big plus a striped lock per
// record, so two writers of the same record never interleave and commits of
// different records share a disk sync. Operations that restructure many
// records (forget) take Engine.big exclusively. The in-memory indexes are
// guarded by Engine.mu and updated after the disk write commits, so what the
// engine reports never runs ahead of what is durable.
package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

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
	// Decay holds the decay model's parameters; zero fields take defaults.
	Decay DecayConfig
}

// Engine implements memory.Service over a store.DB.
type Engine struct {
	db   *store.DB
	log  *slog.Logger
	now  func() time.Time
	ids  *memory.IDSource
	opts Options

	big    sync.RWMutex
	seed   maphash.Seed
	locks  [64]sync.Mutex
	workMu sync.Mutex // serialises writes to the working store
	rawMu  sync.Mutex // serialises raw writes that carry client ids

	clockBits atomic.Uint64 // decay clock in seconds, as float64 bits

	mu      sync.Mutex // guards the fields below
	st      *state
	raw     rawState
	working *workingStore
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
	opts.Decay = opts.Decay.withDefaults()
	e := &Engine{
		db:      db,
		log:     opts.Logger,
		now:     func() time.Time { return opts.Now().UTC() },
		opts:    opts,
		seed:    maphash.MakeSeed(),
		st:      newState(),
		working: newWorkingStore(opts.WorkingCapacity),
	}
	e.ids = memory.NewIDSource(e.now, nil)
	if err := e.load(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

// load fills the in-memory indexes from the store.
func (e *Engine) load(ctx context.Context) error {
	start := time.Now()
	for _, st := range memory.PersistentStores {
		err := e.db.ScanRecords(st, func(rec *memory.MemoryRecord) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			e.st.put(rec)
			return nil
		})
		if err != nil {
			return fmt.Errorf("load %s store: %w", st, err)
		}
	}
	err := e.db.ScanRawNewest(store.RawRange{}, func(_ memory.ID, f store.RawFlags) (bool, error) {
		e.raw.total++
		if pendingDream(f) {
			e.raw.pending++
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("load raw journal: %w", err)
	}
	e.log.Debug("engine loaded", "records", len(e.st.entries), "raw", e.raw.total, "took", time.Since(start))
	return nil
}

// pendingDream reports whether a default dream tick would process an entry:
// not yet processed, not suppressed, visibility normal, not secret.
func pendingDream(f store.RawFlags) bool {
	return !f.DreamProcessed() && !f.Suppressed() &&
		f.Visibility() == memory.VisibilityNormal && f.SecrecyLevel() != memory.SecrecySecret
}

// lockRecord takes the striped lock of id and returns its unlock.
func (e *Engine) lockRecord(id memory.ID) func() {
	m := &e.locks[maphash.Bytes(e.seed, id[:])%uint64(len(e.locks))]
	m.Lock()
	return m.Unlock
}

// get reads a curated record from the working store or disk.
func (e *Engine) get(id memory.ID) (*memory.MemoryRecord, error) {
	e.mu.Lock()
	ent, ok := e.st.entries[id]
	var st memory.StoreType
	if ok {
		st = ent.store
	}
	var wrec *memory.MemoryRecord
	if ok && st == memory.StoreWorking {
		wrec = e.working.get(id)
	}
	e.mu.Unlock()
	if !ok {
		return nil, memory.NotFound(id)
	}
	if st == memory.StoreWorking {
		if wrec == nil {
			return nil, memory.NotFound(id)
		}
		return wrec, nil
	}
	rec, err := e.db.GetRecord(st, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, memory.NotFound(id)
	}
	return rec, err
}

// clock is the current decay-clock reading in seconds: the decay age a
// record would have if it had been created when the data directory was.
func (e *Engine) clock() float64 { return math.Float64frombits(e.clockBits.Load()) }

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

// Close stops the engine. It does not close the store.
func (e *Engine) Close() error {
	e.big.Lock()
	defer e.big.Unlock()
	return nil
}
