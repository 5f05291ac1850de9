package searchindex

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"memsvc.dev/memsvc/pkg/memory"
)

// MaxQueryTerms bounds the work of one search: distinct terms of a query
// beyond the first MaxQueryTerms are ignored.
const MaxQueryTerms = 64

// boundSlack inflates every score bound so that rounding can never make
// a bound smaller than the score it bounds (sums of at most MaxQueryTerms
// positive terms are off by far less than this, relatively).
const boundSlack = 1 + 1e-9

// ErrQuery marks an invalid query.
var ErrQuery = errors.New("invalid search query")

// QueryTerm is one term of a query with its weight.
type QueryTerm struct {
	Term string
	// Weight multiplies the term's score; 1 is neutral, 0 makes the
	// term count for nothing in ranking (it is still required with
	// Query.All). Negative weights are refused.
	Weight float64
}

// Query is a search request.
type Query struct {
	// Terms are the query terms, analysed as documents are (QueryTerms
	// does that for a text). A term given more than once counts once,
	// with its largest weight.
	Terms []QueryTerm
	// Limit is the number of hits Search returns.
	Limit int
	// All requires every term in a document (conjunctive search).
	// Otherwise a document matches when it contains a term of positive
	// weight, and its score is the sum over its terms.
	All bool
	// FieldWeights, when set, replaces the configured field weights for
	// this query: one non-negative weight per field; 0 ignores the field.
	FieldWeights []float64
	// Filter, when set, decides whether a matching document may be
	// returned or counted. It must be a pure function of its arguments
	// for the duration of the call: Search asks it about some matching
	// documents only (those good enough to enter the results, and those
	// that seed its threshold), so which documents it is asked about
	// depends on the others; Match and Count ask it about every match.
	// It runs without the index's lock and may call the index.
	Filter func(id memory.ID, a Attrs) bool
	// Admit, when set, is used instead of Filter and asked the same
	// questions, about a Candidate, which gives the document's mark
	// (Index.SetMark) as well as its id and attributes: it may decide
	// from the mark alone, without reading anything else, and may store
	// in the mark what it found out, so the next query need not find it
	// out again. The caller keeps its marks true (resets them with
	// SetMark when what they summarise changes); the index only keeps
	// them.
	Admit func(c Candidate) bool
}

// Candidate is a document a Query.Admit filter is asked about.
type Candidate struct {
	d    *docEntry
	mark *atomic.Uint64
}

// ID returns the document's id.
func (c Candidate) ID() memory.ID { return c.d.id }

// Attrs returns the document's attributes.
func (c Candidate) Attrs() Attrs { return c.d.attrs() }

// Mark returns the document's mark.
func (c Candidate) Mark() uint64 { return c.mark.Load() }

// SetMark sets the document's mark, as Index.SetMark does.
func (c Candidate) SetMark(m uint64) { c.mark.Store(m) }

// Hit is one search result.
type Hit struct {
	ID    memory.ID
	Score float64
	Attrs Attrs
}

// QueryTerms analyses text into query terms of weight 1.
func (ix *Index) QueryTerms(text string) []QueryTerm {
	terms := ix.Analyze(text)
	out := make([]QueryTerm, len(terms))
	for i, t := range terms {
		out[i] = QueryTerm{Term: t, Weight: 1}
	}
	return out
}

// prepared is a query resolved against a core: distinct terms with their
// ids and idf-weighted multipliers, and the BM25F normalisation.
//
// A prepared query captures, under the index's read lock, everything a
// search reads: the statistics, the document table, field lengths and
// tombstones as slices of what exists now, and a copy of each query
// term's posting list headers (see cursor). Documents and postings are
// append-only and tombstones are read atomically, so the search itself
// runs without the lock: writers never wait for a search, only for the
// preparation of one.
type prepared struct {
	c     *core
	terms []pterm
	lists []cursor // of the known terms, in query order
	docs  []docEntry
	dlens []uint32
	dead  []uint64
	marks []*markBlock
	fw    [MaxFields]float64
	n0    [MaxFields]float64 // length normalisation n0 + nl·len
	nl    [MaxFields]float64
	k1    float64
	// r scales block maxima to bound frequencies under nl (boundScale).
	r [MaxFields]float64
	// scale bounds a posting's frequency by its impact: the largest ratio
	// over fields of the query's field weight times r to the configured
	// weight (impacts use the configured weights).
	scale float64
}

