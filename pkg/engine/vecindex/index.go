// Package vecindex is memsvc's vector search: an exact cosine scan over
// caller-supplied embeddings, one vector per record.
//
// Vectors are L2-normalised and kept in one contiguous float32 matrix per
// dimension, and again as int8 codes. A search is a straight scan of the
// codes, a quarter of the bytes of the floats, eight rows at a time (with
// AVX-512 VNNI or AVX2 on amd64, plain Go elsewhere), that bounds every
// row's score; only the rows whose bound can still reach the top k are
// scored exactly in float32 (quant.go), so the answer is the one of an
// exact scan. A query is compared only with vectors of its own
// dimension; ties go to the smaller record id, so answers are
// deterministic.
//
// A scan of 100,000 vectors takes milliseconds, so a search takes
// its locks one chunk of rows at a time and writers wait for a chunk, not
// for the scan. Rows therefore never move while a matrix is in use: a
// removed row is only marked, and when enough rows are marked the live ones
// are copied into a new matrix that replaces the old one for new searches
// and writes (searches already running finish on the old one, which no
// longer changes).
package vecindex

import (
	"bytes"
	"cmp"
	"math"
	"memsvc.dev/memsvc/pkg/engine/idtable"
	"runtime"
	"slices"
	"sync"

	"memsvc.dev/memsvc/pkg/memory"
)

// RWLocker is a reader/writer lock, such as *sync.RWMutex.
type RWLocker interface {
	sync.Locker
	RLock()
	RUnlock()
}

// Index is the vector index. Its methods are safe for concurrent use.
type Index struct {
	mu    RWLocker
	byDim map[int]*matrix
	pool  sync.Pool // of *searchScratch
	// parallelCodes is the matrix size, in codes, from which a search
	// uses several cores: defaultParallelCodes but in tests.
	parallelCodes int
}

type matrix struct {
	dim  int
	data []float32     // len(ids) rows of dim values
	ids  []memory.ID   // NilID marks a removed row
	rows idtable.Table // the row of each live id
	dead int           // removed rows
	// The rows quantised (quant.go): codeStride(dim) codes per row and
	// what the error bound needs of each.
	codes []int8
	quant quantCols
}

// newMatrix returns an empty matrix of dimension dim with room for n rows.
func newMatrix(dim, n int) *matrix {
	return &matrix{dim: dim, data: make([]float32, 0, n*dim), ids: make([]memory.ID, 0, n),
		rows: idtable.New(n), codes: make([]int8, 0, n*codeStride(dim)), quant: makeQuantCols(0, n)}
}

// appendRow adds the normalised row v of id.
func (m *matrix) appendRow(id memory.ID, v []float32) {
	m.ids = append(m.ids, id)
	m.rows.Insert(m.ids, len(m.ids)-1)
	m.data = append(m.data, v...)
	stride := codeStride(m.dim)
	n := len(m.codes)
	m.codes = slices.Grow(m.codes, stride)[:n+stride]
	m.quant.append(quantizeRow(m.codes[n:], v))
}

// setRow replaces row r with the normalised row v.
func (m *matrix) setRow(r int, v []float32) {
	copy(m.data[r*m.dim:(r+1)*m.dim], v)
	stride := codeStride(m.dim)
	m.quant.set(r, quantizeRow(m.codes[r*stride:(r+1)*stride], v))
}

// Compaction copies the live rows of a matrix once this many rows, and at
// least a quarter of all rows, are removed ones.
const compactDead = 1024

// New returns an empty index guarded by mu, which no other code may hold
// while it calls the index (a caller that orders its locks passes its own);
// nil selects a new sync.RWMutex.
func New(mu RWLocker) *Index {
	if mu == nil {
		mu = new(sync.RWMutex)
	}
	return &Index{mu: mu, byDim: make(map[int]*matrix), parallelCodes: defaultParallelCodes}
}

// Normalize returns v scaled to unit length, or nil for a zero vector.
func Normalize(v []float32) []float32 {
	out, ok := AppendNormalized(make([]float32, 0, len(v)), v)
	if !ok {
		return nil
	}
	return out
}

