package searchindex

import (
	"encoding/binary"
	"math"

	"memsvc.dev/memsvc/pkg/memory"
)

// blockSize is the number of postings summarised by one block maximum.
const blockSize = 64

// gapTerm is the term id that separates two texts of a field in a
// document's term sequence. Real terms are numbered from 1.
const gapTerm = 0

// arenaChunk is the size of the chunks that hold term sequences.
const arenaChunk = 256 << 10

// core is the index data. Documents, term sequences and the vocabulary
// are append-only: a document is never changed once added (deletion only
// sets its tombstone bit), so a reader that captured slice headers under
// the lock may read what they cover after releasing it (see capture).
type core struct {
	nf      int
	tfBits  uint
	maxDocs uint64

	docs  []docEntry
	dead  []uint64 // tombstones, one bit per document number
	ndead int
	ids   map[memory.ID]uint32
	arena [][]byte // term sequences, uvarint term ids

	termIDs map[string]uint32
	texts   []string // by term id; texts[gapTerm] is ""
	terms   []termEntry

	// Statistics of the live documents.
	live int
	lens [MaxFields]int64

	// overflow holds the term frequencies of postings whose frequencies
	// do not fit the packed word, keyed by term<<32 | doc.
	overflow map[uint64][MaxFields]uint32

	// Scratch space of the writer (used under the write lock only).
	mark  []uint32
	slots []tfSlot
	buf   []byte
}

type docEntry struct {
	id    memory.ID
	attrs Attrs
	seqAt uint64 // chunk<<32 | offset in the chunk
	seqN  uint32
	lens  [MaxFields]uint32
}

// termEntry is the postings of one term: document numbers ascending,
// packed term frequencies, and block maxima.
type termEntry struct {
	df   uint32 // live documents containing the term
	docs []uint32
	tfs  []uint16
	// blocks[i] bounds postings [i*blockSize, (i+1)*blockSize); nil while
	// the list has at most blockSize postings (max is then the bound).
	blocks []blockMax
	max    blockMax // over all postings
}

// blockMax bounds the postings of a block: per field the largest term
// frequency and the shortest field length of a document in which the
// term occurs in that field. Both only grow looser as documents are
// deleted; compaction makes them exact again.
type blockMax struct {
	maxTF  [MaxFields]uint32
	minLen [MaxFields]uint32
}

var emptyBlock = blockMax{minLen: [MaxFields]uint32{math.MaxUint32, math.MaxUint32, math.MaxUint32, math.MaxUint32}}

func (b *blockMax) update(nf int, tf, lens *[MaxFields]uint32) {
	for f := range nf {
		if tf[f] == 0 {
			continue
		}
		b.maxTF[f] = max(b.maxTF[f], tf[f])
		b.minLen[f] = min(b.minLen[f], lens[f])
	}
}

type tfSlot struct {
	term uint32
	tf   [MaxFields]uint32
}

func newCore(nf int) *core {
	return &core{
		nf:       nf,
		tfBits:   uint(16 / nf),
		maxDocs:  math.MaxUint32,
		ids:      make(map[memory.ID]uint32),
		termIDs:  make(map[string]uint32),
		texts:    []string{""},
		terms:    make([]termEntry, 1),
		mark:     make([]uint32, 1),
		overflow: make(map[uint64][MaxFields]uint32),
	}
}

// Term frequencies of a posting are packed into 16 bits, 16/nf bits per
// field; a word of all ones means they are in core.overflow.
const tfOverflow = 0xffff

func (c *core) packTF(term, doc uint32, tf *[MaxFields]uint32) uint16 {
	esc := uint32(1)<<c.tfBits - 1
	var w uint32
	for f := range c.nf {
		if tf[f] >= esc {
			c.overflow[uint64(term)<<32|uint64(doc)] = *tf
			return tfOverflow
		}
		w |= tf[f] << (uint(f) * c.tfBits)
	}
	return uint16(w)
}

func (c *core) unpackTF(term, doc uint32, w uint16, tf *[MaxFields]uint32) {
	if w == tfOverflow {
		*tf = c.overflow[uint64(term)<<32|uint64(doc)]
		return
	}
	mask := uint32(1)<<c.tfBits - 1
	for f := range c.nf {
		tf[f] = uint32(w) >> (uint(f) * c.tfBits) & mask
	}
}

func (c *core) isDead(doc uint32) bool { return c.dead[doc>>6]&(1<<(doc&63)) != 0 }

func (c *core) seq(d *docEntry) []byte {
	ch := c.arena[d.seqAt>>32]
	off := uint32(d.seqAt)
	return ch[off : off+d.seqN : off+d.seqN]
}

// appendSeq stores a term sequence and returns where.
func (c *core) appendSeq(b []byte) uint64 {
	last := len(c.arena) - 1
	if last < 0 || len(c.arena[last])+len(b) > cap(c.arena[last]) {
		c.arena = append(c.arena, make([]byte, 0, max(arenaChunk, len(b))))
		last++
	}
	ch := c.arena[last]
	at := uint64(last)<<32 | uint64(len(ch))
	c.arena[last] = append(ch, b...)
	return at
}