type pterm struct {
	text   string
	id     uint32 // 0 when the index does not know the term
	weight float64
	w      float64 // weight · idf
	idf    float64
}

// prepareFields returns a prepared query without terms, with the
// configured field weights.
func (ix *Index) prepareFields(c *core) *prepared {
	p := &prepared{c: c, k1: ix.cfg.K1, nl: c.nl()}
	for f, fd := range ix.cfg.Fields {
		p.fw[f] = fd.Weight
		p.n0[f] = 1 - fd.B
	}
	p.r = c.boundScale(&p.nl)
	p.setScale()
	return p
}

func (ix *Index) prepare(c *core, q *Query) (*prepared, error) {
	if q.Limit < 0 {
		return nil, fmt.Errorf("%w: negative limit %d", ErrQuery, q.Limit)
	}
	p := ix.prepareFields(c)
	if q.FieldWeights != nil {
		if len(q.FieldWeights) != c.nf {
			return nil, fmt.Errorf("%w: %d field weights for %d fields", ErrQuery, len(q.FieldWeights), c.nf)
		}
		for f, w := range q.FieldWeights {
			if !(w >= 0) || math.IsInf(w, 0) {
				return nil, fmt.Errorf("%w: field weight %v, want a non-negative number", ErrQuery, w)
			}
			p.fw[f] = w
		}
		p.setScale()
	}
	n := float64(c.live)
	for _, qt := range q.Terms {
		if !(qt.Weight >= 0) || math.IsInf(qt.Weight, 0) {
			return nil, fmt.Errorf("%w: term %.20q: weight %v, want a non-negative number", ErrQuery, qt.Term, qt.Weight)
		}
		if i := slices.IndexFunc(p.terms, func(t pterm) bool { return t.text == qt.Term }); i >= 0 {
			p.terms[i].weight = max(p.terms[i].weight, qt.Weight)
			continue
		}
		if len(p.terms) == MaxQueryTerms {
			continue
		}
		p.terms = append(p.terms, pterm{text: qt.Term, weight: qt.Weight})
	}
	for i := range p.terms {
		t := &p.terms[i]
		t.id, _ = c.termIDs.find(c.texts, t.text)
		if t.id == 0 || c.terms[t.id].df == 0 {
			t.id = 0
			continue
		}
		df := float64(c.terms[t.id].df)
		t.idf = math.Log(1 + (n-df+0.5)/(df+0.5))
		t.w = t.weight * t.idf
	}
	return p, nil
}

// tfNorm is BM25F's combined term frequency: the sum over fields of the
// field weight times the frequency divided by the field's length
// normalisation.
func (p *prepared) tfNorm(tf *[MaxFields]uint32, lens []uint32) float64 {
	x := 0.0
	for f := range p.c.nf {
		if tf[f] != 0 && p.fw[f] != 0 {
			x += p.fw[f] * float64(tf[f]) / (p.n0[f] + p.nl[f]*float64(lens[f]))
		}
	}
	return x
}

// termScore is the score of a term of multiplier w (weight · idf) in a
// document where its combined frequency is x.
func (p *prepared) termScore(w, x float64) float64 {
	if x == 0 {
		return 0
	}
	return w * (x * (p.k1 + 1) / (p.k1 + x))
}

// boundOf is an upper bound of termScore, for a term of multiplier w,
// over postings whose block maxima are m.
func (p *prepared) boundOf(w float64, m []float32) float64 {
	x := 0.0
	for f := range m {
		if m[f] != 0 && p.fw[f] != 0 {
			x += p.fw[f] * p.r[f] * float64(m[f])
		}
	}
	if math.IsInf(x, 1) {
		return x
	}
	return p.termScore(w, x) * boundSlack
}

func (p *prepared) setScale() {
	p.scale = 0
	for f := range p.c.nf {
		p.scale = max(p.scale, p.fw[f]*p.r[f]/p.c.fw[f])
	}
}

