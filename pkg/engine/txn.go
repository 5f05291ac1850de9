package engine

import (
	"fmt"

	"memsvc.dev/memsvc/pkg/engine/dreamgroup"
	"memsvc.dev/memsvc/pkg/engine/textindex"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// txn collects one state change: record writes and deletions, the index
// postings that go with them, and what to change in memory once the change
// is durable. Records and postings share one batch when the indexes live
// in the data directory, so a crash can never separate them; when indexes
// are kept in memory only, postings go to a second batch applied right
// after the records (and are rebuilt at start anyway).
//
// Writes go to namespace ns; an import that writes several namespaces
// switches it between writes.
type txn struct {
	e  *Engine
	ns *nsState
	b  *store.Batch // records
	ib *store.Batch // index postings; == b when indexes persist

	changes []pendingChange
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
func (t *txn) clear(ix *textindex.Index) {
	t.changes = append(t.changes, pendingChange{ix, ix.Clear(t.ib)})
}

type pendingChange struct {
	ix *textindex.Index
	c  textindex.Change
}

// begin starts a change of namespace ns (nil for a change that belongs to
// no namespace, such as an engine-wide decay tick).
func (e *Engine) begin(ns *nsState) *txn {
	t := &txn{e: e, ns: ns, b: e.db.NewBatch()}
	if e.idxDB == e.db {
		t.ib = t.b
	} else {
		t.ib = e.idxDB.NewBatch()
	}
	return t
}

func (t *txn) close() {
	t.b.Close()
	if t.ib != t.b {
		t.ib.Close()
	}
}

// putRecord writes a new or changed curated record and its postings.
func (t *txn) putRecord(rec *memory.MemoryRecord) error {
	return t.writeRecord(rec, false)
}

// putNewRecord is putRecord for a record whose id the engine has just
// generated: it is not indexed yet, so the index skips looking it up.
func (t *txn) putNewRecord(rec *memory.MemoryRecord) error {
	return t.writeRecord(rec, true)
}

func (t *txn) writeRecord(rec *memory.MemoryRecord, fresh bool) error {
	ns := t.ns
	if rec.Store != memory.StoreWorking {
		t.b.PutRecord(ns.id, rec)
	}
	put := ns.text.Put
	if fresh {
		put = ns.text.PutNew
	}
	c, err := put(t.ib, rec.ID, nil, recordTexts(rec)...)
	if err != nil {
		return fmt.Errorf("index record %s: %w", rec.ID, err)
	}
	t.changes = append(t.changes, pendingChange{ns.text, c})
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
	c, err := ns.text.Delete(t.ib, id)
	if err != nil {
		return fmt.Errorf("unindex record %s: %w", id, err)
	}
	t.changes = append(t.changes, pendingChange{ns.text, c})
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

func (t *txn) writeRaw(rec, old *memory.RawJournalRecord, fresh bool) error {
	ns := t.ns
	t.b.PutRaw(ns.id, rec, old)
	put := ns.rawText.Put
	if fresh {
		put = ns.rawText.PutNew
	}
	c, err := put(t.ib, rec.ID, rawAttrs(rec), dreamgroup.Texts(rec)...)
	if err != nil {
		return fmt.Errorf("index raw record %s: %w", rec.ID, err)
	}
	t.changes = append(t.changes, pendingChange{ns.rawText, c})
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

// commit makes the change durable, then updates the in-memory state.
func (t *txn) commit() error {
	switch {
	case t.e.aud != nil && t.event != nil:
		if err := t.commitAudited(); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
	case !t.b.Empty():
		if err := t.b.Commit(); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
	}
	if t.ib != t.b && !t.ib.Empty() {
		if err := t.ib.CommitNoSync(); err != nil {
			// The records are durable; the in-memory index is rebuilt
			// at the next start. Search may miss these records until then.
			t.e.log.Error("in-memory index update lost", "err", err)
		}
	}
	for _, pc := range t.changes {
		pc.ix.Apply(pc.c)
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
}
