package engine

import (
	"bytes"

	"memsvc.dev/memsvc/pkg/memory"
)

// workingStore is the volatile store: a handful of records in memory only.
// When it is full, storing one more moves the least recently accessed
// record to the episodic store instead of losing it. Guarded by Engine.mu.
type workingStore struct {
	capacity int
	recs     map[memory.ID]*memory.MemoryRecord
}

func newWorkingStore(capacity int) *workingStore {
	return &workingStore{capacity: capacity, recs: make(map[memory.ID]*memory.MemoryRecord, capacity)}
}

// get returns a deep copy of the record, so callers may change it freely
// (a recall changes its edges in place) and a record handed out never
// changes under its reader.
func (w *workingStore) get(id memory.ID) *memory.MemoryRecord {
	rec, ok := w.recs[id]
	if !ok {
		return nil
	}
	return memory.CloneRecord(rec)
}

// set stores a deep copy of rec; the caller has made room (see
// planWorking).
func (w *workingStore) set(rec *memory.MemoryRecord) {
	w.recs[rec.ID] = memory.CloneRecord(rec)
}

func (w *workingStore) delete(id memory.ID) { delete(w.recs, id) }

func (w *workingStore) all() []*memory.MemoryRecord {
	out := make([]*memory.MemoryRecord, 0, len(w.recs))
	for _, r := range w.recs {
		out = append(out, memory.CloneRecord(r))
	}
	return out
}

// compareIDs orders record ids by their bytes, which for UUIDv7 ids is
// creation order.
func compareIDs(a, b memory.ID) int { return bytes.Compare(a[:], b[:]) }
