package textindex

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// formatVersion is stored under P 'v'. Bump it whenever the tokenizer or
// the key layout changes.
const formatVersion = 1

// Key kinds after the prefix.
const (
	kindVersion = 'v'
	kindPosting = 'p'
	kindForward = 'f'
)

// Errors.
var (
	// ErrStale means the index under the prefix was written by another
	// format version, or is incomplete or damaged: rebuild it with
	// Rebuild.
	ErrStale = errors.New("text index is stale")
	// ErrCorrupt marks an undecodable entry. Open wraps it together with
	// ErrStale; Search and Put return it alone.
	ErrCorrupt = errors.New("text index entry is corrupt")
)

// Index is a BM25 inverted index under one key prefix of a store.DB. Search
// is safe for concurrent use with itself and with Put, Delete and Apply.
//
// Writes are two-phase: Put, Delete and Clear add their writes to the
// caller's batch and return a Change; after the batch has committed the
// caller passes the Change to Apply, which keeps the in-memory document
// count and total length exact. A Change of a batch that was not committed
// is simply dropped.
//
// Put and Delete read the document's committed forward entry to find the
// postings to remove, so a document may be written at most once per batch,
// and writes of the same document must be serialised by the caller
// (commit and Apply one before computing the next).
type Index struct {
	db     *store.DB
	prefix []byte

	mu     sync.RWMutex
	docs   int64 // documents with at least one term
	length int64 // sum of document lengths

	states sync.Pool // *searchState
	stems  stemCache
}

// Change is the effect of a Put, Delete or Clear on the index statistics,
// to be passed to Apply once the batch holding the writes has committed.
// The zero Change changes nothing.
type Change struct {
	reset  bool
	docs   int64
	length int64
}

// Merge returns the combined effect of c followed by d, for a batch with
// several writes.
func (c Change) Merge(d Change) Change {
	if d.reset {
		return d
	}
	return Change{reset: c.reset, docs: c.docs + d.docs, length: c.length + d.length}
}

// Stats are the index statistics BM25 uses.
type Stats struct {
	Docs   int64 // documents with at least one term
	Length int64 // total number of terms, with repeats, over all documents
}

func newIndex(db *store.DB, prefix []byte) *Index {
	return &Index{db: db, prefix: bytes.Clone(prefix)}
}

// Open opens the index under prefix, scanning its forward entries once to
// learn the statistics. It returns an error matching ErrStale, and no
// Index, when the stored version is missing or differs, or a forward entry
// cannot be decoded; the caller then builds the index with Rebuild.
//
// A missing version includes an empty prefix: a new database, an in-memory
// one, and an index that was never built over existing records or whose
// rebuild was interrupted all look alike, so the one rule "Open, and
// Rebuild on ErrStale" covers them (rebuilding nothing is cheap).
func Open(db *store.DB, prefix []byte) (*Index, error) {
	ix := newIndex(db, prefix)
	v, err := db.Get(ix.versionKey())
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, fmt.Errorf("%w: no version", ErrStale)
	case err != nil:
		return nil, fmt.Errorf("read text index version: %w", err)
	}
	if ver, n := binary.Uvarint(v); n <= 0 || n != len(v) || ver != formatVersion {
		return nil, fmt.Errorf("%w: version %x, want %d", ErrStale, v, formatVersion)
	}
	fp := ix.kindPrefix(kindForward)
	err = db.ScanPrefix(fp, false, func(k, v []byte) (bool, error) {
		dl, n := binary.Uvarint(v)
		if len(k) != len(fp)+16 || n <= 0 {
			return false, fmt.Errorf("%w: forward entry %x: %w", ErrStale, k, ErrCorrupt)
		}
		ix.docs++
		ix.length += int64(dl)
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("load text index: %w", err)
	}
	return ix, nil
}

