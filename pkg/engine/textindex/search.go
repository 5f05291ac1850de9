package textindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"memsvc.dev/memsvc/pkg/memory"
)

// BM25 parameters.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// MaxQueryTerms bounds the work of one search: terms of a query beyond the
// first MaxQueryTerms distinct ones are ignored.
const MaxQueryTerms = 64

// Query is a search request.
type Query struct {
	// Text is analysed with Tokenize. Text without terms (empty, or only
	// stop words, punctuation or emoji) matches nothing.
	Text string
	// Limit is the number of hits to return; 0 returns none but still
	// counts Total. Negative is an error.
	Limit int
	// All requires every query term to match (conjunctive search, as raw
	// journal search wants). Otherwise any term matches and documents are
	// ranked by the sum of their terms' scores.
	All bool
	// Filter, when set, is asked once for every matching document before
	// it is ranked or counted; false drops it. attrs is only valid during
	// the call.
	Filter func(doc memory.ID, attrs []byte) bool
}

// Result is the outcome of a search.
type Result struct {
	// Hits are the best Limit matches, best first.
	Hits []Hit
	// Total is the number of matching documents that passed Filter.
	Total int
}

// Hit is one matching document.
type Hit struct {
	Doc memory.ID
	// Score is the raw BM25 score, > 0.
	Score float64
	// Attrs are the attrs the document was indexed with (a copy).
	Attrs []byte
}

// posting is one decoded posting of a term, kept while the query's terms
// are merged. The document id is split into two big-endian halves so
// comparing ids is comparing integers.
type posting struct {
	hi, lo     uint64
	tf, dl     uint32
	aOff, aLen uint32 // attrs in searchState.arena
}

// termList is the postings of one query term, in document order.
type termList struct {
	start, end int // range in searchState.postings
	idf        float64
	pos        int
}

// searchState holds the buffers of one search, reused through Index.states.
type searchState struct {
	postings []posting
	arena    []byte
	lists    []termList
	key      []byte
	top      []scored
}

// scored is a candidate hit in the top-k heap.
type scored struct {
	hi, lo     uint64
	score      float64
	aOff, aLen uint32
}

// worse reports whether a ranks below b: lower score, or equal score and
// larger id.
func worse(a, b *scored) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	if a.hi != b.hi {
		return a.hi > b.hi
	}
	return a.lo > b.lo
}

// Search runs q against the index. Each term's postings are read in one
// scan; the scans of a multi-term query are not one snapshot, so a search
// that overlaps a commit may see it for some terms only.
func (ix *Index) Search(q Query) (Result, error) {
	if q.Limit < 0 {
		return Result{}, fmt.Errorf("search: negative limit %d", q.Limit)
	}
	terms := dedupe(appendTerms(nil, q.Text, &ix.stems))
	if len(terms) > MaxQueryTerms {
		terms = terms[:MaxQueryTerms]
	}
	if len(terms) == 0 {
		return Result{}, nil
	}
	st, _ := ix.states.Get().(*searchState)
	if st == nil {
		st = &searchState{}
	}
	defer ix.putState(st)
	st.postings = st.postings[:0]
	st.arena = st.arena[:0]
	st.lists = st.lists[:0]
	st.top = st.top[:0]

	stats := ix.Stats()
	n := float64(stats.Docs)
	for _, t := range terms {
		l, err := ix.scanTerm(st, t)
		if err != nil {
			return Result{}, err
		}
		if l.end == l.start && q.All {
			return Result{}, nil
		}
		if l.end > l.start {
			st.lists = append(st.lists, l)
		}
	}
	if len(st.lists) == 0 {
		return Result{}, nil
	}
	// N is at least the largest df: a search that overlaps a commit can
	// see postings before Apply has counted their documents.
	for _, l := range st.lists {
		n = max(n, float64(l.end-l.start))
	}
	avgdl := 1.0
	if stats.Docs > 0 && stats.Length > 0 {
		avgdl = float64(stats.Length) / float64(stats.Docs)
	}
	for i := range st.lists {
		df := float64(st.lists[i].end - st.lists[i].start)
		st.lists[i].idf = math.Log(1 + (n-df+0.5)/(df+0.5))
	}
	total := ix.merge(st, q, avgdl)
	res := Result{Total: total}
	if len(st.top) == 0 {
		return res, nil
	}
	slices.SortFunc(st.top, func(a, b scored) int {
		switch {
		case worse(&b, &a):
			return -1
		case worse(&a, &b):
			return 1
		}
		return 0
	})
	res.Hits = make([]Hit, len(st.top))
	var attrs []byte
	for _, s := range st.top {
		attrs = append(attrs, st.arena[s.aOff:s.aOff+s.aLen]...)
	}
	off := 0
	for i, s := range st.top {
		h := &res.Hits[i]
		binary.BigEndian.PutUint64(h.Doc[:8], s.hi)
		binary.BigEndian.PutUint64(h.Doc[8:], s.lo)
		h.Score = s.score
		h.Attrs = attrs[off : off+int(s.aLen) : off+int(s.aLen)]
		off += int(s.aLen)
	}
	return res, nil
}