// AppendNormalized appends v scaled to unit length to dst, as a row for
// PutRows; a zero vector appends nothing and reports false.
func AppendNormalized(dst, v []float32) ([]float32, bool) {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return dst, false
	}
	inv := float32(1 / math.Sqrt(sum))
	for _, x := range v {
		dst = append(dst, x*inv)
	}
	return dst, true
}

// Put sets the vector of id (replacing any earlier one); nil or a zero
// vector removes it.
func (x *Index) Put(id memory.ID, v []float32) {
	n := Normalize(v)
	x.mu.Lock()
	defer x.mu.Unlock()
	if m, r, ok := x.findLocked(id); ok && m.dim == len(n) {
		// Same dimension: overwrite the row in place (an update that
		// keeps the embedding's size).
		m.setRow(r, n)
		return
	}
	x.removeLocked(id)
	if n == nil {
		return
	}
	m := x.byDim[len(n)]
	if m == nil {
		m = newMatrix(len(n), 0)
		x.byDim[len(n)] = m
	}
	m.appendRow(id, n)
}

// findLocked returns the matrix and row of id. A record has a row in at
// most one matrix, and an index rarely has more than one dimension, so
// asking each matrix costs less than keeping a map from record to
// dimension. The caller holds the lock.
func (x *Index) findLocked(id memory.ID) (*matrix, int, bool) {
	for _, m := range x.byDim {
		if r, ok := m.rows.Find(m.ids, id); ok {
			return m, r, true
		}
	}
	return nil, 0, false
}

// Remove drops the vector of id, if any.
func (x *Index) Remove(id memory.ID) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.removeLocked(id)
}

// removeLocked marks the row of id removed and compacts its matrix when
// enough rows are.
func (x *Index) removeLocked(id memory.ID) {
	for dim, m := range x.byDim {
		r, ok := m.rows.Remove(m.ids, id)
		if !ok {
			continue
		}
		m.ids[r] = memory.ID{}
		m.dead++
		if m.dead >= compactDead && m.dead*4 >= len(m.ids) {
			x.byDim[dim] = m.compacted()
		}
		return
	}
}

// compacted returns a new matrix holding the live rows of m.
func (m *matrix) compacted() *matrix {
	c := newMatrix(m.dim, len(m.ids)-m.dead)
	stride := codeStride(m.dim)
	for r, id := range m.ids {
		if id.IsNil() {
			continue
		}
		c.ids = append(c.ids, id)
		c.rows.Insert(c.ids, len(c.ids)-1)
		c.data = append(c.data, m.data[r*m.dim:(r+1)*m.dim]...)
		c.codes = append(c.codes, m.codes[r*stride:(r+1)*stride]...)
		c.quant.append(m.quant.at(r))
	}
	return c
}

// Hit is a record found by a search and its cosine similarity.
type Hit struct {
	ID    memory.ID
	Score float64
}

// Query is a search of the index.
type Query struct {
	Vector   []float32
	K        int     // hits wanted
	MinScore float64 // cosine similarity a hit must exceed
	// Filter, when set, decides which records may be returned. It is
	// called with Lock held.
	Filter func(memory.ID) bool
	// Lock, when set, guards what Filter reads. The search takes it
	// around every chunk of rows it scores exactly, before the index's
	// own lock; the caller must not hold it.
	Lock sync.Locker
	// Serial keeps the scan on one core (background work).
	Serial bool
}

