package searchindex

import (
	"encoding/binary"
	"math"
	"strings"
	"sync/atomic"

	"memsvc.dev/memsvc/pkg/memory"
)

// blockSize is the number of postings summarised by one block maximum.
const blockSize = 32

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
	fw      [MaxFields]float64 // configured field weights
	b       [MaxFields]float64 // length normalisation of each field

	// Block maxima are the largest length-normalised frequency per field,
	// tf / ((1-b) + nlHi·len), where nlHi = b/avgHi and avgHi was above
	// the field's average length when the postings were laid out. While
	// the averages stay below avgHi they bound the frequencies searches
	// compute (b/avg ≥ nlHi); past that, searches scale them by
	// nlHi/(b/avg) ≥ 1, which still bounds them but looser, and a
	// background rebuild lays the postings out afresh.
	nlHi [MaxFields]float64 // b/avgHi, or 0 for a field that had no terms

	docs  []docEntry
	dlens []uint32 // field lengths, nf per document
	dead  []uint64 // tombstones, one bit per document number
	ndead int
	ids   idTable
	arena [][]byte // term sequences, uvarint term ids
	// marks holds each document's mark (Index.SetMark), in blocks that
	// never move, so a search may read and set marks through the slice
	// it captured while the writer appends blocks.
	marks []*markBlock

	termIDs termTable // term id by text
	texts   []string  // by term id; texts[gapTerm] is ""
	terms   []termEntry

	// Statistics of the live documents.
	live int
	lens [MaxFields]int64

	// Scratch space of the writer (used under the write lock only).
	mark  []uint32
	slots []tfSlot
	buf   []byte
}

// docEntry is a document. Its attributes are kept field by field, with
// the 32-bit ones side by side, so the entry takes 48 bytes, not the 56
// an Attrs field and its padding would make it.
type docEntry struct {
	id    memory.ID
	time  int64
	group uint64
	seqAt uint64 // chunk<<32 | offset in the chunk
	tag   uint32
	seqN  uint32
}

// attrs returns the document's attributes.
func (d *docEntry) attrs() Attrs { return Attrs{Time: d.time, Group: d.group, Tag: d.tag} }

// termEntry is the postings of one term: document numbers ascending,
// packed term frequencies, and block maxima.
type termEntry struct {
	df   uint32 // live documents containing the term
	docs []uint32
	tfs  []uint16
	// px bounds each posting: impactBound[px[i]] is at least the sum
	// over fields of the configured field weight times the length-
	// normalised frequency with nlHi (a byte per posting, so a search can
	// dismiss most postings without reading the document's lengths).
	px []uint8
	// bx holds, for each block of blockSize postings, the block maximum
	// of each field (nf float32 per block, rounded up); nil while the list
	// has at most blockSize postings (mx is then the block's).
	bx []float32
	mx [MaxFields]float32 // block maxima over the whole list
	// ovf holds the frequencies of the postings whose frequencies do not
	// fit the packed word, in document order.
	ovf []ovfEntry
}

type ovfEntry struct {
	doc uint32
	tf  [MaxFields]uint32
}

// ovfFind returns the frequencies of doc in ovf.
func ovfFind(ovf []ovfEntry, doc uint32) [MaxFields]uint32 {
	i, j := 0, len(ovf)
	for i < j {
		m := int(uint(i+j) >> 1)
		if ovf[m].doc < doc {
			i = m + 1
		} else {
			j = m
		}
	}
	if i < len(ovf) && ovf[i].doc == doc {
		return ovf[i].tf
	}
	return [MaxFields]uint32{}
}

// avgHeadroom is how far above the current average field lengths avgHi
// is set when postings are laid out: bounds are at most about this much
// looser than exact, and the averages must grow by this much before the
// postings are laid out again.
const avgHeadroom = 1.1

// normHi returns a posting's length-normalised frequency of field f
// with nlHi, rounded up to a float32.
func (c *core) normHi(f int, tf, length uint32) float32 {
	x := float64(tf) / ((1 - c.b[f]) + c.nlHi[f]*float64(length))
	x32 := float32(x)
	if float64(x32) < x {
		x32 = math.Nextafter32(x32, math.MaxFloat32)
	}
	return x32
}

// setAvgHi sets nlHi from the current statistics.
func (c *core) setAvgHi() {
	for f := range c.nf {
		c.nlHi[f] = 0
		if c.lens[f] > 0 && c.live > 0 {
			c.nlHi[f] = c.b[f] / (float64(c.lens[f]) / float64(c.live) * avgHeadroom)
		}
	}
}

// boundsFresh reports whether the block maxima bound the frequencies
// under the length normalisation nl of the current statistics without
// scaling (see boundScale).
func (c *core) boundsFresh(nl *[MaxFields]float64) bool {
	for f := range c.nf {
		if c.nlHi[f] > nl[f] && nl[f] > 0 || c.b[f] > 0 && c.lens[f] > 0 && c.nlHi[f] == 0 {
			return false
		}
	}
	return true
}