func (c *core) intern(t string) uint32 {
	if id, ok := c.termIDs[t]; ok {
		return id
	}
	id := uint32(len(c.texts))
	c.termIDs[t] = id
	c.texts = append(c.texts, t)
	c.terms = append(c.terms, termEntry{max: emptyBlock})
	c.mark = append(c.mark, 0)
	return id
}

// appendDoc stores a document whose sequence is encoded, without
// indexing it, and returns its number.
func (c *core) appendDoc(id memory.ID, attrs Attrs, lens *[MaxFields]uint32, seq []byte) uint32 {
	n := uint32(len(c.docs))
	c.docs = append(c.docs, docEntry{id: id, attrs: attrs, seqAt: c.appendSeq(seq), seqN: uint32(len(seq)), lens: *lens})
	if int(n>>6) >= len(c.dead) {
		c.dead = append(c.dead, 0)
	}
	c.ids[id] = n
	return n
}

// add indexes an analysed document (not yet in the index).
func (c *core) add(a *analysed) {
	c.buf = c.buf[:0]
	for _, t := range a.terms {
		id := uint32(gapTerm)
		if t != "" {
			id = c.intern(t)
		}
		c.buf = binary.AppendUvarint(c.buf, uint64(id))
	}
	n := c.appendDoc(a.id, a.attrs, &a.lens, c.buf)
	c.indexDoc(n)
}

// indexDoc appends the postings of document n and counts it in the
// statistics.
func (c *core) indexDoc(n uint32) {
	d := &c.docs[n]
	c.collect(d)
	for i := range c.slots {
		s := &c.slots[i]
		c.appendPosting(s.term, n, &s.tf, &d.lens)
		c.terms[s.term].df++
	}
	c.live++
	for f := range c.nf {
		c.lens[f] += int64(d.lens[f])
	}
}

// collect gathers the distinct terms of d with their frequencies per
// field into c.slots, in order of first occurrence.
func (c *core) collect(d *docEntry) {
	c.slots = c.slots[:0]
	r := seqReader{b: c.seq(d), lens: d.lens}
	for {
		t, f, ok := r.next()
		if !ok {
			break
		}
		if t == gapTerm {
			continue
		}
		s := c.mark[t]
		if s == 0 {
			c.slots = append(c.slots, tfSlot{term: t})
			s = uint32(len(c.slots))
			c.mark[t] = s
		}
		c.slots[s-1].tf[f]++
	}
	for i := range c.slots {
		c.mark[c.slots[i].term] = 0
	}
}

func (c *core) appendPosting(term, doc uint32, tf, lens *[MaxFields]uint32) {
	te := &c.terms[term]
	i := len(te.docs)
	te.docs = append(te.docs, doc)
	te.tfs = append(te.tfs, c.packTF(term, doc, tf))
	if i >= blockSize {
		if i == blockSize {
			te.blocks = append(te.blocks[:0], te.max)
		}
		if i%blockSize == 0 {
			te.blocks = append(te.blocks, emptyBlock)
		}
		te.blocks[len(te.blocks)-1].update(c.nf, tf, lens)
	}
	te.max.update(c.nf, tf, lens)
}

// delete tombstones the document with id and takes it out of the
// statistics.
func (c *core) delete(id memory.ID) bool {
	n, ok := c.ids[id]
	if !ok {
		return false
	}
	delete(c.ids, id)
	c.dead[n>>6] |= 1 << (n & 63)
	c.ndead++
	c.live--
	d := &c.docs[n]
	for f := range c.nf {
		c.lens[f] -= int64(d.lens[f])
	}
	c.collect(d)
	for i := range c.slots {
		c.terms[c.slots[i].term].df--
	}
	return true
}

// seqReader decodes a term sequence, telling the field of each term.
type seqReader struct {
	b    []byte
	lens [MaxFields]uint32
	f    int
	left uint32
	init bool
}

// next returns the next term id (gapTerm for a gap between texts) and
// its field.
func (r *seqReader) next() (term uint32, field int, ok bool) {
	if len(r.b) == 0 {
		return 0, 0, false
	}
	if !r.init {
		r.init = true
		r.left = r.lens[0]
		for r.left == 0 && r.f < MaxFields-1 {
			r.f++
			r.left = r.lens[r.f]
		}
	}
	var v uint64
	if c := r.b[0]; c < 0x80 {
		v = uint64(c)
		r.b = r.b[1:]
	} else {
		var n int
		v, n = binary.Uvarint(r.b)
		if n <= 0 {
			r.b = nil
			return 0, 0, false
		}
		r.b = r.b[n:]
	}
	field = r.f
	if v != gapTerm {
		r.left--
		for r.left == 0 && r.f < MaxFields-1 {
			r.f++
			r.left = r.lens[r.f]
		}
	}
	return uint32(v), field, true
}
