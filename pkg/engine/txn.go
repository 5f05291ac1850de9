package engine

import (
	"fmt"

	"memsvc.dev/memsvc/pkg/engine/dreamgroup"
	"memsvc.dev/memsvc/pkg/engine/textindex"
	"memsvc.dev/memsvc/pkg/engine/vecindex"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// txn collects one state change: record writes and deletions, the index
// postings that go with them, and what to change in memory once the change
// is durable. Records and postings share one batch when the indexes live
// in the data directory, so a crash can never separate them; when indexes
// are kept in memory only, postings go to a second batch applied right
// after the records (and are rebuilt at start anyway).
type txn struct {
	e  *Engine
	b  *store.Batch // records
	ib *store.Batch // index postings; == b when indexes persist

	changes []pendingChange
	puts    []*memory.MemoryRecord
	touched []*memory.MemoryRecord // written with content, text and vector unchanged
	dels    []memory.ID
	raws    []*memory.RawJournalRecord
	rawOld  map[memory.ID]*memory.RawJournalRecord
	// replace: the change starts from empty stores (an import that
	// replaces everything); the in-memory state is reset before applying.
	replace bool
	// event is the audit entry of the change, if any.
	event *auditEvent
}

// clear empties a full-text index within the change.
func (t *txn) clear(ix *textindex.Index) {
	t.changes = append(t.changes, pendingChange{ix, ix.Clear(t.ib)})
}

type pendingChange struct {
	ix *textindex.Index
	c  textindex.Change
}

func (e *Engine) begin() *txn {
	t := &txn{e: e, b: e.db.NewBatch()}
	if e.idx.db == e.db {
		t.ib = t.b
	} else {
		t.ib = e.idx.db.NewBatch()
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
	if rec.Store != memory.StoreWorking {
		t.b.PutRecord(store.DefaultNS, rec)
	}
	put := t.e.idx.text.Put
	if fresh {
		put = t.e.idx.text.PutNew
	}
	c, err := put(t.ib, rec.ID, nil, recordTexts(rec)...)
	if err != nil {
		return fmt.Errorf("index record %s: %w", rec.ID, err)
	}
	t.changes = append(t.changes, pendingChange{t.e.idx.text, c})
	t.puts = append(t.puts, rec)
	return nil
}

// touchRecord writes a curated record whose indexed text is unchanged (a
// reinforcement, new or removed links): its postings stay as they are,
// which spares re-analysing the text and rewriting every posting.
func (t *txn) touchRecord(rec *memory.MemoryRecord) {
	if rec.Store != memory.StoreWorking {
		t.b.PutRecord(store.DefaultNS, rec)
	}
	t.touched = append(t.touched, rec)
}

// moveRecord is putRecord for a record that changed stores (a promoted
// working record): the copy under the old store is removed.
func (t *txn) moveRecord(rec *memory.MemoryRecord, from memory.StoreType) error {
	if from != memory.StoreWorking && from != rec.Store {
		t.b.DeleteRecord(store.DefaultNS, from, rec.ID)
	}
	return t.putRecord(rec)
}

// deleteRecord removes a curated record and its postings.
func (t *txn) deleteRecord(id memory.ID, st memory.StoreType) error {
	if st != memory.StoreWorking {
		t.b.DeleteRecord(store.DefaultNS, st, id)
	}
	c, err := t.e.idx.text.Delete(t.ib, id)
	if err != nil {
		return fmt.Errorf("unindex record %s: %w", id, err)
	}
	t.changes = append(t.changes, pendingChange{t.e.idx.text, c})
	t.dels = append(t.dels, id)
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
	t.b.PutRaw(store.DefaultNS, rec, old)
	put := t.e.idx.raw.Put
	if fresh {
		put = t.e.idx.raw.PutNew
	}
	c, err := put(t.ib, rec.ID, rawAttrs(rec), dreamgroup.Texts(rec)...)
	if err != nil {
		return fmt.Errorf("index raw record %s: %w", rec.ID, err)
	}
	t.changes = append(t.changes, pendingChange{t.e.idx.raw, c})
	t.raws = append(t.raws, rec)
	if old != nil {
		if t.rawOld == nil {
			t.rawOld = make(map[memory.ID]*memory.RawJournalRecord)
		}
		t.rawOld[rec.ID] = old
	}
	return nil
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
	if t.replace {
		e.st = newState()
		e.working = newWorkingStore(e.working.capacity)
		e.vectors = vecindex.New(&e.vecMu)
		e.raw = rawState{}
	}
	for _, id := range t.dels {
		e.working.delete(id)
		e.st.delete(id)
		e.vectors.Remove(id)
	}
	for _, rec := range t.puts {
		e.applyRecord(rec)
		e.vectors.Put(rec.ID, rec.Content.Embedding())
	}
	for _, rec := range t.touched {
		e.applyRecord(rec) // its vector row is unchanged
	}
	for _, rec := range t.raws {
		if old := t.rawOld[rec.ID]; old != nil {
			e.raw.remove(store.FlagsOf(old))
		}
		e.raw.add(store.FlagsOf(rec))
	}
	return nil
}

// applyRecord puts a committed record into the in-memory state.
func (e *Engine) applyRecord(rec *memory.MemoryRecord) {
	if rec.Store == memory.StoreWorking {
		e.working.set(rec)
	} else {
		e.working.delete(rec.ID)
	}
	e.st.put(rec)
}