// boundScale returns, per field, the factor by which block maxima must
// be multiplied to bound the frequencies under nl: tf/((1-b)+nl·len) is
// at most max(1, nlHi/nl) times tf/((1-b)+nlHi·len). A field without
// terms (nl 0) needs no scaling: no live document has frequencies there.
func (c *core) boundScale(nl *[MaxFields]float64) (r [MaxFields]float64) {
	for f := range c.nf {
		r[f] = 1
		if nl[f] > 0 && c.nlHi[f] > nl[f] {
			r[f] = c.nlHi[f] / nl[f]
		}
	}
	return r
}

// nl returns the length normalisation b/avg of each field.
func (c *core) nl() (nl [MaxFields]float64) {
	for f := range c.nf {
		if c.lens[f] > 0 {
			nl[f] = c.b[f] / (float64(c.lens[f]) / float64(c.live))
		}
	}
	return nl
}

type tfSlot struct {
	term uint32
	tf   [MaxFields]uint32
}

func newCore(fields []Field) *core {
	nf := len(fields)
	c := &core{
		nf:      nf,
		tfBits:  uint(16 / nf),
		maxDocs: math.MaxUint32,
		termIDs: newTermTable(0),
		texts:   []string{""},
		terms:   make([]termEntry, 1),
		mark:    make([]uint32, 1),
	}
	for f, fd := range fields {
		c.fw[f], c.b[f] = fd.Weight, fd.B
	}
	return c
}

// lensOf returns the field lengths of document n.
func (c *core) lensOf(n uint32) []uint32 {
	i := int(n) * c.nf
	return c.dlens[i : i+c.nf : i+c.nf]
}

func lensArray(l []uint32) (a [MaxFields]uint32) {
	copy(a[:], l)
	return a
}

// Term frequencies of a posting are packed into 16 bits, 16/nf bits per
// field; a word of all ones means they are in the term's ovf.
const tfOverflow = 0xffff

// packTF returns the packed frequencies, tfOverflow when they do not fit.
func (c *core) packTF(tf *[MaxFields]uint32) uint16 {
	esc := uint32(1)<<c.tfBits - 1
	var w uint32
	for f := range c.nf {
		if tf[f] >= esc {
			return tfOverflow
		}
		w |= tf[f] << (uint(f) * c.tfBits)
	}
	return uint16(w)
}

// unpackTF unpacks w, the frequencies of doc in a list whose overflow
// entries are ovf.
func (c *core) unpackTF(ovf []ovfEntry, doc uint32, w uint16, tf *[MaxFields]uint32) {
	if w == tfOverflow {
		*tf = ovfFind(ovf, doc)
		return
	}
	mask := uint32(1)<<c.tfBits - 1
	for f := range c.nf {
		tf[f] = uint32(w) >> (uint(f) * c.tfBits) & mask
	}
}

// isDead reads a tombstone atomically: searches read them without the
// lock (see prepared).
func isDead(dead []uint64, doc uint32) bool {
	return atomic.LoadUint64(&dead[doc>>6])&(1<<(doc&63)) != 0
}

func (c *core) isDead(doc uint32) bool { return isDead(c.dead, doc) }

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
	if id, ok := c.termIDs.find(c.texts, t); ok {
		return id
	}
	// A copy: t may be part of a document's text, which the index must
	// not keep alive.
	t = strings.Clone(t)
	id := uint32(len(c.texts))
	c.texts = append(c.texts, t)
	c.termIDs.insert(c.texts, id)
	c.terms = append(c.terms, termEntry{})
	c.mark = append(c.mark, 0)
	return id
}

// appendDoc stores a document whose sequence is encoded, without
// indexing it, and returns its number.
func (c *core) appendDoc(id memory.ID, attrs Attrs, lens []uint32, seq []byte) uint32 {
	n := uint32(len(c.docs))
	c.docs = append(c.docs, docEntry{id: id, time: attrs.Time, group: attrs.Group, tag: attrs.Tag, seqAt: c.appendSeq(seq), seqN: uint32(len(seq))})
	c.dlens = append(c.dlens, lens[:c.nf]...)
	if int(n>>6) >= len(c.dead) {
		c.dead = append(c.dead, 0)
	}
	if n%markBlockSize == 0 {
		c.marks = append(c.marks, new(markBlock))
	}
	c.ids.insert(c.docs, n)
	return n
}

// markBlockSize is the number of marks in a markBlock.
const markBlockSize = 512

// markBlock holds the marks of markBlockSize consecutive documents.
type markBlock [markBlockSize]atomic.Uint64

// markOf returns the mark of document n in marks.
func markOf(marks []*markBlock, n uint32) *atomic.Uint64 {
	return &marks[n/markBlockSize][n%markBlockSize]
}

