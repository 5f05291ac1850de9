package engine

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"time"

	"memsvc.dev/memsvc/pkg/engine/searchindex"
	"memsvc.dev/memsvc/pkg/engine/textindex"
	"memsvc.dev/memsvc/pkg/engine/vecindex"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// Namespaces. Every Service call acts in the namespace its context names
// (memory.NamespaceFrom; "default" when none is named) and sees nothing
// else: the records, raw entries, indexes, associations, modes, counters,
// decay clock and evolution of a namespace are its own (nsState). A
// record id of another namespace is not found; the same id may even exist
// in two namespaces as two records.
//
// A namespace exists once something was written to it (the store's
// registry numbers it, store.CreateNamespace); reading a namespace that
// does not exist answers as an empty one and creates nothing. The default
// namespace always exists.
//
// What stays engine-wide: the decay clock the background loop advances
// (each namespace adds its own offset, which only its clients' decay
// ticks advance), the background flags, the audit log, and the locks.

// nsState is the engine's in-memory state of one namespace. Everything a
// request reads or writes hangs off it, so a new index implementation
// can be put in per namespace without the operations noticing.
type nsState struct {
	e    *Engine
	id   store.NS
	name string

	// Guarded by Engine.mu.
	st        *state   // curated entries: counts, sums, extremes, edges
	raw       rawState // raw journal counters
	working   *workingStore
	mode      [memory.StoreWorking + 1]memory.RecallMode
	lastTick  time.Time // wall time of the last decay tick of this namespace's clients
	lastDream time.Time // wall time of the last dream tick (zero: never)
	dropped   bool      // the namespace was dropped; late background work skips it

	// The full-text indexes (curated records, raw journal) guard
	// themselves; the vector index is guarded by Engine.vecMu. All three
	// are replaced only while Engine.big is held exclusively.
	indexConfig searchindex.Config
	text        *searchindex.Index
	rawText     *searchindex.Index
	vectors     *vecindex.Index
	snap        snapState // the full-text indexes' change counter and snapshots

	offset  atomic.Uint64 // decay-clock offset in seconds, as float64 bits
	recalls atomic.Uint64 // recall operations, persisted as total_recall_count
	evo     evolution
}

// newNS returns the empty state of namespace id; its indexes are opened
// separately (openNSIndexes).
func (e *Engine) newNS(id store.NS, name string) *nsState {
	ns := &nsState{e: e, id: id, name: name, st: newState(), working: newWorkingStore(e.opts.WorkingCapacity)}
	ns.indexConfig = indexConfig(textindex.NewAnalyzer())
	ns.snap.saved.Store(noSnapshot)
	ns.vectors = vecindex.New(&e.vecMu)
	ns.evo.mu.Init(e.order, "evo.mu", rankLeaf)
	ns.resetSettings()
	return ns
}

// resetSettings puts the namespace's settings back to their defaults.
func (ns *nsState) resetSettings() {
	for _, st := range memory.AllStores() {
		ns.mode[st] = memory.ModeHuman
	}
	ns.lastTick, ns.lastDream = time.Time{}, time.Time{}
	ns.offset.Store(0)
	ns.recalls.Store(0)
	ns.evo.reset()
}

// clock is the namespace's decay-clock reading in seconds: the engine's
// clock plus the namespace's own offset.
func (ns *nsState) clock() float64 {
	return ns.e.clock() + math.Float64frombits(ns.offset.Load())
}

// tickAtLocked is the wall time of the latest decay tick that aged the
// namespace: the background loop's or one of its clients'. Callers hold
// e.mu.
func (ns *nsState) tickAtLocked() time.Time {
	if ns.lastTick.After(ns.e.lastTick) {
		return ns.lastTick
	}
	return ns.e.lastTick
}

// space returns the namespace ctx names, or nil when it does not exist
// (it holds nothing).
func (e *Engine) space(ctx context.Context) *nsState {
	name := memory.NamespaceFrom(ctx)
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.spaces[name]
}

// spaceFor returns the namespace ctx names, creating it when it does not
// exist yet: for operations that write. Callers hold big (shared or
// exclusive), so the namespace cannot be dropped under them.
func (e *Engine) spaceFor(ctx context.Context) (*nsState, error) {
	if ns := e.space(ctx); ns != nil {
		return ns, nil
	}
	return e.createSpace(memory.NamespaceFrom(ctx))
}

