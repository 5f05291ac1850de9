package searchindex

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"memsvc.dev/memsvc/pkg/memory"
)

// MaxFields is the number of fields a document may have.
const MaxFields = 4

// DefaultK1 is the BM25 term-frequency saturation used when Config.K1 is 0.
const DefaultK1 = 1.2

// Errors.
var (
	// ErrConfig marks an invalid Config.
	ErrConfig = errors.New("invalid search index configuration")
	// ErrDuplicate is returned by Build when a document id comes twice.
	ErrDuplicate = errors.New("document added twice")
	// ErrFull is returned by Add when the index holds as many documents
	// as a uint32 can number.
	ErrFull = errors.New("search index is full")
)

// Analyzer turns text into terms. The same analyzer must serve documents
// and queries, and it must be safe for concurrent use (Build analyses on
// every CPU). Empty terms are ignored.
type Analyzer interface {
	AppendTerms(dst []string, text string) []string
}

// Field describes one field of the documents.
type Field struct {
	// Name identifies the field in snapshots and errors.
	Name string
	// Weight multiplies the field's term frequencies (BM25F). It must be
	// positive; a query may override it (Query.FieldWeights).
	Weight float64
	// B is the field's length normalisation, from 0 (none) to 1 (full);
	// 0.75 is the usual choice.
	B float64
	// Verbatim fields are not analysed: each text is one term as given
	// (empty texts are ignored). For terms the caller derives itself,
	// such as a date's forms; a prefix the analyzer never produces keeps
	// them apart from the terms of analysed fields.
	Verbatim bool
}

// Config describes an index. The fields, K1 and AnalyzerVersion are
// recorded in snapshots; LoadSnapshot refuses a snapshot whose
// configuration differs.
type Config struct {
	// Fields are the document fields, at least one and at most MaxFields.
	Fields []Field
	// K1 is BM25's term-frequency saturation; 0 means DefaultK1.
	K1 float64
	// Analyzer analyses document texts (and Query.Text helpers).
	Analyzer Analyzer
	// AnalyzerVersion names the analyzer's rules. A snapshot written with
	// another version holds terms this analyzer would not produce, so
	// LoadSnapshot refuses it with ErrStale.
	AnalyzerVersion string
}

func (cfg *Config) validate() error {
	if len(cfg.Fields) == 0 || len(cfg.Fields) > MaxFields {
		return fmt.Errorf("%w: %d fields, want 1 to %d", ErrConfig, len(cfg.Fields), MaxFields)
	}
	for i, f := range cfg.Fields {
		if f.Name == "" || slices.ContainsFunc(cfg.Fields[:i], func(g Field) bool { return g.Name == f.Name }) {
			return fmt.Errorf("%w: field %d: name %q is empty or repeated", ErrConfig, i, f.Name)
		}
		if !(f.Weight > 0) || math.IsInf(f.Weight, 0) {
			return fmt.Errorf("%w: field %q: weight %v, want a positive number", ErrConfig, f.Name, f.Weight)
		}
		if !(f.B >= 0 && f.B <= 1) {
			return fmt.Errorf("%w: field %q: b %v, want 0 to 1", ErrConfig, f.Name, f.B)
		}
	}
	if cfg.K1 == 0 {
		cfg.K1 = DefaultK1
	}
	if !(cfg.K1 > 0) || math.IsInf(cfg.K1, 0) {
		return fmt.Errorf("%w: k1 %v, want a positive number", ErrConfig, cfg.K1)
	}
	if cfg.Analyzer == nil {
		return fmt.Errorf("%w: no analyzer", ErrConfig)
	}
	return nil
}

// Attrs are a document's attributes, kept in the index so filters and
// listings never read the record. Their meaning is the caller's; the
// names say what they are meant for.
type Attrs struct {
	Time  int64  // a time, for example the creation time in Unix nanoseconds
	Group uint64 // a grouping key, for example a hash of the session id
	Tag   uint32 // small values, for example the store type and flags
}

