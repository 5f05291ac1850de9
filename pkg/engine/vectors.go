package engine

import (
	"container/heap"
	"math"
	"runtime"
	"sync"

	"memsvc.dev/memsvc/pkg/memory"
)

// vectorIndex is the exact cosine search over caller-supplied embeddings.
// Vectors are L2-normalised and kept in one contiguous float32 matrix per
// dimension, so a search is a straight scan of memory. A query is compared
// only with vectors of its own dimension. One vector per record: the first
// embedding of its content.
type vectorIndex struct {
	mu    sync.RWMutex
	byDim map[int]*matrix
	where map[memory.ID]int // record -> dimension of its row
}

type matrix struct {
	dim  int
	data []float32 // len(ids) rows of dim values
	ids  []memory.ID
	row  map[memory.ID]int
}

func newVectorIndex() *vectorIndex {
	return &vectorIndex{byDim: make(map[int]*matrix), where: make(map[memory.ID]int)}
}

// normalize returns v scaled to unit length, or nil for a zero vector.
func normalize(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return nil
	}
	inv := float32(1 / math.Sqrt(sum))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x * inv
	}
	return out
}

// put sets the vector of id (replacing any earlier one); nil removes it.
func (x *vectorIndex) put(id memory.ID, v []float32) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.removeLocked(id)
	n := normalize(v)
	if n == nil {
		return
	}
	m := x.byDim[len(n)]
	if m == nil {
		m = &matrix{dim: len(n), row: make(map[memory.ID]int)}
		x.byDim[len(n)] = m
	}
	m.row[id] = len(m.ids)
	m.ids = append(m.ids, id)
	m.data = append(m.data, n...)
	x.where[id] = len(n)
}

func (x *vectorIndex) remove(id memory.ID) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.removeLocked(id)
}

// removeLocked deletes a row by moving the last row into its place.
func (x *vectorIndex) removeLocked(id memory.ID) {
	dim, ok := x.where[id]
	if !ok {
		return
	}
	delete(x.where, id)
	m := x.byDim[dim]
	r := m.row[id]
	last := len(m.ids) - 1
	if r != last {
		moved := m.ids[last]
		copy(m.data[r*dim:(r+1)*dim], m.data[last*dim:(last+1)*dim])
		m.ids[r] = moved
		m.row[moved] = r
	}
	m.ids = m.ids[:last]
	m.data = m.data[:last*dim]
	delete(m.row, id)
}

type vecHit struct {
	id    memory.ID
	score float64
}

// search returns the k most similar records (cosine similarity above
// minScore) that pass filter, best first; ties go to the smaller id so the
// order is deterministic.
func (x *vectorIndex) search(query []float32, k int, minScore float64, filter func(memory.ID) bool) []vecHit {
	q := normalize(query)
	if q == nil || k <= 0 {
		return nil
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	m := x.byDim[len(q)]
	if m == nil {
		return nil
	}
	// Large matrices are scanned in parallel slices, each keeping its own
	// top k, then merged; the result is the same as one scan.
	parts := 1
	if n := len(m.ids); n >= parallelRows {
		parts = min(runtime.GOMAXPROCS(0), n/(parallelRows/2))
	}
	heaps := make([]vecHeap, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*len(m.ids)/parts, (p+1)*len(m.ids)/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			heaps[p] = scanRows(m, q, lo, hi, k, minScore, filter)
		}()
	}
	wg.Wait()
	h := heaps[0]
	for _, other := range heaps[1:] {
		for _, c := range other {
			push(&h, c, k)
		}
	}
	out := make([]vecHit, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(vecHit)
	}
	return out
}

// parallelRows is the matrix size from which a search uses several cores.
const parallelRows = 16384

// scanRows keeps the top k of rows [lo, hi).
func scanRows(m *matrix, q []float32, lo, hi, k int, minScore float64, filter func(memory.ID) bool) vecHeap {
	h := make(vecHeap, 0, k)
	dim := m.dim
	for r := lo; r < hi; r++ {
		s := float64(dot(q, m.data[r*dim:(r+1)*dim]))
		if s <= minScore {
			continue
		}
		id := m.ids[r]
		if len(h) == k && !better(vecHit{id, s}, h[0]) {
			continue
		}
		if filter != nil && !filter(id) {
			continue
		}
		push(&h, vecHit{id, s}, k)
	}
	return h
}

// push adds c to a top-k heap.
func push(h *vecHeap, c vecHit, k int) {
	if len(*h) < k {
		heap.Push(h, c)
		return
	}
	if better(c, (*h)[0]) {
		(*h)[0] = c
		heap.Fix(h, 0)
	}
}

// dot is the inner product, unrolled by four for the scan's hot loop.
func dot(a, b []float32) float32 {
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
func better(a, b vecHit) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return idLess(a.id, b.id)
}

// vecHeap is a min-heap of the current top k (worst on top).
type vecHeap []vecHit

func (h vecHeap) Len() int           { return len(h) }
func (h vecHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h vecHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *vecHeap) Push(v any)        { *h = append(*h, v.(vecHit)) }
func (h *vecHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}