// createSpace registers namespace name and sets up its empty state.
func (e *Engine) createSpace(name string) (*nsState, error) {
	if err := memory.ValidateNamespace(name); err != nil {
		return nil, err
	}
	e.nsMu.Lock()
	defer e.nsMu.Unlock()
	e.mu.RLock()
	ns := e.spaces[name]
	e.mu.RUnlock()
	if ns != nil {
		return ns, nil // created meanwhile
	}
	id, err := e.db.CreateNamespace(name)
	if err != nil {
		return nil, fmt.Errorf("namespace %s: %w", name, err)
	}
	ns = e.newNS(id, name)
	if err := e.openNSIndexes(context.Background(), ns); err != nil {
		return nil, fmt.Errorf("namespace %s: %w", name, err)
	}
	e.mu.Lock()
	e.spaces[name] = ns
	e.mu.Unlock()
	e.log.Info("namespace created", "namespace", name)
	return ns, nil
}

// allSpaces lists the namespaces by name.
func (e *Engine) allSpaces() []*nsState {
	e.mu.RLock()
	out := make([]*nsState, 0, len(e.spaces))
	for _, ns := range e.spaces {
		out = append(out, ns)
	}
	e.mu.RUnlock()
	slices.SortFunc(out, func(a, b *nsState) int { return cmp.Compare(a.name, b.name) })
	return out
}

// loadSpaces sets up every namespace of the store: settings, then records
// and raw counters.
func (e *Engine) loadSpaces(ctx context.Context) error {
	start := time.Now()
	e.spaces = map[string]*nsState{}
	records, raws := 0, 0
	for _, n := range e.db.Namespaces() {
		ns := e.newNS(n.ID, n.Name)
		if err := e.loadSettings(ns); err != nil {
			return fmt.Errorf("namespace %s: %w", n.Name, err)
		}
		if err := e.loadRecords(ctx, ns); err != nil {
			return fmt.Errorf("namespace %s: %w", n.Name, err)
		}
		e.spaces[n.Name] = ns
		records += len(ns.st.entries)
		raws += int(ns.raw.total)
	}
	e.log.Debug("engine loaded", "namespaces", len(e.spaces), "records", records, "raw", raws, "took", time.Since(start))
	return nil
}

// loadRecords fills the namespace's in-memory state from the store.
func (e *Engine) loadRecords(ctx context.Context, ns *nsState) error {
	for _, st := range memory.PersistentStores() {
		err := e.db.ScanRecords(ns.id, st, func(rec *memory.MemoryRecord) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			ns.st.put(rec)
			if v := rec.Content.Embedding(); v != nil {
				ns.vectors.Put(rec.ID, v)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("load %s store: %w", st, err)
		}
	}
	err := e.db.ScanRawNewest(ns.id, store.RawRange{}, func(_ memory.ID, f store.RawFlags) (bool, error) {
		ns.raw.add(f)
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("load raw journal: %w", err)
	}
	return nil
}

// loadSettings reads the namespace's persisted settings and counters.
func (e *Engine) loadSettings(ns *nsState) error {
	if err := e.loadOffset(ns); err != nil {
		return fmt.Errorf("load decay clock: %w", err)
	}
	if err := e.loadEvolution(ns); err != nil {
		return fmt.Errorf("load evolution state: %w", err)
	}
	if err := e.loadModes(ns); err != nil {
		return fmt.Errorf("load recall modes: %w", err)
	}
	if err := e.loadCounters(ns); err != nil {
		return fmt.Errorf("load counters: %w", err)
	}
	return nil
}

// nsSettings are the names of the settings every namespace keeps (under
// store.NSMetaKey); a drop of the default namespace deletes them.
func nsSettings() []string {
	return []string{offsetKey, evolutionKey, modeKey, recallCountKey, lastDreamKey, consolidationKey, consolidationDoneKey}
}

// resetLocked empties the namespace's in-memory state (a replacing import, a
// drop of the default namespace). Callers hold e.mu and big exclusively.
func (ns *nsState) resetLocked() {
	ns.st = newState()
	ns.working = newWorkingStore(ns.working.capacity)
	ns.vectors = vecindex.New(&ns.e.vecMu)
	ns.raw = rawState{}
}