// Search returns the K most similar records that pass the filter, best
// first; ties go to the smaller id so the order is deterministic. A record
// added or changed during the search may or may not be seen.
//
// It works in two passes (quant.go). The first bounds the score of every
// row from its codes, large matrices in parallel slices, under the
// index's lock only. The second scores exactly, under both locks, first
// the rows of the best bounds, which nearly always fill the top k, then
// every other row whose bound still reaches the k-th score: the answer is
// the one of an exact scan, with about k calls of the filter.
func (x *Index) Search(q Query) []Hit {
	if q.K <= 0 {
		return nil
	}
	sc := x.scratch()
	defer x.pool.Put(sc)
	v, ok := AppendNormalized(sc.v[:0], q.Vector)
	sc.v = v
	if !ok {
		return nil
	}
	x.mu.RLock()
	m := x.byDim[len(v)]
	var n int
	if m != nil {
		n = len(m.ids)
	}
	x.mu.RUnlock()
	if n == 0 {
		return nil
	}
	qq := sc.quantizeQuery(v)
	bounds := sc.boundsFor(n)
	parts := 1
	if codes := n * len(qq.codes); codes >= x.parallelCodes && !q.Serial {
		parts = max(1, min(runtime.GOMAXPROCS(0), codes/(x.parallelCodes/2)))
	}
	// Each part also keeps the rows of its best bounds, the rows the
	// exact pass starts from.
	floor := math.Nextafter32(float32(q.MinScore), float32(math.Inf(-1))) // at most q.MinScore
	nBest := min(q.K, n)
	nBest += nBest/8 + 4
	best := sc.heaps(parts, nBest, floor)
	var wg sync.WaitGroup
	for p := 1; p < parts; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x.bound(m, qq, p*n/parts, (p+1)*n/parts, bounds, &best[p])
		}()
	}
	x.bound(m, qq, 0, n/parts, bounds, &best[0])
	wg.Wait()
	h := x.refine(m, v, bounds, sc.bestRows(best, nBest), q, sc)
	sc.hits = h
	return h.sorted()
}

// defaultParallelCodes is the matrix size, in codes, from which a search
// uses several cores: some 0.1 ms of work on one (16,000 rows of 384
// dimensions, 100,000 of 64). Below it the cost of starting and joining
// the parts would take much of what they save.
const defaultParallelCodes = 6 << 20

// scanChunk is how many rows a search reads per hold of its locks: about
// 0.02 ms of work at 384 dimensions.
const scanChunk = 1024

// searchScratch is the memory a search works in, kept between searches
// (Index.pool) so that a search allocates little more than its answer.
type searchScratch struct {
	v      []float32 // the normalised query
	q      quantQuery
	bounds []float32
	best   []boundHeap
	all    []boundRow
	first  []int
	hits   vecHeap
	// touched keeps what matrix.touch reads, so that the reads stay.
	touched float32
}

// scratch returns a searchScratch from the pool, or a new one.
func (x *Index) scratch() *searchScratch {
	if sc, ok := x.pool.Get().(*searchScratch); ok {
		return sc
	}
	return new(searchScratch)
}

// quantizeQuery quantises the normalised query v into the scratch and
// prepares it for boundsI8.
func (sc *searchScratch) quantizeQuery(v []float32) *quantQuery {
	bytes := sc.q.bytes
	sc.q = quantizeQuery(v, sc.q.codes)
	sc.q.bytes = bytes
	prepareQuery(&sc.q)
	return &sc.q
}

// boundsFor returns room for the bounds of n rows.
func (sc *searchScratch) boundsFor(n int) []float32 {
	if cap(sc.bounds) < n {
		sc.bounds = make([]float32, n)
	}
	return sc.bounds[:n]
}

// heaps returns parts empty heaps of up to n rows above floor.
func (sc *searchScratch) heaps(parts, n int, floor float32) []boundHeap {
	if cap(sc.best) < parts {
		sc.best = make([]boundHeap, parts)
	}
	sc.best = sc.best[:parts]
	for i := range sc.best {
		sc.best[i].reset(n, floor)
	}
	return sc.best
}

// bound sets bounds[r] to the largest exact score row r of m can have,
// for the rows [lo, hi), taking the index's read lock per chunk, and
// keeps the rows of the best bounds in best. A row without a usable bound
// gets NaN, which no cut skips, so it is always scored.
func (x *Index) bound(m *matrix, qq *quantQuery, lo, hi int, bounds []float32, best *boundHeap) {
	stride := len(qq.codes)
	for c := lo; c < hi; c += scanChunk {
		end := min(c+scanChunk, hi)
		x.mu.RLock()
		boundsI8(qq, m.codes[c*stride:end*stride], m.quant.slice(c, end), bounds[c:end])
		x.mu.RUnlock()
		floor := best.floor // in a register: add is rare after the first chunk
		for i, b := range bounds[c:end] {
			if b > floor {
				best.add(b, c+i)
				floor = best.floor
			}
		}
	}
}