// termBound is an upper bound of termScore over all postings of te.
func (p *prepared) termBound(w float64, te *termEntry) float64 {
	return p.boundOf(w, te.mx[:p.c.nf])
}

// present reports whether a posting counts as an occurrence: the term is
// in a field of positive weight.
func (p *prepared) present(tf *[MaxFields]uint32) bool {
	for f := range p.c.nf {
		if tf[f] != 0 && p.fw[f] != 0 {
			return true
		}
	}
	return false
}

const noDoc = math.MaxUint32

// cursor walks the postings of one query term.
type cursor struct {
	te  *termEntry // a copy of the list's headers
	qi  int        // index in prepared.terms
	w   float64
	ub  float64 // bound over the whole list
	pos int

	// The block of the cached bound: blk, its bound bb and last document
	// bLast. Without usable block maxima the whole list is one block.
	blk    int
	nb     int // blocks, 0 when block maxima are not used
	bb     float64
	bLast  uint32
	lastID uint32 // the list's last document

	pbc []float64 // postingBound by impact level, 0 until computed
}

func (cu *cursor) doc() uint32 {
	if cu.pos < len(cu.te.docs) {
		return cu.te.docs[cu.pos]
	}
	return noDoc
}

// seek moves to the first posting at or after d (galloping).
func (cu *cursor) seek(d uint32) {
	docs := cu.te.docs
	i := cu.pos
	if i >= len(docs) || docs[i] >= d {
		return
	}
	step := 1
	for i+step < len(docs) && docs[i+step] < d {
		i += step
		step *= 2
	}
	// docs[i] < d; the answer is in (i, i+step].
	hi := min(i+step, len(docs))
	lo := i + 1
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if docs[m] < d {
			lo = m + 1
		} else {
			hi = m
		}
	}
	cu.pos = lo
}

// blockBound returns the bound of the block holding the first posting at
// or after d and that block's last document; ok is false when the list
// has no posting at or after d. d never decreases between calls.
func (cu *cursor) blockBound(p *prepared, d uint32) (bound float64, last uint32, ok bool) {
	if d <= cu.bLast {
		return cu.bb, cu.bLast, true
	}
	if d > cu.lastID || cu.nb == 0 {
		return 0, 0, false
	}
	docs, nb := cu.te.docs, cu.nb
	lastOf := func(b int) uint32 { return docs[min((b+1)*blockSize, len(docs))-1] }
	// Gallop from the next block, then search (lo, hi]:
	// lastOf(lo) < d <= lastOf(hi).
	b := cu.blk
	step := 1
	for b+step < nb-1 && lastOf(b+step) < d {
		b += step
		step *= 2
	}
	lo, hi := b, min(b+step, nb-1)
	for hi-lo > 1 {
		m := int(uint(lo+hi) >> 1)
		if lastOf(m) < d {
			lo = m
		} else {
			hi = m
		}
	}
	cu.setBlock(p, hi)
	return cu.bb, cu.bLast, true
}

func (cu *cursor) setBlock(p *prepared, b int) {
	nf := p.c.nf
	docs := cu.te.docs
	cu.blk, cu.bLast = b, docs[min((b+1)*blockSize, len(docs))-1]
	cu.bb = p.boundOf(cu.w, cu.te.bx[b*nf:b*nf+nf])
}

// pbcMinPostings is the shortest posting list whose cursor caches its
// posting bounds (2 KiB, which a short list does not repay).
const pbcMinPostings = 256

// postingBound bounds the term's score in the document at the cursor
// from the posting's impact level, without reading the document.
func (cu *cursor) postingBound(p *prepared) float64 {
	q := cu.te.px[cu.pos]
	if q == 255 { // unbounded
		return cu.bb
	}
	if cu.pbc == nil {
		if len(cu.te.docs) < pbcMinPostings {
			// A short list: computing costs less than the cache.
			return min(cu.bb, p.termScore(cu.w, p.scale*impactBound[q])*boundSlack)
		}
		cu.pbc = make([]float64, 256)
	}
	b := cu.pbc[q]
	if b == 0 {
		b = p.termScore(cu.w, p.scale*impactBound[q]) * boundSlack
		cu.pbc[q] = b
	}
	return min(cu.bb, b)
}

