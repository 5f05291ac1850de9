package textindex

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// rebuildBatchBytes is how much Rebuild writes before committing a batch,
// counting pebble's estimate of a memtable node per key. It stays below
// half of pebble's default 4 MiB memtable, above which a batch is committed
// as a separate sorted "flushable batch", which is slower.
const rebuildBatchBytes = 1536 << 10

// memtableNodeBytes is pebble's upper estimate of the memtable space of one
// key besides the key and value (a skiplist node of maximum height).
const memtableNodeBytes = 200

// rebuildChunk is the number of documents Rebuild hands a worker at once.
const rebuildChunk = 256

// maxRunPostings bounds the postings Rebuild holds in memory before it
// writes them out (about 8 bytes each, plus about 80 bytes per document).
// An index of up to this many postings (some 150,000 documents of 40
// words) is written in one run, in ascending key order, so pebble's
// flushes produce tables that do not overlap and compactions only move
// them; bigger indexes are written in several runs that pebble merges.
const maxRunPostings = 4 << 20

// ErrDuplicate is returned by Rebuild when fill passes a document twice.
var ErrDuplicate = errors.New("document added twice")

// AddFunc adds one document during Rebuild. It may keep attrs and texts
// (not the backing array of texts) until Rebuild returns.
type AddFunc func(doc memory.ID, attrs []byte, texts ...string) error

type rebuildDoc struct {
	doc   memory.ID
	attrs []byte
	texts []string
}

// analysedDoc is a document after tokenization, terms in ascending order.
type analysedDoc struct {
	doc    memory.ID
	attrs  []byte
	length int
	terms  []termFreq
}

// Rebuild replaces everything under prefix with a new index of the
// documents fill passes to add, and returns it open. fill must pass each
// document at most once (ErrDuplicate otherwise); documents without terms
// are skipped. Nothing else may write under prefix until Rebuild returns.
//
// Documents are analysed by one worker per CPU while a collector gathers
// their postings and writes them in key order (see maxRunPostings), which
// is several times faster than writing document by document. Batches are
// committed without waiting for the disk and the version is written last
// with a synced commit, so a rebuild that fails or is cut short by a crash
// leaves an index that Open reports as stale.
func Rebuild(db *store.DB, prefix []byte, fill func(add AddFunc) error) (*Index, error) {
	return rebuild(db, prefix, fill, maxRunPostings)
}

