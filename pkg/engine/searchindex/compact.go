package searchindex

import (
	"encoding/binary"
	"slices"
)

// Compaction thresholds: the space of deleted documents is reclaimed in
// the background once they are at least compactMinDead and at least a
// quarter of the live ones, so each deletion pays for a bounded share of
// a rebuild.
const (
	compactMinDead = 256
	compactRatio   = 4
)

// view is a consistent, read-only view of a core's documents taken under
// the lock: the documents numbered below len(docs), their tombstones at
// that moment, and the vocabulary. What it covers is never written again,
// so it may be read without the lock.
type view struct {
	nf    int
	docs  []docEntry
	dlens []uint32
	dead  []uint64
	arena [][]byte
	texts []string
}

// capture returns a view of c. The caller holds the lock (read or write).
func (c *core) capture() *view {
	return &view{
		nf:    c.nf,
		docs:  c.docs[:len(c.docs):len(c.docs)],
		dlens: c.dlens[:len(c.dlens):len(c.dlens)],
		dead:  slices.Clone(c.dead),
		arena: slices.Clone(c.arena),
		texts: c.texts[:len(c.texts):len(c.texts)],
	}
}

func (v *view) isDead(n uint32) bool { return v.dead[n>>6]&(1<<(n&63)) != 0 }

func (v *view) lensOf(n uint32) []uint32 {
	i := int(n) * v.nf
	return v.dlens[i : i+v.nf : i+v.nf]
}

func (v *view) seq(d *docEntry) []byte {
	ch := v.arena[d.seqAt>>32]
	off := uint32(d.seqAt)
	return ch[off : off+d.seqN : off+d.seqN]
}

// remapper renumbers the terms of sequences copied from another core, in
// order of first use.
type remapper struct {
	to    *core
	texts []string
	ids   []uint32 // old id -> new id, 0 when not assigned yet
}

func newRemapper(to *core, texts []string) *remapper {
	return &remapper{to: to, texts: texts, ids: make([]uint32, len(texts))}
}

// copyDoc appends document d (of field lengths lens and sequence seq)
// to r.to, not indexed.
func (r *remapper) copyDoc(d *docEntry, lens []uint32, seq []byte) uint32 {
	c := r.to
	c.buf = c.buf[:0]
	rd := seqReader{b: seq, lens: lensArray(lens)}
	for {
		t, _, ok := rd.next()
		if !ok {
			break
		}
		if t != gapTerm {
			if int(t) >= len(r.ids) {
				r.ids = append(r.ids, make([]uint32, int(t)+1-len(r.ids))...)
			}
			nt := r.ids[t]
			if nt == 0 {
				nt = c.intern(r.texts[t])
				r.ids[t] = nt
			}
			t = nt
		}
		c.buf = binary.AppendUvarint(c.buf, uint64(t))
	}
	return c.appendDoc(d.id, d.attrs, lens, c.buf)
}

// rebuild returns a new core holding the live documents of v, renumbered
// in order, with the terms they use and exact postings, block maxima and
// statistics.
func (c *core) rebuild(v *view) *core {
	nc := c.empty()
	r := newRemapper(nc, v.texts)
	for i := range v.docs {
		n := uint32(i)
		if v.isDead(n) {
			continue
		}
		r.copyDoc(&v.docs[i], v.lensOf(n), v.seq(&v.docs[i]))
	}
	nc.buildPostings()
	return nc
}

// empty returns an empty core configured as c.
func (c *core) empty() *core {
	fields := make([]Field, c.nf)
	for f := range fields {
		fields[f] = Field{Weight: c.fw[f], B: c.b[f]}
	}
	nc := newCore(fields)
	nc.maxDocs = c.maxDocs
	return nc
}