// score returns the term's score in the document at the cursor.
func (cu *cursor) score(p *prepared) float64 {
	c := p.c
	d := cu.te.docs[cu.pos]
	var tf [MaxFields]uint32
	c.unpackTF(cu.te.ovf, d, cu.te.tfs[cu.pos], &tf)
	return p.termScore(cu.w, p.tfNorm(&tf, p.lensOf(d)))
}

func (cu *cursor) presentHere(p *prepared) bool {
	d := cu.te.docs[cu.pos]
	var tf [MaxFields]uint32
	p.c.unpackTF(cu.te.ovf, d, cu.te.tfs[cu.pos], &tf)
	return p.present(&tf)
}

// cursors returns cursors of the known terms; with positive set, only of
// terms of positive weight.
func (p *prepared) cursors(positive bool) []cursor {
	var out []cursor
	for _, cu := range p.lists {
		if !positive || cu.w > 0 {
			out = append(out, cu)
		}
	}
	return out
}

// capture makes the cursors of the known terms and takes the slices the
// search reads. The caller holds the read lock.
func (p *prepared) capture() {
	c := p.c
	p.docs, p.dlens, p.dead = c.docs[:len(c.docs):len(c.docs)], c.dlens[:len(c.dlens):len(c.dlens)], c.dead[:len(c.dead):len(c.dead)]
	p.marks = c.marks[:len(c.marks):len(c.marks)]
	for qi, t := range p.terms {
		if t.id == 0 {
			continue
		}
		// A copy of the list's headers; the block maxima are copied too,
		// since the last block's may still grow.
		te := c.terms[t.id]
		te.bx = slices.Clone(te.bx)
		cu := cursor{te: &te, qi: qi, w: t.w, ub: p.termBound(t.w, &te), lastID: te.docs[len(te.docs)-1]}
		if nb := len(te.bx) / c.nf; nb > 0 {
			cu.nb = nb
			cu.setBlock(p, 0)
		} else {
			cu.bb, cu.bLast = cu.ub, cu.lastID
		}
		p.lists = append(p.lists, cu)
	}
}

func (p *prepared) isDead(doc uint32) bool { return isDead(p.dead, doc) }

// docFilter decides whether a document, by number, may be returned.
type docFilter func(doc uint32) bool

// filterOf returns q's filter (Query.Admit or Query.Filter) over the
// documents p captured, nil when q has none.
func (p *prepared) filterOf(q *Query) docFilter {
	docs, marks := p.docs, p.marks
	switch admit, filter := q.Admit, q.Filter; {
	case admit != nil:
		return func(d uint32) bool { return admit(Candidate{&docs[d], markOf(marks, d)}) }
	case filter != nil:
		return func(d uint32) bool { return filter(docs[d].id, docs[d].attrs()) }
	}
	return nil
}

func (p *prepared) lensOf(n uint32) []uint32 {
	i := int(n) * p.c.nf
	return p.dlens[i : i+p.c.nf : i+p.c.nf]
}

// topK keeps the best hits: a min-heap on rank, h[0] the worst kept.
// Ranks compare scores first; a document's id is read only when its
// score ties with another's, or for the hits returned, so most
// candidates, kept for a while or not, cost no access to the document
// table.
type topK struct {
	docs []docEntry
	k    int
	h    []ranked
}

type ranked struct {
	score  float64
	doc    uint32
	hasID  bool
	hi, lo uint64 // the id, big endian, once read
}

func (t *topK) loadID(r *ranked) {
	if !r.hasID {
		id := &t.docs[r.doc].id
		r.hi, r.lo, r.hasID = binary.BigEndian.Uint64(id[:8]), binary.BigEndian.Uint64(id[8:]), true
	}
}

// worse reports whether a ranks below b: lower score, or the same score
// and a larger id.
func (t *topK) worse(a, b *ranked) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	t.loadID(a)
	t.loadID(b)
	if a.hi != b.hi {
		return a.hi > b.hi
	}
	return a.lo > b.lo
}

func (t *topK) full() bool { return len(t.h) == t.k }

// threshold is the score a document must reach to be considered.
func (t *topK) threshold() float64 {
	if t.full() && t.k > 0 {
		return t.h[0].score
	}
	return 0
}

