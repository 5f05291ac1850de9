package vecindex

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// TestVectorSearchParallelMatchesSequential: the parallel scan of a large
// matrix returns exactly what one sequential scan does, ties included.
func TestVectorSearchParallelMatchesSequential(t *testing.T) {
	x := New(nil)
	x.parallelCodes = parallelRows * codeStride(16)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < parallelRows*2+17; i++ {
		var id memory.ID
		id[0], id[1], id[2] = byte(i>>16), byte(i>>8), byte(i)
		v := make([]float32, 16)
		for j := range v {
			v[j] = float32(rng.IntN(3)) // few distinct values: many exact ties
		}
		x.Put(id, v)
	}
	x.Put(memory.ID{0xff}, []float32{1, 2}) // other dimension: skipped
	q := make([]float32, 16)
	for j := range q {
		q[j] = float32(rng.IntN(3))
	}
	odd := func(id memory.ID) bool { return id[2]%2 == 1 }
	for _, k := range []int{1, 10, 500} {
		got := x.Search(Query{Vector: q, K: k, Filter: odd})
		want := exactScan(x.byDim[16], q, Query{K: k, Filter: odd})
		if !slices.Equal(got, want) {
			t.Fatalf("k=%d: parallel %v\nsequential %v", k, got[:min(5, len(got))], want[:min(5, len(want))])
		}
		for i := 1; i < len(got); i++ {
			if better(got[i], got[i-1]) {
				t.Fatalf("k=%d: results out of order at %d", k, i)
			}
		}
	}
	if got := x.Search(Query{Vector: []float32{1, 0, 0}, K: 5}); len(got) != 0 {
		t.Fatalf("a query of another dimension matched %d vectors", len(got))
	}
}

// parallelRows is the matrix size, in rows, from which the tests make
// searches use several cores (Index.parallelCodes).
const parallelRows = 16384

func testID(i int) memory.ID {
	var id memory.ID
	id[0], id[1], id[2], id[15] = byte(i>>16), byte(i>>8), byte(i), 1
	return id
}

// bruteForce is the reference answer: every live vector scored, sorted.
func bruteForce(vecs map[memory.ID][]float32, q []float32, k int) []Hit {
	nq := Normalize(q)
	var all []Hit
	for id, v := range vecs {
		all = append(all, Hit{id, float64(dot(nq, Normalize(v)))})
	}
	slices.SortFunc(all, func(a, b Hit) int {
		if better(a, b) {
			return -1
		}
		return 1
	})
	var out []Hit
	for _, h := range all {
		if h.Score > 0 && len(out) < k {
			out = append(out, h)
		}
	}
	return out
}

