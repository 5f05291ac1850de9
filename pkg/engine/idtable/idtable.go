// Package idtable finds where a record id sits in a slice of ids its
// caller owns: the row of a vector in a matrix, a document's index in a
// ranking stage, a candidate's in a recall. A Table holds indexes only,
// 4 bytes a slot, the ids themselves staying in the caller's slice,
// where a map from id to index takes some 40 bytes an entry and a hash
// of the whole id per lookup.
package idtable

import (
	"encoding/binary"
	"math/bits"

	"memsvc.dev/memsvc/pkg/memory"
)

// Table is an open-addressing table with linear probing over indexes of
// a slice of ids, at most 3/4 of its slots used (live and deleted). The
// zero Table is empty and ready to use. Every method takes the caller's
// ids, the same slice (or a longer one with the same prefix) each time.
type Table struct {
	slots []uint32 // empty, deleted, or index + base
	used  int      // slots not empty
	live  int
}

const (
	empty   = 0
	deleted = 1
	base    = 2
)

// New returns a table with room for n ids before it grows.
func New(n int) Table {
	var t Table
	if n > 0 {
		t.slots = make([]uint32, size(n))
	}
	return t
}

// size is the number of slots for n ids: a power of two, at most half
// full.
func size(n int) int { return 1 << bits.Len(uint(max(n*2, 8)-1)) }

// hash mixes both halves of an id: version 7 ids start with a timestamp,
// and tests use ids with few varying bits.
func hash(id *memory.ID) uint64 {
	h := binary.LittleEndian.Uint64(id[:8])*0x9e3779b97f4a7c15 ^ binary.LittleEndian.Uint64(id[8:])
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	return h ^ h>>32
}

// Len is the number of ids in the table.
func (t *Table) Len() int { return t.live }

// Find returns the index of id in ids.
func (t *Table) Find(ids []memory.ID, id memory.ID) (int, bool) {
	i, ok := t.slot(ids, id)
	if !ok {
		return 0, false
	}
	return int(t.slots[i] - base), true
}

// slot returns the slot that holds id.
func (t *Table) slot(ids []memory.ID, id memory.ID) (uint64, bool) {
	if len(t.slots) == 0 {
		return 0, false
	}
	mask := uint64(len(t.slots) - 1)
	for i := hash(&id) & mask; ; i = (i + 1) & mask {
		switch v := t.slots[i]; v {
		case empty:
			return 0, false
		case deleted:
		default:
			if ids[v-base] == id {
				return i, true
			}
		}
	}
}

// Insert records index i, whose id (ids[i]) is not in the table.
func (t *Table) Insert(ids []memory.ID, i int) {
	if (t.used+1)*4 > len(t.slots)*3 {
		t.rehash(ids, t.live+1)
	}
	mask := uint64(len(t.slots) - 1)
	for s := hash(&ids[i]) & mask; ; s = (s + 1) & mask {
		if v := t.slots[s]; v == empty || v == deleted {
			if v == empty {
				t.used++
			}
			t.slots[s] = uint32(i) + base
			t.live++
			return
		}
	}
}

// Remove forgets id and returns its index.
func (t *Table) Remove(ids []memory.ID, id memory.ID) (int, bool) {
	s, ok := t.slot(ids, id)
	if !ok {
		return 0, false
	}
	i := int(t.slots[s] - base)
	t.slots[s] = deleted
	t.live--
	return i, true
}

// rehash rebuilds the table with room for n ids.
func (t *Table) rehash(ids []memory.ID, n int) {
	old := t.slots
	t.slots, t.used, t.live = make([]uint32, size(n)), 0, 0
	for _, v := range old {
		if v >= base {
			t.Insert(ids, int(v-base))
		}
	}
}