// wants reports whether r would enter the heap.
func (t *topK) wants(r *ranked) bool {
	if t.k == 0 {
		return false
	}
	return !t.full() || t.worse(&t.h[0], r)
}

func (t *topK) push(r ranked) {
	if len(t.h) < t.k {
		t.h = append(t.h, r)
		for i := len(t.h) - 1; i > 0; {
			parent := (i - 1) / 2
			if !t.worse(&t.h[i], &t.h[parent]) {
				break
			}
			t.h[i], t.h[parent] = t.h[parent], t.h[i]
			i = parent
		}
		return
	}
	t.h[0] = r
	for i := 0; ; {
		l := 2*i + 1
		if l >= len(t.h) {
			break
		}
		m := l
		if r := l + 1; r < len(t.h) && t.worse(&t.h[r], &t.h[l]) {
			m = r
		}
		if !t.worse(&t.h[m], &t.h[i]) {
			break
		}
		t.h[i], t.h[m] = t.h[m], t.h[i]
		i = m
	}
}

// hits returns the kept hits best first.
func (t *topK) hits() []Hit {
	slices.SortFunc(t.h, func(a, b ranked) int {
		switch {
		case t.worse(&b, &a):
			return -1
		case t.worse(&a, &b):
			return 1
		}
		return 0
	})
	out := make([]Hit, len(t.h))
	for i, r := range t.h {
		d := &t.docs[r.doc]
		out[i] = Hit{ID: d.id, Score: r.score, Attrs: d.attrs()}
	}
	return out
}

// Search returns the best q.Limit documents for q, best first: highest
// score, then lowest id. The results are exactly those of scoring every
// matching document (see the package comment for the algorithm).
func (ix *Index) Search(q Query) ([]Hit, error) {
	if q.Limit == 0 {
		return nil, ix.checkQuery(&q)
	}
	p, err := ix.prepareSearch(&q)
	if err != nil {
		return nil, err
	}
	top := &topK{docs: p.docs, k: q.Limit, h: make([]ranked, 0, min(q.Limit, 1024))}
	if q.All {
		p.conjunctive(p.filterOf(&q), func(doc uint32, score float64) bool {
			r := ranked{score: score, doc: doc}
			if top.wants(&r) {
				top.push(r)
			}
			return true
		}, true)
	} else {
		p.maxScore(top, p.filterOf(&q))
	}
	return top.hits(), nil
}

// prepareSearch prepares q under the read lock for a search that runs
// without it.
func (ix *Index) prepareSearch(q *Query) (*prepared, error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	p, err := ix.prepare(ix.c, q)
	if err != nil {
		return nil, err
	}
	p.capture()
	return p, nil
}

// checkQuery validates q.
func (ix *Index) checkQuery(q *Query) error {
	_, err := ix.prepareSearch(q)
	return err
}