// Put indexes (or re-indexes) doc with the terms of texts and the opaque
// attrs, adding the writes to b: postings of terms the document no longer
// has are deleted, every current posting and the forward entry are
// written. A document without any term is removed from the index.
func (ix *Index) Put(b *store.Batch, doc memory.ID, attrs []byte, texts ...string) (Change, error) {
	return ix.put(b, doc, attrs, texts, false)
}

// PutNew is Put for a document the caller knows is not indexed (its record
// did not exist until this batch): it skips reading the forward entry, a
// point read that is most of the index's cost when entries arrive by the
// thousand.
func (ix *Index) PutNew(b *store.Batch, doc memory.ID, attrs []byte, texts ...string) (Change, error) {
	return ix.put(b, doc, attrs, texts, true)
}

func (ix *Index) put(b *store.Batch, doc memory.ID, attrs []byte, texts []string, fresh bool) (Change, error) {
	w := writer{stems: &ix.stems}
	w.analyze(texts)
	if len(w.terms) == 0 {
		if fresh {
			return Change{}, nil
		}
		return ix.Delete(b, doc)
	}
	var (
		old   forward
		found bool
		err   error
	)
	if !fresh {
		if old, found, err = ix.readForward(doc); err != nil {
			return Change{}, err
		}
	}
	var c Change
	if found {
		// Delete postings of terms that are gone; the others are
		// overwritten below.
		nt := w.terms
		for _, t := range old.terms {
			for len(nt) > 0 && nt[0].term < t {
				nt = nt[1:]
			}
			if len(nt) > 0 && nt[0].term == t {
				continue
			}
			b.Delete(ix.postingKey(w.key[:0], t, doc))
		}
		c.length = -old.length
	} else {
		c.docs = 1
	}
	w.writeDoc(b, ix, doc, attrs)
	c.length += int64(w.length)
	return c, nil
}

// Delete removes doc from the index, adding the writes to b. Deleting a
// document that is not indexed is a no-op with a zero Change.
func (ix *Index) Delete(b *store.Batch, doc memory.ID) (Change, error) {
	old, found, err := ix.readForward(doc)
	if err != nil || !found {
		return Change{}, err
	}
	var key []byte
	for _, t := range old.terms {
		key = ix.postingKey(key[:0], t, doc)
		b.Delete(key)
	}
	b.Delete(ix.forwardKey(doc))
	return Change{docs: -1, length: -old.length}, nil
}

// Clear adds to b the deletion of every entry under the prefix, leaving a
// valid empty index. Its Change resets the statistics. Put and Delete must
// not be called for the same batch after Clear (they would see the old
// entries); use Rebuild to refill an index.
func (ix *Index) Clear(b *store.Batch) Change {
	b.DeleteRange(ix.prefix, store.PrefixEnd(ix.prefix))
	b.Set(ix.versionKey(), ix.versionValue())
	return Change{reset: true}
}

// Apply records the effect of a committed batch on the statistics.
func (ix *Index) Apply(c Change) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if c.reset {
		ix.docs, ix.length = 0, 0
	}
	ix.docs = max(ix.docs+c.docs, 0)
	ix.length = max(ix.length+c.length, 0)
}

// Stats returns the current statistics.
func (ix *Index) Stats() Stats {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return Stats{Docs: ix.docs, Length: ix.length}
}

// Keys.

func (ix *Index) kindPrefix(kind byte) []byte {
	k := make([]byte, 0, len(ix.prefix)+1)
	k = append(k, ix.prefix...)
	return append(k, kind)
}

func (ix *Index) versionKey() []byte { return ix.kindPrefix(kindVersion) }

func (ix *Index) versionValue() []byte { return binary.AppendUvarint(nil, formatVersion) }

func (ix *Index) forwardKey(doc memory.ID) []byte {
	k := make([]byte, 0, len(ix.prefix)+1+16)
	k = append(k, ix.prefix...)
	k = append(k, kindForward)
	return append(k, doc[:]...)
}

