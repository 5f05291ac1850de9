package engine

import (
	"cmp"
	"slices"
	"sync/atomic"
	"time"

	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/engine/internal/lockorder"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// Write-behind of recall side effects.
//
// A recall with reconsolidation changes the records it returns: access
// count and time, reinforcement where due, co-activation of the links
// between them. It used to commit (and sync, and audit) that change before
// answering. Now the changed records take effect in memory at once, in the
// namespace's state (ranking, fidelity) and in a table of pending records
// that every read of a record consults first (Engine.get), and a flusher
// writes them behind: every recallFlushEvery, or sooner once
// recallFlushAt records are pending, in groups of at most
// recallFlushGroup records of one namespace with one audit entry each,
// and one sync per flush. A record recalled several times between two
// flushes is written once, as its last recall encoded it.
//
// What a crash can lose is bounded, and only ever these effects, never a
// stored, updated or forgotten record:
//   - the flusher runs at least every recallFlushEvery, so effects older
//     than that are on disk unless the disk is failing;
//   - a recall that finds recallPendingMax records pending flushes them
//     itself before it changes anything (and fails if they cannot be
//     written), so no more than that many records' effects are ever
//     pending, plus those of the recalls running;
//   - Close flushes everything, and so does every operation that
//     restructures many records (those that hold big exclusively), before
//     it starts, so they work on what the recalls left; an export tries
//     to, and on a full disk goes on without the pending effects.
//
// A write of a record by anything else (update, link, forget, import...)
// happens under the record's lock, reads the record through Engine.get,
// pending effects included, and drops the pending entry when it commits:
// its write carries the effects. The flusher takes the records' locks
// too, so it never writes an effect over a newer version.

// Bounds of the write-behind (see above); docs/design.md states them as
// the loss bound.
const (
	recallFlushEvery = 500 * time.Millisecond
	recallPendingMax = 4096
	// recallFlushAt is the number of records pending at which a recall
	// wakes the flusher before its interval is up. Half the bound: the
	// flusher writes well before a recall would have to, and a record
	// recalled again meanwhile is written once for all its recalls.
	recallFlushAt = recallPendingMax / 2
	// recallFlushGroup bounds the records of one group commit, so the
	// record locks it holds through its commit cover few records.
	recallFlushGroup = 256
)

// writeBehind holds the pending recall effects.
type writeBehind struct {
	mu      lockorder.Mutex // guards pending
	pending map[nsID]*pendingRecall

	every time.Duration // flush interval
	max   int           // records pending before a recall flushes itself
	at    int           // records pending at which a recall wakes the flusher

	tries atomic.Uint64 // flushes the flusher has tried (tests)

	wake chan struct{}
	stop chan struct{}
	done chan struct{}
}

// pendingRecall is a record changed by recalls and not yet written.
type pendingRecall struct {
	rec        []byte // store.EncodeRecord of the record as changed
	store      memory.StoreType
	recalls    int // recalls that changed it since the last write
	reinforced int // of which reinforced it
}

func (e *Engine) startWriteBehind() {
	w := &writeBehind{pending: map[nsID]*pendingRecall{}, every: recallFlushEvery, max: recallPendingMax,
		at: recallFlushAt, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if e.opts.recallFlushEvery > 0 {
		w.every = e.opts.recallFlushEvery
	}
	if e.opts.recallPendingMax > 0 {
		w.max = e.opts.recallPendingMax
	}
	if e.opts.recallFlushAt > 0 {
		w.at = e.opts.recallFlushAt
	}
	w.mu.Init(e.order, "wb.mu", rankLeaf)
	e.wb = w
	go e.runFlusher()
}

// runFlusher flushes the pending effects every interval, or sooner when a
// recall asks.
func (e *Engine) runFlusher() {
	w := e.wb
	defer close(w.done)
	tick := time.NewTicker(w.every)
	defer tick.Stop()
	failing := false // log when writing stops and resumes, not every try
	for {
		select {
		case <-w.stop:
			return
		case <-tick.C:
		case <-w.wake:
		}
		err := e.flushRecallsShared()
		w.tries.Add(1)
		switch {
		case err != nil && !failing:
			e.log.Error("cannot write recall effects; they stay pending and are tried again (recalls fail once the bound is reached)", "err", err)
		case err == nil && failing:
			e.log.Info("writing recall effects again")
		}
		failing = err != nil
	}
}

// stopWriteBehind stops the flusher and writes what is pending.
func (e *Engine) stopWriteBehind() error {
	close(e.wb.stop)
	<-e.wb.done
	e.big.Lock()
	defer e.big.Unlock()
	return e.flushRecalls()
}

// holdRecalls records the effects of a recall on recs, whose locks the
// caller holds (reinforced[i] tells whether recs[i] was reinforced),
// applies them to the namespace's state, and wakes the flusher once
// enough records are pending. One recall takes the engine's state lock
// and the table's once, whatever the number of its records.
func (e *Engine) holdRecalls(ns *nsState, recs []*memory.MemoryRecord, reinforced []bool) {
	encs := make([][]byte, len(recs))
	for i, rec := range recs {
		encs[i] = store.EncodeRecord(rec)
	}
	e.mu.Lock()
	for _, rec := range recs {
		applyRecord(ns, rec)
	}
	e.mu.Unlock()
	w := e.wb
	w.mu.Lock()
	for i, rec := range recs {
		k := nsID{ns, rec.ID}
		p := w.pending[k]
		if p == nil {
			p = &pendingRecall{}
			w.pending[k] = p
		}
		p.rec, p.store = encs[i], rec.Store
		p.recalls++
		if reinforced[i] {
			p.reinforced++
		}
	}
	n := len(w.pending)
	w.mu.Unlock()
	if n >= w.at {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// pendingRecord is the record id of namespace ns as recalls left it, if
// they changed it since it was last written.
func (e *Engine) pendingRecord(ns *nsState, id memory.ID) (*memory.MemoryRecord, bool, error) {
	w := e.wb
	w.mu.Lock()
	p := w.pending[nsID{ns, id}]
	var enc []byte
	if p != nil {
		enc = p.rec
	}
	w.mu.Unlock()
	if enc == nil {
		return nil, false, nil
	}
	rec, err := store.DecodeRecord(enc)
	return rec, err == nil, err
}

// wrote drops the pending effects of records a commit wrote: the commit
// carried them. Callers hold the records' locks, or big exclusively.
func (e *Engine) wrote(ns *nsState, id memory.ID) {
	if e.wb == nil {
		return
	}
	e.wb.mu.Lock()
	delete(e.wb.pending, nsID{ns, id})
	e.wb.mu.Unlock()
}

// makeRoom is called before a recall with reconsolidation takes its
// record locks: with the bound reached it writes the pending effects
// first (the caller holds big shared), and fails, changing nothing, when
// they cannot be written.
func (e *Engine) makeRoom() error {
	w := e.wb
	w.mu.Lock()
	n := len(w.pending)
	w.mu.Unlock()
	if n < w.max {
		return nil
	}
	return e.flushRecalls()
}

// flushRecalls writes the pending effects, in groups of at most
// recallFlushGroup records of one namespace, and syncs them. Callers hold
// big, shared or exclusively. Effects that arrive while it runs may wait
// for the next flush.
func (e *Engine) flushRecalls() error {
	wrote, err := e.writeRecalls()
	if !wrote || err != nil {
		return err
	}
	return e.syncWAL()
}

// flushRecallsShared is flushRecalls for a caller that holds no lock of
// the engine: it writes holding big shared and syncs once it has let go,
// since an operation waiting for big exclusively would otherwise keep
// every new recall waiting through the sync too.
func (e *Engine) flushRecallsShared() error {
	e.big.RLock()
	wrote, err := e.writeRecalls()
	e.big.RUnlock()
	if !wrote || err != nil {
		return err
	}
	return e.syncWAL()
}

// writeRecalls is flushRecalls without the sync: the groups are committed
// lazily (beginLazy), so that no group holds its records' locks through a
// sync, which would keep every recall of those records waiting. It
// reports whether it committed anything; the caller syncs it (syncWAL).
//
// The records of a namespace are grouped in the order of their lock
// stripes, so that a group holds the locks of a few stripes rather than
// of all of them, and a recall of records on other stripes goes on
// meanwhile.
func (e *Engine) writeRecalls() (bool, error) {
	w := e.wb
	w.mu.Lock()
	byNS := map[*nsState][]memory.ID{}
	for k := range w.pending {
		byNS[k.ns] = append(byNS[k.ns], k.id)
	}
	w.mu.Unlock()
	wrote := false
	for ns, ids := range byNS {
		if len(ids) > recallFlushGroup {
			e.sortByStripe(ids)
		}
		for len(ids) > 0 {
			n := min(len(ids), recallFlushGroup)
			ok, err := e.flushGroup(ns, ids[:n])
			wrote = wrote || ok
			if err != nil {
				return wrote, err
			}
			ids = ids[n:]
		}
	}
	return wrote, nil
}

// sortByStripe orders ids by their lock stripe.
func (e *Engine) sortByStripe(ids []memory.ID) {
	type striped struct {
		stripe int
		id     memory.ID
	}
	s := make([]striped, len(ids))
	for i, id := range ids {
		s[i] = striped{e.stripe(id), id}
	}
	slices.SortFunc(s, func(a, b striped) int { return cmp.Compare(a.stripe, b.stripe) })
	for i := range s {
		ids[i] = s[i].id
	}
}

// flushGroup writes the pending effects on records ids of namespace ns in
// one lazy commit with one audit entry, and reports whether it committed.
// The records go to the store as the recalls encoded them: they are
// neither decoded nor encoded again, and the namespace's state already
// holds them (holdRecalls).
func (e *Engine) flushGroup(ns *nsState, ids []memory.ID) (bool, error) {
	defer e.lockRecords(ids)()
	w := e.wb
	group := make([]*pendingRecall, 0, len(ids))
	written := make([]memory.ID, 0, len(ids))
	w.mu.Lock()
	for _, id := range ids {
		if p := w.pending[nsID{ns, id}]; p != nil { // else written by someone else meanwhile
			group = append(group, p)
			written = append(written, id)
		}
	}
	w.mu.Unlock()
	// A record that moved or went by a way that does not pass through
	// the pending table took its effects with it.
	var gone []memory.ID
	n := 0
	e.mu.RLock()
	for i, id := range written {
		ent, ok := ns.st.entries[id]
		if !ok || ent.store != group[i].store || ns.dropped {
			gone = append(gone, id)
			continue
		}
		group[n], written[n] = group[i], id
		n++
	}
	e.mu.RUnlock()
	group, written = group[:n], written[:n]
	for _, id := range gone {
		e.wrote(ns, id)
	}
	if n == 0 {
		return false, nil
	}
	t := e.beginLazy(ns)
	defer t.close()
	stores := make([]memory.StoreType, n)
	recalls, reinforced := 0, 0
	for i, p := range group {
		if p.store != memory.StoreWorking { // working records live in memory only
			t.b.PutEncodedRecord(ns.id, p.store, written[i], p.rec)
		}
		stores[i] = p.store
		recalls += p.recalls
		reinforced += p.reinforced
	}
	t.b.PutNSMeta(ns.id, recallCountKey, uint64Bytes(ns.recalls.Load()))
	t.audit(audit.OpRecallReconsolidate, written, stores,
		map[string]any{"records": n, "recalls": recalls, "reinforced": reinforced})
	if err := t.commit(); err != nil {
		return true, err
	}
	// The locks held since the table was read kept every entry as it
	// was written.
	w.mu.Lock()
	for _, id := range written {
		delete(w.pending, nsID{ns, id})
	}
	w.mu.Unlock()
	return true, nil
}