// TestVectorRemoveAndCompact: removals mark rows, compaction copies the
// live ones, and searches answer exactly as a brute-force scan throughout.
func TestVectorRemoveAndCompact(t *testing.T) {
	x := New(nil)
	rng := rand.New(rand.NewPCG(5, 6))
	vecs := map[memory.ID][]float32{}
	randVec := func() []float32 {
		v := make([]float32, 8)
		for j := range v {
			v[j] = rng.Float32()
		}
		return v
	}
	for i := range 6000 {
		id := testID(i)
		vecs[id] = randVec()
		x.Put(id, vecs[id])
	}
	q := randVec()
	check := func(when string) {
		t.Helper()
		got := x.Search(Query{Vector: q, K: 20})
		want := bruteForce(vecs, q, 20)
		if len(got) != len(want) {
			t.Fatalf("%s: %d hits, want %d", when, len(got), len(want))
		}
		for i := range got {
			if got[i].ID != want[i].ID {
				t.Fatalf("%s: hit %d is %v, want %v", when, i, got[i], want[i])
			}
		}
	}
	check("loaded")
	// Remove the best hits and a thousand more: below the compaction
	// threshold first, then over it.
	for _, h := range x.Search(Query{Vector: q, K: 5}) {
		x.Remove(h.ID)
		delete(vecs, h.ID)
	}
	check("after removing the top five")
	if m := x.byDim[8]; m.dead != 5 || len(m.ids) != 6000 {
		t.Fatalf("removal should only mark rows: dead %d of %d", m.dead, len(m.ids))
	}
	for i := range 1600 {
		x.Remove(testID(i))
		delete(vecs, testID(i))
	}
	if m := x.byDim[8]; len(m.ids) >= 6000 || len(m.ids)-m.dead != len(vecs) || m.rows.Len() != len(vecs) {
		t.Fatalf("no compaction: dead %d, rows %d, live %d", m.dead, len(m.ids), len(vecs))
	}
	deadBefore := x.byDim[8].dead
	check("after compaction")
	// Putting again the same dimension overwrites in place; another
	// dimension moves the record.
	id := testID(4000)
	vecs[id] = randVec()
	x.Put(id, vecs[id])
	if m := x.byDim[8]; m.dead != deadBefore {
		t.Fatalf("an update in place marked %d rows removed", m.dead-deadBefore)
	}
	check("after an update")
	x.Put(id, []float32{1, 2, 3})
	delete(vecs, id)
	check("after moving a record to another dimension")
	if got := x.Search(Query{Vector: []float32{1, 2, 3}, K: 3}); len(got) != 1 || got[0].ID != id {
		t.Fatalf("the moved record is not found in its new dimension: %v", got)
	}
}

// chunkHook is an index lock that runs fn, once, when it is read-locked
// for the n-th time (so in the middle of a scan), and counts the
// read-locks.
type chunkHook struct {
	mu     sync.RWMutex
	rcalls int
	n      int
	fn     func()
}

func (c *chunkHook) RLock() {
	c.rcalls++
	if c.rcalls == c.n {
		c.fn()
	}
	c.mu.RLock()
}

func (c *chunkHook) RUnlock() { c.mu.RUnlock() }
func (c *chunkHook) Lock()    { c.mu.Lock() }
func (c *chunkHook) Unlock()  { c.mu.Unlock() }

// countLock is a sync.Locker that counts how often it is taken.
type countLock struct {
	sync.Mutex
	calls int
}

func (c *countLock) Lock() {
	c.Mutex.Lock()
	c.calls++
}

// TestVectorSearchLetsWritersIn: a long scan holds its locks a chunk at a
// time, so a writer that arrives mid-scan gets in before the scan ends;
// a writer waiting for the whole scan would never finish here. The
// caller's lock (q.Lock) is taken only for the exact pass, which visits
// few chunks.
func TestVectorSearchLetsWritersIn(t *testing.T) {
	hook := &chunkHook{}
	x := New(hook)
	rng := rand.New(rand.NewPCG(7, 8))
	const rows = scanChunk * 6
	for i := range rows {
		v := make([]float32, 8)
		for j := range v {
			v[j] = rng.Float32()
		}
		x.Put(testID(i), v)
	}
	wrote := make(chan struct{})
	hook.rcalls, hook.n = 0, 3 // the search's first read-lock, then the first two chunks
	hook.fn = func() {
		go func() {
			// Enough removals to compact the matrix under the scan.
			for i := range rows / 2 {
				x.Remove(testID(i))
			}
			x.Put(testID(rows+1), []float32{1, 1, 1, 1, 1, 1, 1, 1})
			close(wrote)
		}()
		select {
		case <-wrote:
		case <-time.After(10 * time.Second):
			t.Error("a writer could not get in between two chunks of a scan")
		}
	}
	caller := &countLock{}
	got := x.Search(Query{Vector: []float32{1, 1, 1, 1, 1, 1, 1, 1}, K: 50, Lock: caller, Serial: true})
	if hook.rcalls < 1+rows/scanChunk {
		t.Fatalf("the search read-locked the index %d times, want at least one per chunk (%d)", hook.rcalls, rows/scanChunk)
	}
	if caller.calls < 1 || caller.calls > 1+rows/scanChunk {
		t.Fatalf("the search took the caller's lock %d times, want 1 to %d", caller.calls, 1+rows/scanChunk)
	}
	if m := x.byDim[8]; len(m.ids) >= rows || len(m.ids)-m.dead != rows/2+1 {
		t.Fatalf("the matrix was not compacted: %d rows, %d removed", len(m.ids), m.dead)
	}
	// The search finished on the matrix it started with: every hit is a
	// record that existed when it began, once.
	seen := map[memory.ID]bool{}
	for _, h := range got {
		if seen[h.ID] || h.ID == testID(rows+1) {
			t.Fatalf("hit %v is a duplicate or was added after the search began", h.ID)
		}
		seen[h.ID] = true
	}
	if len(got) != 50 {
		t.Fatalf("%d hits, want 50", len(got))
	}
}