// termPrefix appends P 'p' term 0x00 to dst.
func (ix *Index) termPrefix(dst []byte, term string) []byte {
	dst = append(dst, ix.prefix...)
	dst = append(dst, kindPosting)
	dst = append(dst, term...)
	return append(dst, 0)
}

func (ix *Index) postingKey(dst []byte, term string, doc memory.ID) []byte {
	return append(ix.termPrefix(dst, term), doc[:]...)
}

// Forward entries.

type forward struct {
	length int64
	terms  []string
	attrs  []byte
}

func (ix *Index) readForward(doc memory.ID) (forward, bool, error) {
	v, err := ix.db.Get(ix.forwardKey(doc))
	if errors.Is(err, store.ErrNotFound) {
		return forward{}, false, nil
	}
	if err != nil {
		return forward{}, false, fmt.Errorf("read text index entry %s: %w", doc, err)
	}
	f, err := decodeForward(v)
	if err != nil {
		return forward{}, false, fmt.Errorf("text index entry %s: %w", doc, err)
	}
	return f, true, nil
}

func decodeForward(v []byte) (forward, error) {
	var f forward
	dl, n := binary.Uvarint(v)
	if n <= 0 {
		return f, ErrCorrupt
	}
	v = v[n:]
	cnt, n := binary.Uvarint(v)
	if n <= 0 || cnt > uint64(len(v)) {
		return f, ErrCorrupt
	}
	v = v[n:]
	f.length = int64(dl)
	f.terms = make([]string, 0, cnt)
	for range cnt {
		l, n := binary.Uvarint(v)
		if n <= 0 || l > uint64(len(v)-n) {
			return f, ErrCorrupt
		}
		f.terms = append(f.terms, string(v[n:n+int(l)]))
		v = v[n+int(l):]
	}
	f.attrs = v
	return f, nil
}

// writer analyses one document and writes its entries, reusing buffers.
type writer struct {
	stems  *stemCache
	all    []string
	terms  []termFreq // ascending by term
	length int
	key    []byte
	val    []byte
}

type termFreq struct {
	term string
	tf   int
}

// analyze tokenizes texts into w.terms and w.length.
func (w *writer) analyze(texts []string) {
	w.all = w.all[:0]
	for _, t := range texts {
		w.all = appendTerms(w.all, t, w.stems)
	}
	w.length = len(w.all)
	slices.Sort(w.all)
	w.terms = w.terms[:0]
	for i := 0; i < len(w.all); {
		j := i + 1
		for j < len(w.all) && w.all[j] == w.all[i] {
			j++
		}
		w.terms = append(w.terms, termFreq{term: w.all[i], tf: j - i})
		i = j
	}
}

// writeDoc adds the postings and the forward entry of the analysed
// document to b and returns the number of bytes written, counting
// memtableNodeBytes per key.
func (w *writer) writeDoc(b *store.Batch, ix *Index, doc memory.ID, attrs []byte) int {
	total := 0
	for _, t := range w.terms {
		w.key = ix.postingKey(w.key[:0], t.term, doc)
		w.val = binary.AppendUvarint(w.val[:0], uint64(t.tf))
		w.val = binary.AppendUvarint(w.val, uint64(w.length))
		w.val = append(w.val, attrs...)
		b.Set(w.key, w.val)
		total += len(w.key) + len(w.val) + memtableNodeBytes
	}
	w.val = binary.AppendUvarint(w.val[:0], uint64(w.length))
	w.val = binary.AppendUvarint(w.val, uint64(len(w.terms)))
	for _, t := range w.terms {
		w.val = binary.AppendUvarint(w.val, uint64(len(t.term)))
		w.val = append(w.val, t.term...)
	}
	w.val = append(w.val, attrs...)
	fk := ix.forwardKey(doc)
	b.Set(fk, w.val)
	return total + len(fk) + len(w.val) + memtableNodeBytes
}
