package searchindex

import (
	"fmt"
	"hash/maphash"
	"runtime"
	"slices"
	"strings"
	"sync"

	"memsvc.dev/memsvc/pkg/memory"
)

// buildChunk is the number of documents Build hands an analysing worker
// at once.
const buildChunk = 256

// AddFunc adds one document during Build. The document is copied (its
// texts are not: strings do not change).
type AddFunc func(doc *Document) error

// A Builder builds an index from documents analysed on several
// goroutines at once: each goroutine analyses with an Analyser of its
// own, which gathers the documents into batches, and one goroutine adds
// the batches in the order the documents are to be numbered. The index
// is the one adding the documents in that order to an empty index gives
// (Index.Add), built in one pass with every posting list sized exactly.
//
// Each Analyser numbers the terms it meets itself, so the analysing
// goroutines share nothing; Add translates those numbers into the
// index's, looking a term's text up only the first time an analyser
// names it. Batches of one Analyser must be added in the order they were
// taken from it.
type Builder struct {
	ix *Index
	an []builderAnalyser // by Analyser.n
}

// builderAnalyser is what Add knows of an Analyser's numbering.
type builderAnalyser struct {
	texts []string // by the analyser's term number; texts[gapTerm] is ""
	ids   []uint32 // the index's term id by the analyser's number, 0 until met
	next  int      // sequence number of the next batch to add
}

// NewBuilder returns a builder of an index with configuration cfg.
func NewBuilder(cfg Config) (*Builder, error) {
	ix, err := New(cfg)
	if err != nil {
		return nil, err
	}
	return &Builder{ix: ix}, nil
}

// Analyser returns a new analyser for b. It is not safe to call Analyser
// and Add concurrently.
func (b *Builder) Analyser() *Analyser {
	b.an = append(b.an, builderAnalyser{texts: []string{""}, ids: []uint32{gapTerm}})
	return &Analyser{
		n:      len(b.an) - 1,
		an:     b.ix.cfg.Analyzer,
		fields: b.ix.cfg.Fields,
		terms:  newDict(1024),
		texts:  []string{""},
	}
}

// An Analyser analyses documents for a Builder, on one goroutine at a
// time.
type Analyser struct {
	n       int // index in Builder.an
	an      Analyzer
	fields  []Field
	terms   dict     // the analyser's term numbers by text
	texts   []string // by term number
	scratch analysed
	batches int    // batches taken
	cur     *Batch // being filled
	known   int    // len(texts) when the current batch began
}

// A Batch is documents an Analyser analysed, to be added to a Builder.
type Batch struct {
	from, seq int
	docs      []batchDoc
	terms     []uint32 // every document's term sequence, in the analyser's numbers
	newTexts  []string // texts of the term numbers the batch introduced, in order
}

type batchDoc struct {
	id    memory.ID
	attrs Attrs
	lens  [MaxFields]uint32
	n     int // terms in Batch.terms, gaps included
}

// Add analyses doc into the current batch. The document is not kept;
// documents without terms are left out, as Build leaves them out.
func (a *Analyser) Add(doc *Document) {
	if a.cur == nil {
		a.cur = &Batch{from: a.n, seq: a.batches}
		a.known = len(a.texts)
	}
	analyse(a.an, a.fields, doc, &a.scratch)
	if a.scratch.total == 0 {
		return
	}
	bt := a.cur
	for _, t := range a.scratch.terms {
		id := uint32(gapTerm)
		if t != "" {
			id = a.number(t)
		}
		bt.terms = append(bt.terms, id)
	}
	bt.docs = append(bt.docs, batchDoc{id: a.scratch.id, attrs: a.scratch.attrs, lens: a.scratch.lens, n: len(a.scratch.terms)})
}

// number returns the analyser's number of term t, giving it the next one
// when t is new.
func (a *Analyser) number(t string) uint32 {
	h := a.terms.hash(t)
	if id, ok := a.terms.find(a.texts, t, h); ok {
		return id
	}
	// A copy: t may be part of a document's text.
	a.texts = append(a.texts, strings.Clone(t))
	id := uint32(len(a.texts) - 1)
	a.terms.insert(a.texts, id, h)
	return id
}

// dict is an Analyser's term numbering: open addressing with linear
// probing, like termTable, but a slot also holds the term's length and
// its first 8 bytes, so finding a term of up to 8 bytes (most of them)
// reads one slot and no text. Every token of every document is looked up
// here once, so this is a large share of a build.
type dict struct {
	seed  maphash.Seed
	slots []dictSlot
	n     int
}

// dictSlot is a term: tag is the upper 24 bits of its hash and its length
// (255 for 255 bytes and more), never 0 for a term; word its first 8
// bytes, little endian, zero padded.
type dictSlot struct {
	tag, id uint32
	word    uint64
}

// dictHash is what dict compares a term by.
type dictHash struct {
	h    uint64
	tag  uint32
	word uint64
}

func newDict(n int) dict {
	return dict{seed: maphash.MakeSeed(), slots: make([]dictSlot, termTableSize(n))}
}

func (d *dict) hash(s string) dictHash {
	h := maphash.String(d.seed, s)
	var w uint64
	for i := min(len(s), 8) - 1; i >= 0; i-- {
		w = w<<8 | uint64(s[i])
	}
	return dictHash{h: h, tag: uint32(h>>40)<<8 | uint32(min(len(s), 255)), word: w}
}