// Document is one document to index.
type Document struct {
	ID    memory.ID
	Attrs Attrs
	// Fields holds the texts of each field, in the order of
	// Config.Fields. The texts of one field are analysed one after the
	// other; proximity never spans two texts.
	Fields [MaxFields][]string
}

// Index is an in-memory BM25F inverted index of one collection of
// documents. All methods are safe for concurrent use. Searches share a
// read lock; Add and Delete analyse outside the lock and hold the write
// lock for the few microseconds of appending one document; compaction and
// snapshots do their work outside the lock.
type Index struct {
	cfg Config

	mu sync.RWMutex
	c  *core // guarded by mu

	compactMu   sync.Mutex  // one compaction at a time
	compacting  atomic.Bool // a background compaction is started
	autoCompact bool        // guarded by mu
}

// New returns an empty index.
func New(cfg Config) (*Index, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.Fields = slices.Clone(cfg.Fields)
	return &Index{cfg: cfg, c: newCore(cfg.Fields), autoCompact: true}, nil
}

// Config returns the index configuration.
func (ix *Index) Config() Config {
	cfg := ix.cfg
	cfg.Fields = slices.Clone(cfg.Fields)
	return cfg
}

// SetAutoCompact turns background compaction after deletions on (the
// default) or off. With it off, Compact is the only way to reclaim the
// space of deleted documents.
func (ix *Index) SetAutoCompact(on bool) {
	ix.mu.Lock()
	ix.autoCompact = on
	ix.mu.Unlock()
}

// analysed is a document after analysis: its terms in order, "" between
// two texts of a field, and the number of terms of each field.
type analysed struct {
	id    memory.ID
	attrs Attrs
	terms []string
	lens  [MaxFields]uint32
	total int // terms, without the gaps
}

// analyse fills a from d, reusing a.terms.
func analyse(an Analyzer, fields []Field, d *Document, a *analysed) {
	a.id, a.attrs = d.ID, d.Attrs
	a.terms = a.terms[:0]
	a.total = 0
	for f := range MaxFields {
		start := len(a.terms)
		if f < len(fields) {
			for _, text := range d.Fields[f] {
				mark := len(a.terms)
				if mark > start {
					a.terms = append(a.terms, "")
				}
				if fields[f].Verbatim {
					a.terms = append(a.terms, text)
				} else {
					a.terms = an.AppendTerms(a.terms, text)
				}
				// Drop empty terms the analyzer may have produced.
				kept := a.terms[:mark]
				if mark > start {
					kept = a.terms[:mark+1]
				}
				for _, t := range a.terms[len(kept):] {
					if t != "" {
						kept = append(kept, t)
					}
				}
				if mark > start && len(kept) == mark+1 {
					kept = kept[:mark] // the text had no terms: no gap
				}
				a.terms = kept
			}
		}
		n := 0
		for _, t := range a.terms[start:] {
			if t != "" {
				n++
			}
		}
		a.lens[f] = uint32(n)
		a.total += n
	}
}

// Add indexes doc, replacing the document with the same id if there is
// one. A document without any term is not indexed (and an existing one is
// deleted). Searches running at the same time see the document entirely
// or not at all.
func (ix *Index) Add(doc *Document) error {
	var a analysed
	analyse(ix.cfg.Analyzer, ix.cfg.Fields, doc, &a)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if a.total == 0 {
		if ix.c.delete(doc.ID) {
			ix.maybeCompactLocked()
		}
		return nil
	}
	ix.c.delete(doc.ID)
	if err := ix.ensureRoomLocked(); err != nil {
		return err
	}
	ix.c.add(&a)
	ix.maybeCompactLocked()
	return nil
}

// Delete removes the document with id and reports whether it was indexed.
func (ix *Index) Delete(id memory.ID) bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if !ix.c.delete(id) {
		return false
	}
	ix.maybeCompactLocked()
	return true
}

