package searchindex

import (
	"encoding/binary"
	"math/bits"

	"memsvc.dev/memsvc/pkg/memory"
)

// idTable finds a document's number from its id: open addressing with
// linear probing over document numbers, the ids themselves staying in the
// document table. It takes 4 bytes per slot, at most 3/4 of the slots
// used, where a map would take some 40 bytes per document.
type idTable struct {
	slots []uint32 // idEmpty, idDeleted, or document number + idBase
	used  int      // slots not empty (live and deleted)
	live  int
}

const (
	idEmpty   = 0
	idDeleted = 1
	idBase    = 2
)

// hashID mixes both halves of an id: version 7 ids start with a
// timestamp, and the engine's tests use ids with few varying bits.
func hashID(id *memory.ID) uint64 {
	h := binary.LittleEndian.Uint64(id[:8])*0x9e3779b97f4a7c15 ^ binary.LittleEndian.Uint64(id[8:])
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	return h ^ h>>32
}

// find returns the number of the live document with id.
func (t *idTable) find(docs []docEntry, id memory.ID) (uint32, bool) {
	i, ok := t.slot(docs, id)
	if !ok {
		return 0, false
	}
	return t.slots[i] - idBase, true
}

// slot returns the index of the slot that holds id.
func (t *idTable) slot(docs []docEntry, id memory.ID) (uint64, bool) {
	if len(t.slots) == 0 {
		return 0, false
	}
	mask := uint64(len(t.slots) - 1)
	for i := hashID(&id) & mask; ; i = (i + 1) & mask {
		switch v := t.slots[i]; v {
		case idEmpty:
			return 0, false
		case idDeleted:
		default:
			if docs[v-idBase].id == id {
				return i, true
			}
		}
	}
}

// insert records document n, whose id is not in the table.
func (t *idTable) insert(docs []docEntry, n uint32) {
	if (t.used+1)*4 > len(t.slots)*3 {
		t.rehash(docs, t.live+1)
	}
	mask := uint64(len(t.slots) - 1)
	for i := hashID(&docs[n].id) & mask; ; i = (i + 1) & mask {
		if v := t.slots[i]; v == idEmpty || v == idDeleted {
			if v == idEmpty {
				t.used++
			}
			t.slots[i] = n + idBase
			t.live++
			return
		}
	}
}

// remove forgets the live document with id and returns its number.
func (t *idTable) remove(docs []docEntry, id memory.ID) (uint32, bool) {
	i, ok := t.slot(docs, id)
	if !ok {
		return 0, false
	}
	n := t.slots[i] - idBase
	t.slots[i] = idDeleted
	t.live--
	return n, true
}

// rehash rebuilds the table with room for n live documents.
func (t *idTable) rehash(docs []docEntry, n int) {
	size := 1 << bits.Len(uint(max(n*2, 8)-1)) // at most half full after
	old := t.slots
	t.slots, t.used, t.live = make([]uint32, size), 0, 0
	for _, v := range old {
		if v >= idBase {
			t.insert(docs, v-idBase)
		}
	}
}