// buildPostings indexes every document of c at once (none may be indexed
// or deleted yet), sizing each posting list exactly.
func (c *core) buildPostings() {
	nt := len(c.texts)
	df := make([]uint32, nt)
	last := make([]uint32, nt)
	// The statistics first: the block bounds depend on them.
	for i, l := range c.dlens {
		c.lens[i%c.nf] += int64(l)
	}
	c.live = len(c.docs)
	c.setAvgHi()
	c.live, c.lens = 0, [MaxFields]int64{}
	for n := range c.docs {
		d := &c.docs[n]
		r := seqReader{b: c.seq(d), lens: lensArray(c.lensOf(uint32(n)))}
		for {
			t, _, ok := r.next()
			if !ok {
				break
			}
			if t != gapTerm && last[t] != uint32(n)+1 {
				last[t] = uint32(n) + 1
				df[t]++
			}
		}
	}
	var postings, blocks int
	for _, x := range df {
		postings += int(x)
		if x > blockSize {
			blocks += (int(x) + blockSize - 1) / blockSize
		}
	}
	allDocs := make([]uint32, postings)
	allTFs := make([]uint16, postings)
	allPX := make([]uint8, postings)
	allBX := make([]float32, blocks*c.nf)
	var p, b int
	c.terms = make([]termEntry, nt)
	for t, x := range df {
		te := &c.terms[t]
		*te = newTermEntry()
		te.docs = allDocs[p : p : p+int(x)]
		te.tfs = allTFs[p : p : p+int(x)]
		te.px = allPX[p : p : p+int(x)]
		p += int(x)
		if x > blockSize {
			n := (int(x) + blockSize - 1) / blockSize * c.nf
			te.bx = allBX[b : b : b+n]
			b += n
		}
	}
	for n := range c.docs {
		c.indexDoc(uint32(n))
	}
}

// needsCompaction reports whether c has enough deleted documents to be
// worth compacting, or block bounds that no longer hold.
func (c *core) needsCompaction() bool {
	return c.ndead >= compactMinDead && c.ndead*compactRatio >= c.live || !c.boundsFresh(ptr(c.nl()))
}

// maybeCompactLocked starts a background compaction when the index needs
// one. The caller holds the write lock.
func (ix *Index) maybeCompactLocked() {
	if !ix.autoCompact || !ix.c.needsCompaction() || !ix.compacting.CompareAndSwap(false, true) {
		return
	}
	go func() {
		for {
			ix.compact()
			// Deletions made during the compaction may call for another.
			ix.mu.Lock()
			again := ix.autoCompact && ix.c.needsCompaction()
			if !again {
				ix.compacting.Store(false)
			}
			ix.mu.Unlock()
			if !again {
				return
			}
		}
	}()
}

// Compact reclaims the space of deleted documents now: it rebuilds the
// index from the live documents without holding the lock, then applies
// the changes made meanwhile and switches over under the write lock.
// Search results do not change (statistics are always those of the live
// documents). A compaction already running finishes first.
func (ix *Index) Compact() { ix.compact() }

func (ix *Index) compact() {
	ix.compactMu.Lock()
	defer ix.compactMu.Unlock()
	ix.mu.RLock()
	old := ix.c
	if old.ndead == 0 && old.boundsFresh(ptr(old.nl())) {
		ix.mu.RUnlock()
		return
	}
	v := old.capture()
	ix.mu.RUnlock()

	nc := old.rebuild(v)

	ix.mu.Lock()
	defer ix.mu.Unlock()
	// The lock was free while nc was built: apply what happened since.
	// Deletions of documents nc holds come first, so a document deleted
	// and added again ends up with its new version.
	for i := range v.docs {
		n := uint32(i)
		if !v.isDead(n) && old.isDead(n) {
			nc.delete(old.docs[i].id)
		}
	}
	r := newRemapper(nc, old.texts)
	for i := len(v.docs); i < len(old.docs); i++ {
		if old.isDead(uint32(i)) {
			continue
		}
		d := &old.docs[i]
		nc.indexDoc(r.copyDoc(d, old.lensOf(uint32(i)), old.seq(d)))
	}
	ix.c = nc
}

func ptr[T any](v T) *T { return &v }