// refine scores exactly the rows of m whose bounds can reach the top k,
// the rows in first before the others, taking the locks per chunk, and
// returns the top-k heap, built in sc.hits. It marks the rows it scored
// in bounds.
func (x *Index) refine(m *matrix, v []float32, bounds []float32, first []int, q Query, sc *searchScratch) vecHeap {
	h := sc.hits[:0]
	// A row is skipped when its bound is below cut: not above the minimum
	// score, or below the worst of a full heap.
	minCut := math.Nextafter(q.MinScore, math.Inf(1))
	lock := func() {
		if q.Lock != nil {
			q.Lock.Lock()
		}
		x.mu.RLock()
	}
	unlock := func() {
		x.mu.RUnlock()
		if q.Lock != nil {
			q.Lock.Unlock()
		}
	}
	done := float32(math.Inf(-1))
	if len(first) > 0 {
		lock()
		sc.touched = m.touch(first)
		for _, r := range first {
			rescore(m, v, r, &h, q)
			bounds[r] = done
		}
		unlock()
	}
	cut := heapCut(h, q.K, minCut)
	for c := 0; c < len(bounds); c += scanChunk {
		chunk := bounds[c:min(c+scanChunk, len(bounds))]
		if !reaches(chunk, cut) {
			continue
		}
		lock()
		for i, b := range chunk {
			if float64(b) < cut {
				continue // cannot qualify: its exact score is at most b
			}
			rescore(m, v, c+i, &h, q)
			cut = heapCut(h, q.K, minCut)
		}
		unlock()
	}
	return h
}

// touch reads one value of each cache line of the float rows rows of m
// and returns their sum. The rows the exact pass starts from are spread
// over tens of megabytes, mostly out of the caches: touching them all
// first has their lines fetched from memory together rather than one row
// after the other, each waiting for its first line.
func (m *matrix) touch(rows []int) float32 {
	var s float32
	for _, r := range rows {
		row := m.data[r*m.dim : (r+1)*m.dim]
		for i := 0; i < len(row); i += 16 {
			s += row[i]
		}
	}
	return s
}

// reaches reports whether a bound in bounds is not below cut.
func reaches(bounds []float32, cut float64) bool {
	for _, b := range bounds {
		if !(float64(b) < cut) {
			return true
		}
	}
	return false
}

// rescore adds row r of m to the top-k heap h if it qualifies, by its
// exact score. The caller holds the index's read lock and q.Lock.
func rescore(m *matrix, v []float32, r int, h *vecHeap, q Query) {
	id := m.ids[r]
	if id.IsNil() {
		return
	}
	s := float64(dot(v, m.data[r*m.dim:(r+1)*m.dim]))
	if s <= q.MinScore {
		return
	}
	if len(*h) == q.K && !better(Hit{id, s}, (*h)[0]) {
		return
	}
	if q.Filter != nil && !q.Filter(id) {
		return
	}
	push(h, Hit{id, s}, q.K)
}

// boundHeap keeps the rows of the n largest bounds above a floor: a
// min-heap by bound. floor is what a bound must exceed to be added.
type boundHeap struct {
	rows  []boundRow
	n     int
	floor float32
}

type boundRow struct {
	bound float32
	r     int32
}

// reset empties the heap, to keep up to n rows of bounds above floor.
func (h *boundHeap) reset(n int, floor float32) {
	if cap(h.rows) < n {
		h.rows = make([]boundRow, 0, n)
	}
	h.rows, h.n, h.floor = h.rows[:0], n, floor
}

// add adds row r of bound b, which exceeds floor.
func (h *boundHeap) add(b float32, r int) {
	rows := h.rows
	if len(rows) < h.n {
		rows = append(rows, boundRow{b, int32(r)})
		for i := len(rows) - 1; i > 0 && rows[i].bound < rows[(i-1)/2].bound; i = (i - 1) / 2 {
			rows[i], rows[(i-1)/2] = rows[(i-1)/2], rows[i]
		}
		h.rows = rows
		if len(rows) == h.n {
			h.floor = rows[0].bound
		}
		return
	}
	rows[0] = boundRow{b, int32(r)}
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(rows) {
			break
		}
		if c+1 < len(rows) && rows[c+1].bound < rows[c].bound {
			c++
		}
		if rows[i].bound <= rows[c].bound {
			break
		}
		rows[i], rows[c] = rows[c], rows[i]
		i = c
	}
	h.floor = rows[0].bound
}