// TestVectorPushKeepsOneHitPerRecord: a record met twice in one search
// (removed and added again while the search ran) is returned once.
func TestVectorPushKeepsOneHitPerRecord(t *testing.T) {
	var h vecHeap
	id := testID(1)
	push(&h, Hit{id, 0.5}, 3)
	push(&h, Hit{testID(2), 0.4}, 3)
	push(&h, Hit{id, 0.9}, 3)
	push(&h, Hit{id, 0.1}, 3)
	if len(h) != 2 {
		t.Fatalf("heap %v, want two records", h)
	}
	for _, c := range h {
		if c.ID == id && c.Score != 0.9 {
			t.Fatalf("record kept score %v, want its better 0.9", c.Score)
		}
	}
}

// BenchmarkVectorDot measures the exact inner product (dot) on one core
// over 100,000 rows of 384 dimensions (154 MB, far more than the caches
// hold): the loop of Rank and of the exact pass of a search.
func BenchmarkVectorDot(b *testing.B) {
	benchDot(b, dot)
}

func benchDot(b *testing.B, dot func(a, b []float32) float32) {
	const dim, rows = 384, 100_000
	rng := rand.New(rand.NewPCG(11, 12))
	m := make([]float32, dim*rows)
	for i := range m {
		m[i] = rng.Float32()
	}
	q := m[:dim]
	b.SetBytes(int64(len(m) * 4))
	var sink float32
	for b.Loop() {
		for r := range rows {
			sink += dot(q, m[r*dim:(r+1)*dim])
		}
	}
	if sink == 0 {
		b.Fatal("no work done")
	}
}

// TestRankMatchesSearch: ranking a candidate set gives the scores and the
// order a full search gives the same records.
func TestRankMatchesSearch(t *testing.T) {
	x := New(nil)
	rng := rand.New(rand.NewPCG(5, 6))
	vec := func() []float32 {
		v := make([]float32, 8)
		for j := range v {
			v[j] = float32(rng.IntN(3))
		}
		return v
	}
	var ids []memory.ID
	for i := range 3000 {
		x.Put(testID(i), vec())
		if i%3 == 0 {
			ids = append(ids, testID(i))
		}
	}
	ids = append(ids, testID(99999)) // no vector: skipped
	inSet := map[memory.ID]bool{}
	for _, id := range ids {
		inSet[id] = true
	}
	for range 20 {
		q := Query{Vector: vec(), K: 1 + rng.IntN(40), MinScore: rng.Float64() * 0.8}
		got := x.Rank(q, ids)
		q.Filter = func(id memory.ID) bool { return inSet[id] }
		if want := x.Search(q); !slices.Equal(got, want) {
			t.Fatalf("Rank %v\nSearch %v", got[:min(3, len(got))], want[:min(3, len(want))])
		}
	}
}