// maxScore is document-at-a-time top-k retrieval with MaxScore (Turtle
// and Flood, "Query evaluation: strategies and optimizations", 1995)
// refined by block-max bounds (Ding and Suel, "Faster top-k document
// retrieval using block-max indexes", 2011; the block-max MaxScore
// variant studied by Mallia et al., "An experimental study of index
// compression and DAAT query processing methods", 2019).
//
// Lists are ordered by their bound. The longest prefix of lists whose
// bounds sum below the threshold (the score of the k-th best hit so far)
// is non-essential: a document found only in them cannot enter the
// results, so candidates come from the essential lists alone. Before a
// candidate is scored, the block maxima of every list over the candidate
// give a tighter bound; when even that is below the threshold, the whole
// interval up to the nearest block end is skipped. Non-essential lists
// are probed last, and scoring stops as soon as the bound of what is
// left cannot reach the threshold. A document is skipped only when its
// bound is strictly below the threshold, so documents that tie with the
// k-th hit are still compared by id.
func (p *prepared) maxScore(top *topK, filter docFilter) {
	lists := p.cursors(true)
	if len(lists) == 0 {
		return
	}
	slices.SortFunc(lists, func(a, b cursor) int {
		return cmp.Or(cmp.Compare(a.ub, b.ub), cmp.Compare(a.qi, b.qi))
	})
	prefix := make([]float64, len(lists)) // bounds of lists[:i+1]
	sum := 0.0
	for i := range lists {
		sum += lists[i].ub
		prefix[i] = sum
	}
	if len(lists) == 1 {
		p.single(top, filter, &lists[0])
		return
	}
	contrib := make([]float64, len(p.terms))
	bb := make([]float64, len(lists)) // block bounds over the candidate
	// theta only grows: a document scoring below it cannot enter.
	theta := p.seedThreshold(lists, top.k, filter)
	ess := 0 // lists[ess:] are essential
	for ess < len(lists) && prefix[ess] < theta {
		ess++
	}
	// The block bounds bb, their sum bsum and the first block end end,
	// which hold for every document up to end: d only grows, and no
	// list's block changes before d passes end.
	bsum, end, haveBlocks := 0.0, uint32(0), false
	for ess < len(lists) {
		d := uint32(noDoc)
		for i := ess; i < len(lists); i++ {
			d = min(d, lists[i].doc())
		}
		if d == noDoc {
			return
		}
		if theta > 0 {
			// Block bound over every list, for the interval [d, end].
			if !haveBlocks || d > end {
				bsum, end, haveBlocks = 0.0, uint32(noDoc), true
				for i := range lists {
					b, last, ok := lists[i].blockBound(p, d)
					if !ok {
						b = 0
					} else {
						end = min(end, last)
					}
					bb[i] = b
					bsum += b
				}
			}
			if bsum < theta {
				if end == noDoc {
					return
				}
				for i := ess; i < len(lists); i++ {
					lists[i].seek(end + 1)
				}
				continue
			}
			// The bound of d itself: the essential lists that hold it
			// and the non-essential ones.
			cb := 0.0
			for i := range lists {
				switch {
				case i < ess:
					cb += bb[i]
				case lists[i].doc() == d:
					cb += lists[i].postingBound(p)
				}
			}
			if cb < theta {
				advance(lists[ess:], d)
				continue
			}
		}
		if p.isDead(d) {
			advance(lists[ess:], d)
			continue
		}
		partial := 0.0
		for i := ess; i < len(lists); i++ {
			l := &lists[i]
			if l.doc() == d {
				s := l.score(p)
				contrib[l.qi] = s
				partial += s
				l.pos++
			}
		}
		pruned := false
		if ess > 0 {
			rest := 0.0 // what the non-essential lists left can add
			if theta > 0 {
				for i := range ess {
					rest += bb[i]
				}
			}
			for i := ess - 1; i >= 0; i-- {
				if theta > 0 && partial+rest < theta {
					pruned = true
					break
				}
				l := &lists[i]
				rest -= bb[i]
				l.seek(d)
				if l.doc() == d {
					if theta > 0 && partial+rest+l.postingBound(p) < theta {
						pruned = true
						break
					}
					s := l.score(p)
					contrib[l.qi] = s
					partial += s
				}
			}
		}
		// The score is summed in query order, as every other way of
		// scoring does, so equal documents get bit-identical scores.
		score := 0.0
		for i := range contrib {
			score += contrib[i]
			contrib[i] = 0
		}
		if pruned || score <= 0 || score < theta {
			continue
		}
		r := ranked{score: score, doc: d}
		if !top.wants(&r) {
			continue
		}
		if filter != nil && !filter(d) {
			continue
		}
		top.push(r)
		if top.threshold() > theta {
			theta = top.threshold()
			for ess < len(lists) && prefix[ess] < theta {
				ess++
			}
		}
	}
}