// Clear deletes every document, at once (a running compaction finishes
// first). Searches already running finish on the documents they started
// with.
func (ix *Index) Clear() {
	ix.compactMu.Lock()
	defer ix.compactMu.Unlock()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.c = ix.c.empty()
}

// Documents calls fn with the id and attributes of every indexed
// document, in the order they were added, until fn returns false. It
// runs without the lock, on the documents indexed when it started (a
// document deleted meanwhile may be skipped); fn may call the index.
func (ix *Index) Documents(fn func(id memory.ID, a Attrs) bool) {
	ix.mu.RLock()
	c := ix.c
	docs := c.docs[:len(c.docs):len(c.docs)]
	dead := c.dead[:len(c.dead):len(c.dead)]
	ix.mu.RUnlock()
	for i := range docs {
		if !isDead(dead, uint32(i)) && !fn(docs[i].id, docs[i].attrs()) {
			return
		}
	}
}

// Has reports whether a document with id is indexed.
func (ix *Index) Has(id memory.ID) bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	_, ok := ix.c.ids.find(ix.c.docs, id)
	return ok
}

// SetMark sets the mark of the document with id to m and reports whether
// the document is indexed. A mark is a word of the caller's that the
// index keeps with each document and, unlike its attributes, lets the
// caller change in place: a filter reads it (Query.Admit) to decide
// without looking elsewhere, and may keep there what it found out. A
// document's mark is 0 when it is added (also when it replaces another
// version), survives compaction, and is not kept in snapshots.
func (ix *Index) SetMark(id memory.ID, m uint64) bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	n, ok := ix.c.ids.find(ix.c.docs, id)
	if ok {
		markOf(ix.c.marks, n).Store(m)
	}
	return ok
}

// Mark returns the mark of the document with id (see SetMark) and
// whether the document is indexed.
func (ix *Index) Mark(id memory.ID) (uint64, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	n, ok := ix.c.ids.find(ix.c.docs, id)
	if !ok {
		return 0, false
	}
	return markOf(ix.c.marks, n).Load(), true
}

// ensureRoomLocked makes sure one more document number is available,
// compacting in place when the numbers are used up by deleted documents.
func (ix *Index) ensureRoomLocked() error {
	c := ix.c
	if uint64(len(c.docs)) < c.maxDocs {
		return nil
	}
	if c.ndead == 0 {
		return fmt.Errorf("add document: %w (%d documents)", ErrFull, len(c.docs))
	}
	nc, from := c.rebuild(c.capture())
	nc.carryMarks(c, from)
	nc.maxDocs = c.maxDocs
	ix.c = nc
	return nil
}

// Stats are the index statistics.
type Stats struct {
	// Docs is the number of indexed documents.
	Docs int
	// Deleted is the number of deleted documents whose space compaction
	// has not reclaimed yet.
	Deleted int
	// Terms is the number of distinct terms of the vocabulary (including
	// terms only deleted documents had, until compaction).
	Terms int
	// FieldLengths are the total number of terms of each field over the
	// indexed documents.
	FieldLengths [MaxFields]int64
}

// Stats returns the current statistics.
func (ix *Index) Stats() Stats {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	c := ix.c
	return Stats{Docs: c.live, Deleted: c.ndead, Terms: len(c.terms) - 1, FieldLengths: c.lens}
}

// DocFreq returns the number of indexed documents that contain term.
func (ix *Index) DocFreq(term string) int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if t, ok := ix.c.termIDs.find(ix.c.texts, term); ok {
		return int(ix.c.terms[t].df)
	}
	return 0
}

// Analyze returns the terms of text with the index's analyzer, in order
// and with repeats, for building queries.
func (ix *Index) Analyze(text string) []string {
	terms := ix.cfg.Analyzer.AppendTerms(nil, text)
	return slices.DeleteFunc(terms, func(t string) bool { return t == "" })
}
