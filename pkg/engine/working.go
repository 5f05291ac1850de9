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

// get returns a copy of the record so callers may change it freely.
func (w *workingStore) get(id memory.ID) *memory.MemoryRecord {
	rec, ok := w.recs[id]
	if !ok {
		return nil
	}
	c := *rec
	return &c
}

// set stores a copy of rec; the caller has made room (see planWorking).
func (w *workingStore) set(rec *memory.MemoryRecord) {
	c := *rec
	w.recs[rec.ID] = &c
}

func (w *workingStore) delete(id memory.ID) { delete(w.recs, id) }

func (w *workingStore) all() []*memory.MemoryRecord {
	out := make([]*memory.MemoryRecord, 0, len(w.recs))
	for _, r := range w.recs {
		c := *r
		out = append(out, &c)
	}
	return out
}

// compareIDs orders record ids by their bytes, which for UUIDv7 ids is
// creation order.
func compareIDs(a, b memory.ID) int { return bytes.Compare(a[:], b[:]) }