// bestRows returns the rows of the n best bounds of the heaps, best
// first: scored in that order, the first k rows nearly always are the top
// k, and the filter is seldom asked about the others.
func (sc *searchScratch) bestRows(heaps []boundHeap, n int) []int {
	all := sc.all[:0]
	for _, h := range heaps {
		all = append(all, h.rows...)
	}
	slices.SortFunc(all, func(a, b boundRow) int { return cmp.Compare(b.bound, a.bound) })
	all = all[:min(n, len(all))]
	sc.all = all
	out := sc.first[:0]
	for _, b := range all {
		out = append(out, int(b.r))
	}
	sc.first = out
	return out
}

// heapCut is the score below which nothing can enter the top-k heap h:
// minCut until it holds k hits, then the larger of minCut and its worst
// score.
func heapCut(h vecHeap, k int, minCut float64) float64 {
	if len(h) < k {
		return minCut
	}
	return max(minCut, h[0].Score)
}

// push adds c to a top-k heap. A record already in the heap keeps its
// better score: a record removed and added again during a search can be
// met twice.
func push(h *vecHeap, c Hit, k int) {
	for i := range *h {
		if (*h)[i].ID == c.ID {
			if better(c, (*h)[i]) {
				(*h)[i] = c
				h.fix(i)
			}
			return
		}
	}
	if len(*h) < k {
		*h = append(*h, c)
		h.up(len(*h) - 1)
		return
	}
	if better(c, (*h)[0]) {
		(*h)[0] = c
		h.down(0)
	}
}

// Dot is the inner product of a and b[:len(a)]: the cosine similarity of
// two normalised vectors.
func Dot(a, b []float32) float32 { return dot(a, b) }

// dotGeneric is the inner product in plain Go, unrolled by four. dot uses
// it where there is no vector instruction version.
func dotGeneric(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// better orders hits: higher score first, then smaller id.
func better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return bytes.Compare(a.ID[:], b.ID[:]) < 0
}

// vecHeap is a min-heap of the current top k (worst on top).
type vecHeap []Hit

// less orders the heap: the worse hit first.
func (h vecHeap) less(i, j int) bool { return better(h[j], h[i]) }

