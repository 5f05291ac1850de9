package engine

import (
	"fmt"

	"memsvc.dev/memsvc/pkg/engine/searchindex"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// txn collects one state change: record writes and deletions, and what to
// change in memory once the change is durable, the full-text indexes
// included (they are built from the records at start, so nothing of them
// is written with the records).
//
// Writes go to namespace ns; an import that writes several namespaces
// switches it between writes.
type txn struct {
	e  *Engine
	ns *nsState
	b  *store.Batch // records

	changes []indexChange
	puts    []nsRecord
	touched []nsRecord // written with content, text and vector unchanged
	dels    []nsID
	raws    []nsRaw
	rawOld  map[nsID]*memory.RawJournalRecord
	// reset: namespaces the change empties first (an import that
	// replaces); their in-memory state is reset before applying.
	reset []*nsState
	// event is the audit entry of the change, if any.
	event *auditEvent
	// lazy: commit does not wait for the disk (beginLazy).
	lazy bool
}

type nsRecord struct {
	ns  *nsState
	rec *memory.MemoryRecord
}

type nsID struct {
	ns *nsState
	id memory.ID
}

type nsRaw struct {
	ns  *nsState
	rec *memory.RawJournalRecord
}

// clear empties a full-text index within the change.
func (t *txn) clear(ix *searchindex.Index) {
	t.changes = append(t.changes, indexChange{ns: t.ns, ix: ix, clear: true, durable: true})
}

// indexChange is one change of a full-text index of namespace ns,
// applied once the change is durable: add (or replace) doc, delete del,
// or clear. durable is false for the records of the working store, which
// are indexed but not written.
type indexChange struct {
	ns      *nsState
	ix      *searchindex.Index
	doc     *searchindex.Document
	del     memory.ID
	clear   bool
	durable bool
}

func (c *indexChange) apply() error {
	switch {
	case c.clear:
		c.ix.Clear()
	case c.doc != nil:
		return c.ix.Add(c.doc)
	default:
		c.ix.Delete(c.del)
	}
	return nil
}

// begin starts a change of namespace ns (nil for a change that belongs to
// no namespace, such as an engine-wide decay tick).
func (e *Engine) begin(ns *nsState) *txn {
	return &txn{e: e, ns: ns, b: e.db.NewBatch()}
}

// beginLazy is begin for a change whose commit does not wait for the disk:
// the caller holds big exclusively and must not keep every other request
// waiting through a sync. The change is visible (in memory and to reads of
// the store) once committed, and durable once the caller, after letting
// go of big, calls syncWAL; it reports nothing done before that. A crash
// in between loses the change, so it must be one that a rerun redoes
// (consolidation's journal, consolidate.go), and anything a client writes
// after it is durable only with it: every later synced commit syncs the
// same sequential log.
func (e *Engine) beginLazy(ns *nsState) *txn {
	t := e.begin(ns)
	t.lazy = true
	return t
}

func (t *txn) close() {
	t.b.Close()
}

// putRecord writes a new or changed curated record and its postings.
func (t *txn) putRecord(rec *memory.MemoryRecord) error {
	return t.writeRecord(rec, false)
}

// putNewRecord is putRecord for a record whose id the engine has just
// generated.
func (t *txn) putNewRecord(rec *memory.MemoryRecord) error {
	return t.writeRecord(rec, true)
}

func (t *txn) writeRecord(rec *memory.MemoryRecord, _ bool) error {
	ns := t.ns
	if rec.Store != memory.StoreWorking {
		t.b.PutRecord(ns.id, rec)
	}
	t.changes = append(t.changes, indexChange{ns: ns, ix: ns.text, doc: curatedDoc(rec), durable: rec.Store != memory.StoreWorking})
	t.puts = append(t.puts, nsRecord{ns, rec})
	return nil
}

// touchRecord writes a curated record whose indexed text is unchanged (a
// reinforcement, new or removed links): its postings stay as they are,
// which spares re-analysing the text and rewriting every posting.
func (t *txn) touchRecord(rec *memory.MemoryRecord) {
	if rec.Store != memory.StoreWorking {
		t.b.PutRecord(t.ns.id, rec)
	}
	t.touched = append(t.touched, nsRecord{t.ns, rec})
}

// moveRecord is putRecord for a record that changed stores (a promoted
// working record): the copy under the old store is removed.
func (t *txn) moveRecord(rec *memory.MemoryRecord, from memory.StoreType) error {
	if from != memory.StoreWorking && from != rec.Store {
		t.b.DeleteRecord(t.ns.id, from, rec.ID)
	}
	return t.putRecord(rec)
}

// deleteRecord removes a curated record and its postings.
func (t *txn) deleteRecord(id memory.ID, st memory.StoreType) error {
	ns := t.ns
	if st != memory.StoreWorking {
		t.b.DeleteRecord(ns.id, st, id)
	}
	t.changes = append(t.changes, indexChange{ns: ns, ix: ns.text, del: id, durable: st != memory.StoreWorking})
	t.dels = append(t.dels, nsID{ns, id})
	return nil
}

// putRaw writes a raw journal entry (replacing old, when given) and its
// postings.
func (t *txn) putRaw(rec, old *memory.RawJournalRecord) error {
	return t.writeRaw(rec, old, false)
}

// putNewRaw is putRaw for an entry whose id is known to be new: ingest has
// just looked it up, or generated it.
func (t *txn) putNewRaw(rec *memory.RawJournalRecord) error {
	return t.writeRaw(rec, nil, true)
}

func (t *txn) writeRaw(rec, old *memory.RawJournalRecord, _ bool) error {
	ns := t.ns
	t.b.PutRaw(ns.id, rec, old)
	t.changes = append(t.changes, indexChange{ns: ns, ix: ns.rawText, doc: rawDoc(rec), durable: true})
	t.raws = append(t.raws, nsRaw{ns, rec})
	if old != nil {
		if t.rawOld == nil {
			t.rawOld = make(map[nsID]*memory.RawJournalRecord)
		}
		t.rawOld[nsID{ns, rec.ID}] = old
	}
	return nil
}

// empty deletes every record and raw entry of the current namespace within
// the change and clears its full-text indexes.
func (t *txn) empty() {
	ns := t.ns
	t.b.DeleteAllRecords(ns.id)
	t.clear(ns.text)
	t.clear(ns.rawText)
	t.reset = append(t.reset, ns)
}

// commit makes the change durable (for a lazy change: writes it, see
// beginLazy), then updates the in-memory state.
func (t *txn) commit() error {
	defer t.stampIndexes()()
	switch {
	case t.e.aud != nil && t.event != nil:
		if err := t.commitAudited(); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
	case t.lazy && !t.b.Empty():
		if err := t.b.CommitNoSync(); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
	case !t.b.Empty():
		if err := t.b.Commit(); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
	}
	for i := range t.changes {
		if err := t.changes[i].apply(); err != nil {
			// The records are durable; the index is rebuilt from them at
			// the next start. Search may miss this change until then.
			t.e.log.Error("search index update lost", "err", err)
		}
	}
	e := t.e
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ns := range t.reset {
		ns.resetLocked()
	}
	for _, d := range t.dels {
		e.wrote(d.ns, d.id)
		d.ns.working.delete(d.id)
		d.ns.st.delete(d.id)
		d.ns.remark(d.id)
		d.ns.vectors.Remove(d.id)
	}
	for _, p := range t.puts {
		e.wrote(p.ns, p.rec.ID)
		applyRecord(p.ns, p.rec)
		p.ns.vectors.Put(p.rec.ID, p.rec.Content.Embedding())
	}
	for _, p := range t.touched {
		e.wrote(p.ns, p.rec.ID)
		applyRecord(p.ns, p.rec) // its vector row is unchanged
	}
	for _, r := range t.raws {
		if old := t.rawOld[nsID{r.ns, r.rec.ID}]; old != nil {
			r.ns.raw.remove(store.FlagsOf(old))
		}
		r.ns.raw.add(store.FlagsOf(r.rec))
	}
	return nil
}

// applyRecord puts a committed record into the namespace's in-memory
// state. Callers hold e.mu.
func applyRecord(ns *nsState, rec *memory.MemoryRecord) {
	if rec.Store == memory.StoreWorking {
		ns.working.set(rec)
	} else {
		ns.working.delete(rec.ID)
	}
	ns.st.put(rec)
	ns.remark(rec.ID)
}