// TestRowsRoundTrip: the rows of an index put into another give the same
// searches, also when rows were removed and replaced meanwhile.
func TestRowsRoundTrip(t *testing.T) {
	x := New(nil)
	rng := rand.New(rand.NewPCG(7, 8))
	vec := func(dim int) []float32 { return normalVec(rng, dim) }
	for i := range 2500 {
		x.Put(testID(i), vec(16+i%2*8))
	}
	for i := 0; i < 2500; i += 4 {
		x.Remove(testID(i))
	}
	y := New(nil)
	for _, dim := range x.Dims() {
		err := x.Rows(dim, func(ids []memory.ID, rows []float32) error {
			y.PutRows(dim, slices.Clone(ids), slices.Clone(rows))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if x.Len(dim) != y.Len(dim) {
			t.Fatalf("dimension %d: %d rows, copied %d", dim, x.Len(dim), y.Len(dim))
		}
	}
	if !slices.Equal(x.Dims(), []int{16, 24}) || !slices.Equal(y.Dims(), x.Dims()) {
		t.Fatalf("dimensions %v and %v", x.Dims(), y.Dims())
	}
	for range 10 {
		for _, dim := range []int{16, 24} {
			q := Query{Vector: vec(dim), K: 20}
			if a, b := x.Search(q), y.Search(q); !slices.Equal(a, b) {
				t.Fatalf("dimension %d: searches differ after the copy", dim)
			}
		}
	}
}

// TestAdoptRowsMatchesPut: rows handed over with AdoptRows (normalised
// with AppendNormalized, zero vectors left out, an id given twice) give
// the index Put gives; and where the dimension already has rows, or an id
// has a vector of another size, AdoptRows copies like PutRows.
func TestAdoptRowsMatchesPut(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	vec := func(dim int) []float32 { return normalVec(rng, dim) }
	want, got := New(nil), New(nil)
	var ids []memory.ID
	var rows []float32
	add := func(id memory.ID, v []float32) {
		want.Put(id, v)
		var ok bool
		if rows, ok = AppendNormalized(rows, v); ok {
			ids = append(ids, id)
		}
	}
	for i := range 300 {
		v := vec(16)
		if i%50 == 0 {
			v = make([]float32, 16) // zero: no vector
		}
		add(testID(i), v)
	}
	add(testID(7), vec(16)) // given twice: the last row counts
	got.Put(testID(1000), vec(24))
	want.Put(testID(1000), got.vectorOf(t, testID(1000)))
	got.AdoptRows(16, ids, rows)
	// A dimension with rows already, and an id moving from 24 to 16.
	more := []memory.ID{testID(1000), testID(1001)}
	moreRows, _ := AppendNormalized(nil, vec(16))
	moreRows, _ = AppendNormalized(moreRows, vec(16))
	for i, id := range more {
		want.Put(id, moreRows[i*16:(i+1)*16])
	}
	got.AdoptRows(16, more, moreRows)
	for _, dim := range []int{16, 24} {
		if got.Len(dim) != want.Len(dim) {
			t.Fatalf("dimension %d: %d rows, want %d", dim, got.Len(dim), want.Len(dim))
		}
	}
	if got.Len(16) != 300-6+2 || got.Len(24) != 0 {
		t.Fatalf("rows: %d of 16, %d of 24", got.Len(16), got.Len(24))
	}
	for range 10 {
		q := Query{Vector: vec(16), K: 400}
		if a, b := got.Search(q), want.Search(q); len(a) == 0 || !slices.Equal(a, b) {
			t.Fatalf("search: %d hits adopted, %d put (or they differ)", len(a), len(b))
		}
	}
}

// vectorOf returns the stored (normalised) row of id.
func (x *Index) vectorOf(t *testing.T, id memory.ID) []float32 {
	t.Helper()
	x.mu.RLock()
	defer x.mu.RUnlock()
	m, r, ok := x.findLocked(id)
	if !ok {
		t.Fatalf("%v has no vector", id)
	}
	return slices.Clone(m.data[r*m.dim : (r+1)*m.dim])
}

// normalVec returns a vector of dim coordinates drawn from the standard
// normal distribution.
func normalVec(rng *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for j := range v {
		v[j] = float32(rng.NormFloat64())
	}
	return v
}