// up moves hit i up to its place.
func (h vecHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

// down moves hit i down to its place and reports whether it moved.
func (h vecHeap) down(i int) bool {
	start := i
	for {
		c := 2*i + 1
		if c >= len(h) {
			break
		}
		if c+1 < len(h) && h.less(c+1, c) {
			c++
		}
		if !h.less(c, i) {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
	return i > start
}

// fix restores the heap after hit i changed.
func (h vecHeap) fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

// sorted returns the hits of h, best first, in a new slice.
func (h vecHeap) sorted() []Hit {
	out := slices.Clone(h)
	slices.SortFunc(out, func(a, b Hit) int {
		if better(a, b) {
			return -1
		}
		if better(b, a) {
			return 1
		}
		return 0
	})
	return out
}

// Rank returns the records among ids whose vectors (of the query's
// dimension) are more similar to q.Vector than q.MinScore, best first and
// at most q.K of them, with the same scores and order as Search would
// give them: a search over a candidate set instead of every row. Ids
// without a vector are skipped; q.Lock, q.Filter and q.Serial are
// ignored. It reads one row per candidate, under the index's read lock.
func (x *Index) Rank(q Query, ids []memory.ID) []Hit {
	v := Normalize(q.Vector)
	if v == nil || q.K <= 0 {
		return nil
	}
	h := make(vecHeap, 0, q.K)
	x.mu.RLock()
	if m := x.byDim[len(v)]; m != nil {
		for _, id := range ids {
			r, ok := m.rows.Find(m.ids, id)
			if !ok {
				continue
			}
			s := float64(dot(v, m.data[r*m.dim:(r+1)*m.dim]))
			if s > q.MinScore {
				push(&h, Hit{id, s}, q.K)
			}
		}
	}
	x.mu.RUnlock()
	return h.sorted()
}

// Dims returns the dimensions the index holds vectors of, ascending.
func (x *Index) Dims() []int {
	x.mu.RLock()
	out := make([]int, 0, len(x.byDim))
	for d, m := range x.byDim {
		if len(m.ids) > m.dead {
			out = append(out, d)
		}
	}
	x.mu.RUnlock()
	slices.Sort(out)
	return out
}

// Len returns the number of vectors of dimension dim.
func (x *Index) Len(dim int) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if m := x.byDim[dim]; m != nil {
		return len(m.ids) - m.dead
	}
	return 0
}

// Rows calls fn with the live rows of dimension dim (normalised), a chunk
// at a time: their ids and their values, dim per row. It holds the lock
// for one chunk at a time, so writers are not held up behind a copy of
// the whole matrix; a row changed meanwhile may be seen before or after
// the change. fn must not keep the slices, and must not call the index.
func (x *Index) Rows(dim int, fn func(ids []memory.ID, rows []float32) error) error {
	x.mu.RLock()
	m := x.byDim[dim]
	n := 0
	if m != nil {
		n = len(m.ids)
	}
	x.mu.RUnlock()
	ids := make([]memory.ID, 0, scanChunk)
	rows := make([]float32, 0, scanChunk*dim)
	for c := 0; c < n; c += scanChunk {
		ids, rows = ids[:0], rows[:0]
		x.mu.RLock()
		for r := c; r < min(c+scanChunk, n); r++ {
			if id := m.ids[r]; !id.IsNil() {
				ids = append(ids, id)
				rows = append(rows, m.data[r*dim:(r+1)*dim]...)
			}
		}
		x.mu.RUnlock()
		if len(ids) == 0 {
			continue
		}
		if err := fn(ids, rows); err != nil {
			return err
		}
	}
	return nil
}

// PutRows adds rows of dimension dim that Rows returned (normalised
// already) for ids that have no vector yet, without normalising them
// again: for loading a saved copy of the index.
func (x *Index) PutRows(dim int, ids []memory.ID, rows []float32) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.putRowsLocked(dim, ids, rows)
}

// putRowsLocked is PutRows for a caller that holds the write lock.
func (x *Index) putRowsLocked(dim int, ids []memory.ID, rows []float32) {
	m := x.byDim[dim]
	if m == nil {
		m = newMatrix(dim, len(ids))
		x.byDim[dim] = m
	}
	m.data = slices.Grow(m.data, len(rows))
	m.ids = slices.Grow(m.ids, len(ids))
	m.codes = slices.Grow(m.codes, len(ids)*codeStride(dim))
	m.quant.grow(len(ids))
	for i, id := range ids {
		if x.hasLocked(id) {
			x.removeLocked(id)
			m = x.byDim[dim]
		}
		m.appendRow(id, rows[i*dim:(i+1)*dim])
	}
}

// AdoptRows is PutRows for a caller that hands its slices over: when the
// index has no rows of dimension dim and none of ids has a vector, the
// matrix takes rows and ids as they are, without a copy (for loading a
// large index at start). The caller must not use them afterwards.
func (x *Index) AdoptRows(dim int, ids []memory.ID, rows []float32) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.byDim[dim] != nil || len(rows) != len(ids)*dim || slices.ContainsFunc(ids, x.hasLocked) {
		x.putRowsLocked(dim, ids, rows)
		return
	}
	m := &matrix{dim: dim, data: rows, ids: ids, rows: idtable.New(len(ids)),
		codes: make([]int8, len(ids)*codeStride(dim)), quant: makeQuantCols(len(ids), 0)}
	stride := codeStride(dim)
	for i := range ids {
		m.quant.set(i, quantizeRow(m.codes[i*stride:(i+1)*stride], rows[i*dim:(i+1)*dim]))
	}
	for i, id := range ids {
		if r, dup := m.rows.Remove(ids, id); dup {
			// An id given twice keeps its last row, as PutRows would.
			ids[r] = memory.ID{}
			m.dead++
		}
		m.rows.Insert(ids, i)
	}
	x.byDim[dim] = m
}

// hasLocked reports whether id has a vector. The caller holds the lock.
func (x *Index) hasLocked(id memory.ID) bool {
	_, _, ok := x.findLocked(id)
	return ok
}