// find returns the number of term s, whose texts are texts.
func (d *dict) find(texts []string, s string, h dictHash) (uint32, bool) {
	mask := uint64(len(d.slots) - 1)
	for i := h.h & mask; ; i = (i + 1) & mask {
		v := &d.slots[i]
		if v.tag == 0 {
			return 0, false
		}
		if v.tag == h.tag && v.word == h.word && (len(s) <= 8 || texts[v.id][8:] == s[8:]) {
			return v.id, true
		}
	}
}

// insert records term number id, with hash h, not in the table.
func (d *dict) insert(texts []string, id uint32, h dictHash) {
	if (d.n+1)*4 > len(d.slots)*3 {
		old := d.slots
		d.slots, d.n = make([]dictSlot, termTableSize(d.n+1)), 0
		for _, v := range old {
			if v.tag != 0 {
				d.insert(texts, v.id, d.hash(texts[v.id]))
			}
		}
	}
	mask := uint64(len(d.slots) - 1)
	for i := h.h & mask; ; i = (i + 1) & mask {
		if d.slots[i].tag == 0 {
			d.slots[i] = dictSlot{tag: h.tag, id: id, word: h.word}
			d.n++
			return
		}
	}
}

// Batch returns the documents added since the last call (possibly none)
// and starts a new batch.
func (a *Analyser) Batch() *Batch {
	bt := a.cur
	if bt == nil {
		bt = &Batch{from: a.n, seq: a.batches}
		a.known = len(a.texts)
	}
	bt.newTexts = a.texts[a.known:len(a.texts):len(a.texts)]
	a.cur = nil
	a.batches++
	return bt
}

// Add numbers the documents of bt after those added before. A document id
// added twice fails with ErrDuplicate.
func (b *Builder) Add(bt *Batch) error {
	if bt.from >= len(b.an) || bt.seq != b.an[bt.from].next {
		return fmt.Errorf("build search index: batch %d of analyser %d added out of order", bt.seq, bt.from)
	}
	ba := &b.an[bt.from]
	ba.next++
	ba.texts = append(ba.texts, bt.newTexts...)
	for len(ba.ids) < len(ba.texts) {
		ba.ids = append(ba.ids, 0)
	}
	c := b.ix.c
	terms := bt.terms
	for i := range bt.docs {
		d := &bt.docs[i]
		seq := terms[:d.n]
		terms = terms[d.n:]
		if _, dup := c.ids.find(c.docs, d.id); dup {
			return fmt.Errorf("build search index: %s: %w", d.id, ErrDuplicate)
		}
		if uint64(len(c.docs)) >= c.maxDocs {
			return fmt.Errorf("build search index: %w", ErrFull)
		}
		c.buf = c.buf[:0]
		for _, l := range seq {
			id := ba.ids[l]
			if id == 0 && l != gapTerm {
				id = c.intern(ba.texts[l])
				ba.ids[l] = id
			}
			c.buf = appendUvarint32(c.buf, id)
		}
		c.appendDoc(d.id, d.attrs, d.lens[:], c.buf)
	}
	return nil
}

// Finish lays out the postings and returns the index. The builder must
// not be used afterwards.
func (b *Builder) Finish() *Index {
	b.ix.c.buildPostings()
	ix := b.ix
	b.ix, b.an = nil, nil
	return ix
}

type buildJob struct {
	seq  int
	docs []Document
}

type buildResult struct {
	seq int
	bt  *Batch
}

// Build returns an index of the documents fill passes to add. Documents
// are analysed by one worker per CPU, each with its Analyser, while one
// collector adds the batches in the order fill passed the documents, so
// the same documents always give the same index. A document id passed
// twice fails with ErrDuplicate; documents without terms are skipped.
func Build(cfg Config, fill func(add AddFunc) error) (*Index, error) {
	b, err := NewBuilder(cfg)
	if err != nil {
		return nil, err
	}
	var (
		workers = runtime.GOMAXPROCS(0)
		work    = make(chan buildJob, workers)
		results = make(chan buildResult, workers)
		wg      sync.WaitGroup
		done    = make(chan struct{})
		mu      sync.Mutex // guards colErr
		colErr  error
	)
	for range workers {
		a := b.Analyser()
		wg.Go(func() {
			for job := range work {
				for i := range job.docs {
					a.Add(&job.docs[i])
				}
				results <- buildResult{seq: job.seq, bt: a.Batch()}
			}
		})
	}
	go func() {
		defer close(done)
		pending := map[int]*Batch{}
		next := 0
		var err error
		for res := range results {
			pending[res.seq] = res.bt
			for {
				bt, ok := pending[next]
				if !ok {
					break
				}
				delete(pending, next)
				next++
				if err == nil {
					err = b.Add(bt)
				}
			}
			if err != nil {
				mu.Lock()
				colErr = err
				mu.Unlock()
			}
		}
	}()
	failed := func() error {
		mu.Lock()
		defer mu.Unlock()
		return colErr
	}

	seq := 0
	chunk := make([]Document, 0, buildChunk)
	add := func(d *Document) error {
		if len(chunk) == buildChunk {
			if err := failed(); err != nil {
				return err
			}
			work <- buildJob{seq: seq, docs: chunk}
			seq++
			chunk = make([]Document, 0, buildChunk)
		}
		dc := *d
		for f := range dc.Fields {
			dc.Fields[f] = slices.Clone(dc.Fields[f])
		}
		chunk = append(chunk, dc)
		return nil
	}
	ferr := fill(add)
	if ferr == nil && len(chunk) > 0 {
		work <- buildJob{seq: seq, docs: chunk}
	}
	close(work)
	wg.Wait()
	close(results)
	<-done
	if ferr != nil {
		return nil, ferr
	}
	if colErr != nil {
		return nil, colErr
	}
	return b.Finish(), nil
}

func appendUvarint32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}