// single is maxScore for one list, without the bookkeeping of several:
// blocks and postings are dismissed by comparing their bounds, in the
// domain of combined frequencies, with the frequency a document needs to
// reach the threshold.
func (p *prepared) single(top *topK, filter docFilter, cu *cursor) {
	c, te := p.c, cu.te
	nf := c.nf
	theta := 0.0
	xmin := 0.0 // combined frequency needed to reach theta
	n := len(te.docs)
	size := n // postings per block
	if cu.nb > 0 {
		size = blockSize
	}
	for start := 0; start < n; start += size {
		end := min(start+size, n)
		if cu.nb > 0 && theta > 0 {
			b := start / blockSize
			x := 0.0
			for f, m := range te.bx[b*nf : b*nf+nf] {
				if m != 0 && p.fw[f] != 0 {
					x += p.fw[f] * p.r[f] * float64(m)
				}
			}
			if x < xmin {
				continue
			}
		}
		for i := start; i < end; i++ {
			if p.scale*impactBound[te.px[i]] < xmin {
				continue
			}
			d := te.docs[i]
			if p.isDead(d) {
				continue
			}
			var tf [MaxFields]uint32
			c.unpackTF(te.ovf, d, te.tfs[i], &tf)
			score := p.termScore(cu.w, p.tfNorm(&tf, p.lensOf(d)))
			if score <= 0 || score < theta {
				continue
			}
			r := ranked{score: score, doc: d}
			if !top.wants(&r) || filter != nil && !filter(d) {
				continue
			}
			top.push(r)
			if t := top.threshold(); t > theta {
				theta = t
				xmin = p.freqFor(cu.w, theta)
			}
		}
	}
}

// freqFor returns a combined frequency below which a term of multiplier w
// scores below theta, allowing for rounding (it errs low).
func (p *prepared) freqFor(w, theta float64) float64 {
	t := theta / boundSlack
	den := w*(p.k1+1) - t
	if den <= 0 {
		return math.Inf(1)
	}
	return t * p.k1 / den / boundSlack
}

// seedBlocks is how many of its best blocks each list scores to seed the
// threshold.
const seedBlocks = 1

// seedThreshold returns a score that at least k documents reach, found
// by scoring the best blocks of each list before the search: the k-th
// best sum of partial scores of distinct live documents that pass the
// filter. A partial score is at most the document's score, so the k
// best documents all reach it, and starting the search with it as the
// threshold lets the search skip from the start what it would otherwise
// score until its own k-th best had risen that high. It returns 0 when
// fewer than k documents were seen.
func (p *prepared) seedThreshold(lists []cursor, k int, filter docFilter) float64 {
	c := p.c
	seen := make([]seed, 0, len(lists)*seedBlocks*blockSize)
	for i := range lists {
		cu := &lists[i]
		te := cu.te
		if cu.nb == 0 {
			seen = appendSeeds(seen, p, cu, 0, min(len(te.docs), seedBlocks*blockSize))
			continue
		}
		nf := c.nf
		var best [seedBlocks]int
		for j := range best {
			best[j] = -1
		}
		var bestX [seedBlocks]float64
		for b := range cu.nb {
			x := 0.0
			for f, m := range te.bx[b*nf : b*nf+nf] {
				x += p.fw[f] * p.r[f] * float64(m)
			}
			for j := range best {
				if best[j] < 0 || x > bestX[j] {
					copy(best[j+1:], best[j:])
					copy(bestX[j+1:], bestX[j:])
					best[j], bestX[j] = b, x
					break
				}
			}
		}
		for _, b := range best {
			if b >= 0 {
				seen = appendSeeds(seen, p, cu, b*blockSize, min((b+1)*blockSize, len(te.docs)))
			}
		}
	}
	if len(seen) < k {
		return 0
	}
	slices.SortFunc(seen, func(a, b seed) int { return cmp.Compare(a.doc, b.doc) })
	// Sum the partial scores of each document; keep the live ones that
	// pass the filter.
	out := seen[:0]
	for i := 0; i < len(seen); {
		s := seen[i]
		for i++; i < len(seen) && seen[i].doc == s.doc; i++ {
			s.score += seen[i].score
		}
		if s.score > 0 && !p.isDead(s.doc) && (filter == nil || filter(s.doc)) {
			out = append(out, s)
		}
	}
	if len(out) < k {
		return 0
	}
	slices.SortFunc(out, func(a, b seed) int { return cmp.Compare(b.score, a.score) })
	// The partial scores were summed in another order than scores are:
	// allow for rounding.
	return out[k-1].score / boundSlack
}

type seed struct {
	doc   uint32
	score float64
}

