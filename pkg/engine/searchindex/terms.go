package searchindex

import (
	"hash/maphash"
	"math/bits"
)

// termTable finds a term's id from its text: open addressing with linear
// probing over term ids, the texts themselves staying in core.texts. A
// slot holds the id and the upper half of the text's hash, so a probe
// compares texts only when the hashes agree. It takes 8 bytes per slot, at
// most 3/4 of the slots used, where a map from text to id takes some 40
// bytes per term besides the text. Terms are never removed (compaction
// builds a new core).
type termTable struct {
	seed  maphash.Seed
	slots []uint64 // 0 for an empty slot, else hash>>32<<32 | term id (never gapTerm)
	n     int
}

func newTermTable(n int) termTable {
	t := termTable{seed: maphash.MakeSeed()}
	t.slots = make([]uint64, termTableSize(n))
	return t
}

// termTableSize is the number of slots for n terms: a power of two, at
// most half full.
func termTableSize(n int) int { return 1 << bits.Len(uint(max(n*2, 8)-1)) }

// find returns the id of term s, whose texts are texts.
func (t *termTable) find(texts []string, s string) (uint32, bool) {
	mask := uint64(len(t.slots) - 1)
	h := maphash.String(t.seed, s)
	for i := h & mask; ; i = (i + 1) & mask {
		v := t.slots[i]
		if v == 0 {
			return 0, false
		}
		if v>>32 == h>>32 && texts[uint32(v)] == s {
			return uint32(v), true
		}
	}
}

// insert records term id, whose text (texts[id]) is not in the table.
func (t *termTable) insert(texts []string, id uint32) {
	if (t.n+1)*4 > len(t.slots)*3 {
		old := t.slots
		t.slots, t.n = make([]uint64, termTableSize(t.n+1)), 0
		for _, v := range old {
			if v != 0 {
				t.insert(texts, uint32(v))
			}
		}
	}
	mask := uint64(len(t.slots) - 1)
	h := maphash.String(t.seed, texts[id])
	for i := h & mask; ; i = (i + 1) & mask {
		if t.slots[i] == 0 {
			t.slots[i] = h>>32<<32 | uint64(id)
			t.n++
			return
		}
	}
}