// rebuild is Rebuild with a given run size, so tests can force several
// runs.
func rebuild(db *store.DB, prefix []byte, fill func(add AddFunc) error, runPostings int) (*Index, error) {
	ix := newIndex(db, prefix)
	b := db.NewBatch()
	b.DeleteRange(ix.prefix, store.PrefixEnd(ix.prefix))
	err := b.CommitNoSync()
	b.Close()
	if err != nil {
		return nil, fmt.Errorf("clear text index: %w", err)
	}

	workers := runtime.GOMAXPROCS(0)
	var (
		work    = make(chan []rebuildDoc, workers)
		results = make(chan []analysedDoc, workers)
		wg      sync.WaitGroup
		done    = make(chan struct{})
		col     = newCollector(ix, runPostings)
		mu      sync.Mutex // guards colErr and aborted
		colErr  error
		aborted bool // fill failed: do not write the last run
	)
	for range workers {
		wg.Go(func() {
			w := writer{stems: &ix.stems}
			for chunk := range work {
				out := make([]analysedDoc, 0, len(chunk))
				for _, d := range chunk {
					w.analyze(d.texts)
					if len(w.terms) == 0 {
						continue
					}
					out = append(out, analysedDoc{
						doc: d.doc, attrs: d.attrs, length: w.length,
						terms: slices.Clone(w.terms),
					})
				}
				results <- out
			}
		})
	}
	go func() {
		defer close(done)
		var err error
		for docs := range results {
			if err == nil {
				err = col.add(docs)
			}
			if err != nil {
				mu.Lock()
				colErr = err
				mu.Unlock()
			}
		}
		mu.Lock()
		skip := aborted
		mu.Unlock()
		if err == nil && !skip {
			err = col.write()
		}
		mu.Lock()
		colErr = err
		mu.Unlock()
	}()
	failed := func() error {
		mu.Lock()
		defer mu.Unlock()
		return colErr
	}

	chunk := make([]rebuildDoc, 0, rebuildChunk)
	add := func(doc memory.ID, attrs []byte, texts ...string) error {
		if len(chunk) == rebuildChunk {
			if err := failed(); err != nil {
				return err
			}
			work <- chunk
			chunk = make([]rebuildDoc, 0, rebuildChunk)
		}
		chunk = append(chunk, rebuildDoc{doc: doc, attrs: bytes.Clone(attrs), texts: slices.Clone(texts)})
		return nil
	}
	ferr := fill(add)
	if ferr == nil && len(chunk) > 0 {
		work <- chunk
	}
	if ferr != nil {
		mu.Lock()
		aborted = true
		mu.Unlock()
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
	ix.docs, ix.length = col.docs, col.length
	b = db.NewBatch()
	defer b.Close()
	b.Set(ix.versionKey(), ix.versionValue())
	if err := b.Commit(); err != nil {
		return nil, fmt.Errorf("write text index version: %w", err)
	}
	return ix, nil
}

// collector gathers analysed documents into runs and writes each run in
// ascending key order. Terms are interned to small integers so a run costs
// about 8 bytes per posting.
type collector struct {
	ix          *Index
	runPostings int
	ids         map[string]uint32
	terms       []string // by id

	run  []runDoc
	refs []termRef // the terms of all documents of the run

	written []memory.ID // documents of earlier runs, ascending
	docs    int64
	length  int64

	w batchWriter
}

type runDoc struct {
	doc        memory.ID
	attrs      []byte
	length     uint32
	start, end int // range in collector.refs, ascending by term
}

type termRef struct {
	term uint32
	tf   uint32
}

func newCollector(ix *Index, runPostings int) *collector {
	return &collector{
		ix: ix, runPostings: runPostings,
		ids: make(map[string]uint32), w: batchWriter{db: ix.db},
	}
}

// add adds analysed documents to the run, writing the run first when it
// is full.
func (c *collector) add(docs []analysedDoc) error {
	for _, d := range docs {
		if len(c.refs)+len(d.terms) > c.runPostings && len(c.run) > 0 {
			if err := c.write(); err != nil {
				return err
			}
		}
		start := len(c.refs)
		for _, t := range d.terms {
			id, ok := c.ids[t.term]
			if !ok {
				id = uint32(len(c.terms))
				term := strings.Clone(t.term)
				c.ids[term] = id
				c.terms = append(c.terms, term)
			}
			c.refs = append(c.refs, termRef{term: id, tf: uint32(t.tf)})
		}
		c.run = append(c.run, runDoc{
			doc: d.doc, attrs: d.attrs, length: uint32(d.length),
			start: start, end: len(c.refs),
		})
	}
	return nil
}

// write writes the run: forward entries in document order, then postings
// in term and document order, and empties it.
func (c *collector) write() error {
	if len(c.run) == 0 {
		return nil
	}
	ix := c.ix
	slices.SortFunc(c.run, func(a, b runDoc) int { return bytes.Compare(a.doc[:], b.doc[:]) })
	for i := range c.run {
		d := c.run[i].doc
		if i > 0 && c.run[i-1].doc == d {
			return fmt.Errorf("rebuild text index: %s: %w", d, ErrDuplicate)
		}
		if _, found := slices.BinarySearchFunc(c.written, d, func(a, b memory.ID) int {
			return bytes.Compare(a[:], b[:])
		}); found {
			return fmt.Errorf("rebuild text index: %s: %w", d, ErrDuplicate)
		}
	}

	// Forward entries.
	var key, val []byte
	counts := make([]int, len(c.terms)+1)
	for _, d := range c.run {
		val = binary.AppendUvarint(val[:0], uint64(d.length))
		val = binary.AppendUvarint(val, uint64(d.end-d.start))
		for _, r := range c.refs[d.start:d.end] {
			t := c.terms[r.term]
			val = binary.AppendUvarint(val, uint64(len(t)))
			val = append(val, t...)
			counts[r.term+1]++
		}
		val = append(val, d.attrs...)
		if err := c.w.set(ix.forwardKey(d.doc), val); err != nil {
			return err
		}
		c.docs++
		c.length += int64(d.length)
	}

	// Postings: a counting sort by term keeps each term's documents in
	// the run's (ascending) document order.
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1]
	}
	type posting struct{ doc, tf uint32 }
	postings := make([]posting, len(c.refs))
	next := slices.Clone(counts[:len(c.terms)])
	for di, d := range c.run {
		for _, r := range c.refs[d.start:d.end] {
			postings[next[r.term]] = posting{doc: uint32(di), tf: r.tf}
			next[r.term]++
		}
	}
	order := make([]uint32, 0, len(c.terms))
	for t := range c.terms {
		if counts[t+1] > counts[t] {
			order = append(order, uint32(t))
		}
	}
	slices.SortFunc(order, func(a, b uint32) int { return strings.Compare(c.terms[a], c.terms[b]) })
	for _, t := range order {
		term := c.terms[t]
		for _, p := range postings[counts[t]:counts[t+1]] {
			d := &c.run[p.doc]
			key = ix.postingKey(key[:0], term, d.doc)
			val = binary.AppendUvarint(val[:0], uint64(p.tf))
			val = binary.AppendUvarint(val, uint64(d.length))
			val = append(val, d.attrs...)
			if err := c.w.set(key, val); err != nil {
				return err
			}
		}
	}
	if err := c.w.flush(); err != nil {
		return err
	}

	for _, d := range c.run {
		c.written = append(c.written, d.doc)
	}
	slices.SortFunc(c.written, func(a, b memory.ID) int { return bytes.Compare(a[:], b[:]) })
	c.run = c.run[:0]
	c.refs = c.refs[:0]
	return nil
}

// batchWriter writes keys in batches of about rebuildBatchBytes, committed
// without waiting for the disk.
type batchWriter struct {
	db      *store.DB
	b       *store.Batch
	pending int
}

func (w *batchWriter) set(key, val []byte) error {
	if w.b == nil {
		w.b = w.db.NewBatch()
	}
	w.b.Set(key, val)
	w.pending += len(key) + len(val) + memtableNodeBytes
	if w.pending < rebuildBatchBytes {
		return nil
	}
	return w.flush()
}

func (w *batchWriter) flush() error {
	if w.b == nil {
		return nil
	}
	err := w.b.CommitNoSync()
	w.b.Close()
	w.b, w.pending = nil, 0
	if err != nil {
		return fmt.Errorf("write text index: %w", err)
	}
	return nil
}
