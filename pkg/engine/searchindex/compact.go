package searchindex

import (
	"cmp"
	"encoding/binary"
	"runtime"
	"slices"
	"sync"
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

func (v *view) isDead(n uint32) bool { return isDead(v.dead, n) }

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
	return c.appendDoc(d.id, d.attrs(), lens, c.buf)
}

// rebuild returns a new core holding the live documents of v, renumbered
// in order, with the terms they use and exact postings, block maxima and
// statistics, and the number each document had in v (marks are not
// copied: see carryMarks).
func (c *core) rebuild(v *view) (*core, []uint32) {
	nc := c.empty()
	r := newRemapper(nc, v.texts)
	from := make([]uint32, 0, len(v.docs))
	for i := range v.docs {
		n := uint32(i)
		if v.isDead(n) {
			continue
		}
		r.copyDoc(&v.docs[i], v.lensOf(n), v.seq(&v.docs[i]))
		from = append(from, n)
	}
	nc.buildPostings()
	return nc, from
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

// parallelMinDocs is the number of documents from which buildPostings
// uses every CPU.
const parallelMinDocs = 4096

// buildPostings indexes every document of c at once (none may be indexed
// or deleted yet). It works in three passes, each split between one
// worker per CPU: count the postings of each term per range of
// documents; write each range's postings into flat arrays at offsets
// that keep every term's postings contiguous and in document order,
// with their impacts and per-field normalised frequencies; then compute
// the block maxima term by term from those frequencies.
func (c *core) buildPostings() {
	nt, nd, nf := len(c.texts), len(c.docs), c.nf
	// The statistics first: the bounds depend on them.
	for i, l := range c.dlens {
		c.lens[i%nf] += int64(l)
	}
	c.live = nd
	c.setAvgHi()
	workers := runtime.GOMAXPROCS(0)
	if nd < parallelMinDocs {
		workers = 1
	}
	docRange := func(w int) (int, int) { return w * nd / workers, (w + 1) * nd / workers }

	// Pass 1: postings per term and range.
	offs := make([][]uint32, workers)
	parallel(workers, func(w int) {
		cnt := make([]uint32, nt)
		mark := make([]uint32, nt)
		var slots []tfSlot
		from, to := docRange(w)
		for n := from; n < to; n++ {
			slots = c.collectInto(mark, slots, uint32(n))
			for i := range slots {
				cnt[slots[i].term]++
			}
		}
		offs[w] = cnt
	})
	// Turn the counts into write offsets.
	start := make([]int, nt+1)
	total := 0
	for t := range nt {
		start[t] = total
		for w := range workers {
			x := offs[w][t]
			offs[w][t] = uint32(total)
			total += int(x)
		}
	}
	start[nt] = total
	allDocs := make([]uint32, total)
	allTFs := make([]uint16, total)
	allPX := make([]uint8, total)
	norm := make([]float32, total*nf) // per posting and field, temporary

	// Pass 2: write the postings.
	overflows := make([][]ovfRec, workers)
	parallel(workers, func(w int) {
		off := offs[w]
		mark := make([]uint32, nt)
		var slots []tfSlot
		var overflow []ovfRec
		from, to := docRange(w)
		for n := from; n < to; n++ {
			slots = c.collectInto(mark, slots, uint32(n))
			lens := c.lensOf(uint32(n))
			for k := range slots {
				s := &slots[k]
				i := off[s.term]
				off[s.term]++
				allDocs[i] = uint32(n)
				allTFs[i] = c.packTF(&s.tf)
				if allTFs[i] == tfOverflow {
					overflow = append(overflow, ovfRec{s.term, ovfEntry{uint32(n), s.tf}})
				}
				xc := 0.0
				for f := range nf {
					if s.tf[f] != 0 {
						x := c.normHi(f, s.tf[f], lens[f])
						norm[int(i)*nf+f] = x
						xc += c.fw[f] * float64(x)
					}
				}
				allPX[i] = impactLevel(xc)
			}
		}
		overflows[w] = overflow
	})
	ovf := slices.Concat(overflows...)
	slices.SortFunc(ovf, func(a, b ovfRec) int { return cmp.Or(cmp.Compare(a.term, b.term), cmp.Compare(a.doc, b.doc)) })

	// Pass 3: the terms and their block maxima.
	blocks := 0
	for t := range nt {
		if df := start[t+1] - start[t]; df > blockSize {
			blocks += (df + blockSize - 1) / blockSize
		}
	}
	allBX := make([]float32, blocks*nf)
	c.terms = make([]termEntry, nt)
	b := 0
	for t := range nt {
		te := &c.terms[t]
		p, q := start[t], start[t+1]
		te.df = uint32(q - p)
		te.docs, te.tfs, te.px = allDocs[p:q:q], allTFs[p:q:q], allPX[p:q:q]
		if df := q - p; df > blockSize {
			n := (df + blockSize - 1) / blockSize * nf
			te.bx = allBX[b : b+n : b+n]
			b += n
		}
	}
	for i := 0; i < len(ovf); {
		j := i
		entries := make([]ovfEntry, 0, 1)
		for ; j < len(ovf) && ovf[j].term == ovf[i].term; j++ {
			entries = append(entries, ovf[j].ovfEntry)
		}
		c.terms[ovf[i].term].ovf = entries
		i = j
	}
	parallel(workers, func(w int) {
		for t := w * nt / workers; t < (w+1)*nt/workers; t++ {
			te := &c.terms[t]
			p := start[t]
			for i := range te.docs {
				x := norm[(p+i)*nf : (p+i)*nf+nf]
				for f := range nf {
					te.mx[f] = max(te.mx[f], x[f])
				}
				if te.bx != nil {
					blk := te.bx[i/blockSize*nf : i/blockSize*nf+nf]
					for f := range nf {
						blk[f] = max(blk[f], x[f])
					}
				}
			}
		}
	})
}

type ovfRec struct {
	term uint32
	ovfEntry
}

// parallel runs fn(0), ..., fn(workers-1) at once and waits for them.
func parallel(workers int, fn func(w int)) {
	if workers == 1 {
		fn(0)
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { fn(w) })
	}
	wg.Wait()
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

	nc, from := old.rebuild(v)

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
		from = append(from, uint32(i))
	}
	nc.carryMarks(old, from)
	ix.c = nc
}

func ptr[T any](v T) *T { return &v }