// maxPooledPostings keeps one huge query from pinning its buffers forever.
const maxPooledPostings = 1 << 20

func (ix *Index) putState(st *searchState) {
	if cap(st.postings) > maxPooledPostings || cap(st.arena) > 16*maxPooledPostings {
		return
	}
	ix.states.Put(st)
}

var errBadPosting = errors.New("bad posting")

// scanTerm appends the postings of term to st.postings.
func (ix *Index) scanTerm(st *searchState, term string) (termList, error) {
	st.key = ix.termPrefix(st.key[:0], term)
	lower := st.key
	upper := make([]byte, len(lower))
	copy(upper, lower)
	upper[len(upper)-1] = 1 // the 0x00 after the term, plus one
	l := termList{start: len(st.postings)}
	want := len(lower) + 16
	err := ix.db.Scan(lower, upper, false, func(k, v []byte) (bool, error) {
		if len(k) != want {
			return false, errBadPosting
		}
		tf, n1 := binary.Uvarint(v)
		if n1 <= 0 {
			return false, errBadPosting
		}
		dl, n2 := binary.Uvarint(v[n1:])
		if n2 <= 0 || tf == 0 || tf > math.MaxUint32 || dl > math.MaxUint32 {
			return false, errBadPosting
		}
		a := v[n1+n2:]
		d := k[len(k)-16:]
		st.postings = append(st.postings, posting{
			hi:   binary.BigEndian.Uint64(d),
			lo:   binary.BigEndian.Uint64(d[8:]),
			tf:   uint32(tf),
			dl:   uint32(dl),
			aOff: uint32(len(st.arena)),
			aLen: uint32(len(a)),
		})
		st.arena = append(st.arena, a...)
		return true, nil
	})
	if errors.Is(err, errBadPosting) {
		return l, fmt.Errorf("search %q: %w", term, ErrCorrupt)
	}
	if err != nil {
		return l, fmt.Errorf("search %q: %w", term, err)
	}
	l.end = len(st.postings)
	return l, nil
}

// merge walks the term lists in document order, scores the documents that
// match, applies the filter, counts them and keeps the best q.Limit in
// st.top. It returns the count.
func (ix *Index) merge(st *searchState, q Query, avgdl float64) int {
	lists := st.lists
	ps := st.postings
	kNorm := bm25K1 * (1 - bm25B)
	kLen := bm25K1 * bm25B / avgdl
	termScore := func(l *termList, p *posting) float64 {
		tf := float64(p.tf)
		return l.idf * tf * (bm25K1 + 1) / (tf + kNorm + kLen*float64(p.dl))
	}
	var (
		total int
		doc   memory.ID
	)
	keep := func(p *posting, score float64) {
		if q.Filter != nil {
			binary.BigEndian.PutUint64(doc[:8], p.hi)
			binary.BigEndian.PutUint64(doc[8:], p.lo)
			if !q.Filter(doc, st.arena[p.aOff:p.aOff+p.aLen:p.aOff+p.aLen]) {
				return
			}
		}
		total++
		if q.Limit == 0 {
			return
		}
		c := scored{hi: p.hi, lo: p.lo, score: score, aOff: p.aOff, aLen: p.aLen}
		if len(st.top) < q.Limit {
			st.top = append(st.top, c)
			siftUp(st.top, len(st.top)-1)
			return
		}
		if worse(&st.top[0], &c) {
			st.top[0] = c
			siftDown(st.top, 0)
		}
	}

	if len(lists) == 1 {
		l := &lists[0]
		for i := l.start; i < l.end; i++ {
			keep(&ps[i], termScore(l, &ps[i]))
		}
		return total
	}
	for i := range lists {
		lists[i].pos = lists[i].start
	}
	for {
		// The smallest current document over the lists.
		var (
			minHi, minLo uint64
			found        bool
			exhausted    bool
		)
		for i := range lists {
			l := &lists[i]
			if l.pos == l.end {
				exhausted = true
				continue
			}
			p := &ps[l.pos]
			if !found || p.hi < minHi || p.hi == minHi && p.lo < minLo {
				minHi, minLo, found = p.hi, p.lo, true
			}
		}
		if !found || exhausted && q.All {
			return total
		}
		var (
			score   float64
			matches int
			first   *posting
		)
		for i := range lists {
			l := &lists[i]
			if l.pos == l.end {
				continue
			}
			p := &ps[l.pos]
			if p.hi != minHi || p.lo != minLo {
				continue
			}
			if first == nil {
				first = p
			}
			score += termScore(l, p)
			matches++
			l.pos++
		}
		if q.All && matches < len(lists) {
			continue
		}
		keep(first, score)
	}
}

// The top-k heap is a min-heap on rank: st.top[0] is the worst kept hit.

func siftUp(h []scored, i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !worse(&h[i], &h[parent]) {
			return
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

func siftDown(h []scored, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && worse(&h[r], &h[l]) {
			m = r
		}
		if !worse(&h[m], &h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
