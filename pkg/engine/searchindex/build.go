package searchindex

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
)

// buildChunk is the number of documents Build hands an analysing worker
// at once.
const buildChunk = 256

// AddFunc adds one document during Build. The document is copied (its
// texts are not: strings do not change).
type AddFunc func(doc *Document) error

type buildJob struct {
	seq  int
	docs []Document
}

type buildResult struct {
	seq   int
	docs  []analysed
	terms []string // the terms of every document of the chunk
}

// Build returns an index of the documents fill passes to add. Documents
// are analysed by one worker per CPU while one collector numbers them in
// the order fill passed them, so the same documents always give the same
// index; postings are then laid out in one pass with every list sized
// exactly. A document id passed twice fails with ErrDuplicate; documents
// without terms are skipped.
func Build(cfg Config, fill func(add AddFunc) error) (*Index, error) {
	ix, err := New(cfg)
	if err != nil {
		return nil, err
	}
	var (
		c       = ix.c
		an      = ix.cfg.Analyzer
		workers = runtime.GOMAXPROCS(0)
		work    = make(chan buildJob, workers)
		results = make(chan buildResult, workers)
		wg      sync.WaitGroup
		done    = make(chan struct{})
		mu      sync.Mutex // guards colErr
		colErr  error
	)
	for range workers {
		wg.Go(func() {
			var scratch analysed
			for job := range work {
				res := buildResult{seq: job.seq, docs: make([]analysed, len(job.docs))}
				spans := make([]int, len(job.docs)+1)
				for i := range job.docs {
					analyse(an, ix.cfg.Fields, &job.docs[i], &scratch)
					res.terms = append(res.terms, scratch.terms...)
					spans[i+1] = len(res.terms)
					a := scratch
					a.terms = nil
					res.docs[i] = a
				}
				for i := range res.docs {
					res.docs[i].terms = res.terms[spans[i]:spans[i+1]:spans[i+1]]
				}
				results <- res
			}
		})
	}
	go func() {
		defer close(done)
		pending := map[int]buildResult{}
		next := 0
		var err error
		for res := range results {
			pending[res.seq] = res
			for {
				r, ok := pending[next]
				if !ok {
					break
				}
				delete(pending, next)
				next++
				if err == nil {
					err = collect(c, r.docs)
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
	c.buildPostings()
	return ix, nil
}

// collect numbers analysed documents and stores their term sequences,
// without indexing them.
func collect(c *core, docs []analysed) error {
	for i := range docs {
		a := &docs[i]
		if a.total == 0 {
			continue
		}
		if _, dup := c.ids.find(c.docs, a.id); dup {
			return fmt.Errorf("build search index: %s: %w", a.id, ErrDuplicate)
		}
		if uint64(len(c.docs)) >= c.maxDocs {
			return fmt.Errorf("build search index: %w", ErrFull)
		}
		c.buf = c.buf[:0]
		for _, t := range a.terms {
			id := uint32(gapTerm)
			if t != "" {
				id = c.intern(t)
			}
			c.buf = appendUvarint32(c.buf, id)
		}
		c.appendDoc(a.id, a.attrs, a.lens[:], c.buf)
	}
	return nil
}

func appendUvarint32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}