// appendSeeds appends the partial scores of postings [from, to) of cu.
func appendSeeds(dst []seed, p *prepared, cu *cursor, from, to int) []seed {
	c := p.c
	te := cu.te
	for i := from; i < to; i++ {
		d := te.docs[i]
		var tf [MaxFields]uint32
		c.unpackTF(te.ovf, d, te.tfs[i], &tf)
		dst = append(dst, seed{doc: d, score: p.termScore(cu.w, p.tfNorm(&tf, p.lensOf(d)))})
	}
	return dst
}

// advance moves the lists that are at d past it.
func advance(lists []cursor, d uint32) {
	for i := range lists {
		if lists[i].doc() == d {
			lists[i].pos++
		}
	}
}

// conjunctive calls fn for every live document that contains every query
// term (in a field of positive weight) and passes filter, in document
// number order, with its score when withScore is set; fn returns false to
// stop. The lists are intersected by galloping from the shortest.
func (p *prepared) conjunctive(filter docFilter, fn func(doc uint32, score float64) bool, withScore bool) {
	if len(p.terms) == 0 {
		return
	}
	for _, t := range p.terms {
		if t.id == 0 {
			return
		}
	}
	lists := p.cursors(false)
	slices.SortFunc(lists, func(a, b cursor) int {
		return cmp.Or(cmp.Compare(len(a.te.docs), len(b.te.docs)), cmp.Compare(a.qi, b.qi))
	})
	contrib := make([]float64, len(p.terms))
	d := lists[0].doc()
	for d != noDoc {
		match := true
		for i := 1; i < len(lists); i++ {
			lists[i].seek(d)
			if x := lists[i].doc(); x != d {
				match = false
				lists[0].seek(x)
				break
			}
		}
		if !match {
			d = lists[0].doc()
			continue
		}
		if !p.isDead(d) && p.allPresent(lists) && (filter == nil || filter(d)) {
			score := 0.0
			if withScore {
				for i := range lists {
					contrib[lists[i].qi] = lists[i].score(p)
				}
				for i := range contrib {
					score += contrib[i]
					contrib[i] = 0
				}
			}
			if !fn(d, score) {
				return
			}
		}
		lists[0].pos++
		d = lists[0].doc()
	}
}

func (p *prepared) allPresent(lists []cursor) bool {
	for i := range lists {
		if !lists[i].presentHere(p) {
			return false
		}
	}
	return true
}

// disjunctive calls fn for every live document that contains a query
// term of positive weight (in a field of positive weight) and passes
// filter, in document number order; fn returns false to stop.
func (p *prepared) disjunctive(filter docFilter, fn func(doc uint32) bool) {
	lists := p.cursors(true)
	for {
		d := uint32(noDoc)
		for i := range lists {
			d = min(d, lists[i].doc())
		}
		if d == noDoc {
			return
		}
		present := false
		for i := range lists {
			if lists[i].doc() == d {
				present = present || lists[i].presentHere(p)
				lists[i].pos++
			}
		}
		if present && !p.isDead(d) && (filter == nil || filter(d)) {
			if !fn(d) {
				return
			}
		}
	}
}

// Match calls fn for every document that matches q (all terms with
// q.All, any term of positive weight otherwise) and passes q.Filter (or
// q.Admit), in the order documents were added; fn returns false to stop.
// It visits every matching posting: use it where every match is needed
// (a listing with an exact count), Search otherwise. q.Limit is ignored.
// Like Search it runs without the index's lock, on the documents and
// postings that existed when it started; fn and the filter may call the
// index.
func (ix *Index) Match(q Query, fn func(id memory.ID, a Attrs) bool) error {
	q.Limit = 0
	p, err := ix.prepareSearch(&q)
	if err != nil {
		return err
	}
	call := func(doc uint32) bool { return fn(p.docs[doc].id, p.docs[doc].attrs()) }
	if q.All {
		p.conjunctive(p.filterOf(&q), func(doc uint32, _ float64) bool { return call(doc) }, false)
	} else {
		p.disjunctive(p.filterOf(&q), call)
	}
	return nil
}

// Count returns the number of documents Match would visit.
func (ix *Index) Count(q Query) (int, error) {
	n := 0
	err := ix.Match(q, func(memory.ID, Attrs) bool { n++; return true })
	return n, err
}
