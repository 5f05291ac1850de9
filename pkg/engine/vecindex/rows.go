package vecindex

import (
	"encoding/binary"
	"math/bits"

	"memsvc.dev/memsvc/pkg/memory"
)

// rowTable finds the row of a record in a matrix: open addressing with
// linear probing over row numbers, the ids themselves staying in the
// matrix's ids. It takes 4 bytes per slot, at most 3/4 of the slots used,
// where a map from id to row takes some 40 bytes per row.
type rowTable struct {
	slots []uint32 // rowEmpty, rowDeleted, or row + rowBase
	used  int      // slots not empty (live and deleted)
	live  int
}

const (
	rowEmpty   = 0
	rowDeleted = 1
	rowBase    = 2
)

// newRowTable returns a table with room for n rows.
func newRowTable(n int) rowTable {
	var t rowTable
	if n > 0 {
		t.slots = make([]uint32, tableSize(n))
	}
	return t
}

// tableSize is the number of slots for n rows: a power of two, at most
// half full.
func tableSize(n int) int { return 1 << bits.Len(uint(max(n*2, 8)-1)) }

// hashID mixes both halves of an id: version 7 ids start with a
// timestamp, and tests use ids with few varying bits.
func hashID(id *memory.ID) uint64 {
	h := binary.LittleEndian.Uint64(id[:8])*0x9e3779b97f4a7c15 ^ binary.LittleEndian.Uint64(id[8:])
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	return h ^ h>>32
}

// find returns the row of id, whose ids are those of the matrix.
func (t *rowTable) find(ids []memory.ID, id memory.ID) (int, bool) {
	i, ok := t.slot(ids, id)
	if !ok {
		return 0, false
	}
	return int(t.slots[i] - rowBase), true
}

// slot returns the index of the slot that holds id.
func (t *rowTable) slot(ids []memory.ID, id memory.ID) (uint64, bool) {
	if len(t.slots) == 0 {
		return 0, false
	}
	mask := uint64(len(t.slots) - 1)
	for i := hashID(&id) & mask; ; i = (i + 1) & mask {
		switch v := t.slots[i]; v {
		case rowEmpty:
			return 0, false
		case rowDeleted:
		default:
			if ids[v-rowBase] == id {
				return i, true
			}
		}
	}
}

// insert records row r, whose id (ids[r]) is not in the table.
func (t *rowTable) insert(ids []memory.ID, r int) {
	if (t.used+1)*4 > len(t.slots)*3 {
		t.rehash(ids, t.live+1)
	}
	mask := uint64(len(t.slots) - 1)
	for i := hashID(&ids[r]) & mask; ; i = (i + 1) & mask {
		if v := t.slots[i]; v == rowEmpty || v == rowDeleted {
			if v == rowEmpty {
				t.used++
			}
			t.slots[i] = uint32(r) + rowBase
			t.live++
			return
		}
	}
}

// remove forgets id and returns its row.
func (t *rowTable) remove(ids []memory.ID, id memory.ID) (int, bool) {
	i, ok := t.slot(ids, id)
	if !ok {
		return 0, false
	}
	r := int(t.slots[i] - rowBase)
	t.slots[i] = rowDeleted
	t.live--
	return r, true
}

// rehash rebuilds the table with room for n rows.
func (t *rowTable) rehash(ids []memory.ID, n int) {
	old := t.slots
	t.slots, t.used, t.live = make([]uint32, tableSize(n)), 0, 0
	for _, v := range old {
		if v >= rowBase {
			t.insert(ids, int(v-rowBase))
		}
	}
}