// carryMarks copies into c the marks of the documents it took from old:
// c's document i is old's document from[i]. The caller holds the write
// lock, so SetMark cannot change a mark meanwhile; a search still running
// on old may set one there after the copy, which c then lacks (0, which
// only means the caller must look again).
func (c *core) carryMarks(old *core, from []uint32) {
	for i, o := range from {
		if m := markOf(old.marks, o).Load(); m != 0 {
			markOf(c.marks, uint32(i)).Store(m)
		}
	}
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
	n := c.appendDoc(a.id, a.attrs, a.lens[:], c.buf)
	c.indexDoc(n)
}

// indexDoc appends the postings of document n and counts it in the
// statistics.
func (c *core) indexDoc(n uint32) {
	c.collect(n)
	lens := c.lensOf(n)
	for i := range c.slots {
		s := &c.slots[i]
		c.appendPosting(s.term, n, &s.tf, lens)
		c.terms[s.term].df++
	}
	c.live++
	for f := range c.nf {
		c.lens[f] += int64(lens[f])
	}
}

// collect gathers the distinct terms of document n with their
// frequencies per field into c.slots, in order of first occurrence.
func (c *core) collect(n uint32) { c.slots = c.collectInto(c.mark, c.slots, n) }

// collectInto is collect with the given scratch space: mark has an entry
// per term, all zero, and is left so.
func (c *core) collectInto(mark []uint32, slots []tfSlot, n uint32) []tfSlot {
	slots = slots[:0]
	r := seqReader{b: c.seq(&c.docs[n]), lens: lensArray(c.lensOf(n))}
	for {
		t, f, ok := r.next()
		if !ok {
			break
		}
		if t == gapTerm {
			continue
		}
		s := mark[t]
		if s == 0 {
			slots = append(slots, tfSlot{term: t})
			s = uint32(len(slots))
			mark[t] = s
		}
		slots[s-1].tf[f]++
	}
	for i := range slots {
		mark[slots[i].term] = 0
	}
	return slots
}

func (c *core) appendPosting(term, doc uint32, tf *[MaxFields]uint32, lens []uint32) {
	te := &c.terms[term]
	i := len(te.docs)
	te.docs = append(te.docs, doc)
	w := c.packTF(tf)
	if w == tfOverflow {
		te.ovf = append(te.ovf, ovfEntry{doc: doc, tf: *tf})
	}
	te.tfs = append(te.tfs, w)
	nf := c.nf
	xc := 0.0 // with the configured field weights
	if i >= blockSize {
		if i == blockSize {
			te.bx = append(te.bx[:0], te.mx[:nf]...) // the first block's
		}
		if i%blockSize == 0 {
			te.bx = append(te.bx, make([]float32, nf)...)
		}
	}
	var blk []float32
	if len(te.bx) > 0 {
		blk = te.bx[len(te.bx)-nf:]
	}
	for f := range nf {
		if tf[f] == 0 {
			continue
		}
		x := c.normHi(f, tf[f], lens[f])
		xc += c.fw[f] * float64(x)
		te.mx[f] = max(te.mx[f], x)
		if blk != nil {
			blk[f] = max(blk[f], x)
		}
	}
	te.px = append(te.px, impactLevel(xc))
}

// Impact levels: level q in 1..254 stands for 2^((q-128)/16), a 4.4%
// step from about 0.004 to 240; 255 is unbounded.
var impactBound = func() (t [256]float64) {
	for q := 1; q < 255; q++ {
		t[q] = math.Exp2(float64(q-128) / 16)
	}
	t[255] = math.Inf(1)
	return t
}()

// impactLevel returns the smallest level whose bound is at least x.
func impactLevel(x float64) uint8 {
	if !(x > impactBound[1]) {
		return 1
	}
	if x > impactBound[254] {
		return 255
	}
	// log2(x) from the exponent plus the mantissa's fraction m-1, which
	// is at most 0.09 below log2(m): a level or two low at most.
	frac, exp := math.Frexp(x) // x = frac · 2^exp, frac in [0.5, 1)
	q := int(16*(float64(exp-1)+(2*frac-1))) + 128
	q = max(1, min(q, 254))
	for q > 1 && impactBound[q-1] >= x {
		q--
	}
	for impactBound[q] < x {
		q++
	}
	return uint8(q)
}

// delete tombstones the document with id and takes it out of the
// statistics.
func (c *core) delete(id memory.ID) bool {
	n, ok := c.ids.remove(c.docs, id)
	if !ok {
		return false
	}
	atomic.OrUint64(&c.dead[n>>6], 1<<(n&63))
	c.ndead++
	c.live--
	for f, l := range c.lensOf(n) {
		c.lens[f] -= int64(l)
	}
	c.collect(n)
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
