package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"sync"
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
	// savedRecalls is the recall count the store held when the namespace
	// was loaded, or unsavedRecalls once a reset made that unknown; Close
	// writes the count only when it differs.
	savedRecalls atomic.Uint64
	evo          evolution
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
	ns.savedRecalls.Store(unsavedRecalls)
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

// isDropped tells whether namespace ns was dropped, for background work
// that got hold of it earlier and must now skip it.
func (e *Engine) isDropped(ns *nsState) bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return ns.dropped
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

// loadSpaces sets up every namespace of the store with its settings;
// openIndexes then loads their records and indexes.
func (e *Engine) loadSpaces() error {
	e.spaces = map[string]*nsState{}
	for _, n := range e.db.Namespaces() {
		ns := e.newNS(n.ID, n.Name)
		if err := e.loadSettings(ns); err != nil {
			return fmt.Errorf("namespace %s: %w", n.Name, err)
		}
		e.spaces[n.Name] = ns
	}
	return nil
}

// storeLoad is what a start reads from a batch of consecutive records of
// one curated store.
type storeLoad struct {
	seq     int // of the batch in the scan
	ids     []memory.ID
	entries []*entry
	vectors map[int]*rowSet // normalised embeddings by dimension
	text    *searchindex.Batch
}

// rowSet holds normalised vectors of one dimension in chunks, each
// allocated once at its full size (as many rows as came before, from
// minRowChunk up to maxRowChunk), so loading copies every vector once
// more, into the index's matrix, and no more.
type rowSet struct {
	ids    []memory.ID
	chunks [][]float32
}

const (
	minRowChunk = 64
	maxRowChunk = 1024
)

// add appends v normalised (a zero vector is left out, as
// vecindex.Index.Put leaves it).
func (rs *rowSet) add(id memory.ID, v []float32) {
	n := len(rs.chunks)
	if n == 0 || len(rs.chunks[n-1]) == cap(rs.chunks[n-1]) {
		rows := min(maxRowChunk, max(minRowChunk, len(rs.ids)))
		rs.chunks = append(rs.chunks, make([]float32, 0, rows*len(v)))
		n++
	}
	var ok bool
	if rs.chunks[n-1], ok = vecindex.AppendNormalized(rs.chunks[n-1], v); ok {
		rs.ids = append(rs.ids, id)
	}
}

// putVectors gives the index the vectors of every store, in store order,
// one matrix per dimension copied from the chunks once.
func putVectors(x *vecindex.Index, loads []storeLoad) {
	dims := map[int]int{} // rows by dimension
	for i := range loads {
		for dim, rs := range loads[i].vectors {
			dims[dim] += len(rs.ids)
		}
	}
	for _, dim := range slices.Sorted(maps.Keys(dims)) {
		ids := make([]memory.ID, 0, dims[dim])
		rows := make([]float32, 0, dims[dim]*dim)
		for i := range loads {
			if rs := loads[i].vectors[dim]; rs != nil {
				ids = append(ids, rs.ids...)
				for j, c := range rs.chunks {
					rows = append(rows, c...)
					rs.chunks[j] = nil
				}
			}
		}
		x.AdoptRows(dim, ids, rows)
	}
}

// loadRecords fills the namespace's in-memory state (entries, vectors,
// raw counters) from the store, and with text set adds the index document
// of every record to it, so a start without a usable index snapshot
// decodes each record once. The curated records are read in store order
// and decoded, turned into entries and analysed for the index by one
// worker per core (store.DB.ScanRecordsParallel), the raw journal's flags
// beside them; this goroutine puts the batches in place in the order of
// a sequential read, as they come.
func (e *Engine) loadRecords(ctx context.Context, ns *nsState, text *searchindex.Builder) error {
	workers := runtime.GOMAXPROCS(0)
	type worker struct {
		an   *searchindex.Analyser
		memo timeTermsMemo
	}
	ws := make([]worker, workers)
	for i := range ws {
		ws[i].memo = timeTermsMemo{}
		if text != nil {
			ws[i].an = text.Analyser()
		}
	}
	var (
		raw     rawState
		rawErr  error
		scanErr error
		wg      sync.WaitGroup
		batches = make(chan *storeLoad, workers)
	)
	wg.Go(func() {
		err := e.db.ScanRawNewest(ns.id, store.RawRange{}, func(_ memory.ID, f store.RawFlags) (bool, error) {
			raw.add(f)
			return true, nil
		})
		if err != nil {
			rawErr = fmt.Errorf("load raw journal: %w", err)
		}
	})
	wg.Go(func() {
		defer close(batches)
		scanErr = e.db.ScanRecordsParallel(ns.id, memory.PersistentStores(), workers, func(w int, b *store.RecordBatch) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			batches <- loadBatch(b, ws[w].an, ws[w].memo)
			return nil
		})
	})
	err := e.putBatches(ns, batches, text)
	wg.Wait()
	if err := errors.Join(scanErr, rawErr, err); err != nil {
		return err
	}
	ns.st.recent.build(ns.st.entries)
	ns.raw = raw
	return nil
}

// loadBatch turns a batch of decoded records into entries, normalised
// vectors and, with an analyser, the analysed index documents.
func loadBatch(b *store.RecordBatch, an *searchindex.Analyser, memo timeTermsMemo) *storeLoad {
	l := &storeLoad{
		seq:     b.Seq,
		ids:     make([]memory.ID, 0, len(b.Records)),
		entries: make([]*entry, 0, len(b.Records)),
	}
	for _, rec := range b.Records {
		l.ids = append(l.ids, rec.ID)
		l.entries = append(l.entries, entryOf(rec))
		if v := rec.Content.Embedding(); len(v) > 0 {
			if l.vectors == nil {
				l.vectors = map[int]*rowSet{}
			}
			rs := l.vectors[len(v)]
			if rs == nil {
				rs = &rowSet{}
				l.vectors[len(v)] = rs
			}
			rs.add(rec.ID, v)
		}
		if an != nil {
			an.Add(curatedDocWith(rec, memo))
		}
	}
	if an != nil {
		l.text = an.Batch()
	}
	return l
}

// putBatches puts the batches loadRecords sends in place in the order of
// the scan, whatever order they come in: their entries, and their
// documents into text; then every vector at once. It reads batches until
// it is closed, also after an error.
func (e *Engine) putBatches(ns *nsState, batches <-chan *storeLoad, text *searchindex.Builder) error {
	pending := map[int]*storeLoad{}
	var done []storeLoad // in scan order, for their vectors
	var err error
	for l := range batches {
		pending[l.seq] = l
		for {
			l, ok := pending[len(done)]
			if !ok {
				break
			}
			delete(pending, l.seq)
			done = append(done, storeLoad{vectors: l.vectors})
			if err != nil {
				continue
			}
			if text != nil {
				if err = text.Add(l.text); err != nil {
					err = fmt.Errorf("text index: %w", err)
					continue
				}
			}
			for j, id := range l.ids {
				ns.st.putEntry(id, l.entries[j], false)
			}
		}
	}
	if err != nil {
		return err
	}
	putVectors(ns.vectors, done)
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

// setting takes the result of reading a persisted setting (DB.GetMeta,
// DB.GetNSMeta): ok is true when the setting is stored and was read, and
// a setting never written is no error.
func setting(v []byte, err error) (_ []byte, ok bool, _ error) {
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	return v, err == nil, err
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
	ns.savedRecalls.Store(unsavedRecalls)
}
