package vecindex

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

// exactScan is the reference search: every live row of m scored with
// dot, the qualifying ones sorted, the first q.K kept.
func exactScan(m *matrix, vector []float32, q Query) []Hit {
	v := Normalize(vector)
	var all []Hit
	for r, id := range m.ids {
		if id.IsNil() {
			continue
		}
		s := float64(dot(v, m.data[r*m.dim:(r+1)*m.dim]))
		if s > q.MinScore && (q.Filter == nil || q.Filter(id)) {
			all = append(all, Hit{id, s})
		}
	}
	slices.SortFunc(all, func(a, b Hit) int {
		if better(a, b) {
			return -1
		}
		return 1
	})
	return all[:min(len(all), q.K)]
}

// randomCols returns quantisations for rows of codes (their sums
// included): mostly ordinary ones, and some zero, NaN, infinite,
// subnormal or huge values, where the float32 steps of the bound would
// show a difference.
func randomCols(rng *rand.Rand, codes []int8, stride int) quantCols {
	rows := len(codes) / stride
	c := makeQuantCols(rows, 0)
	special := []float32{0, float32(math.NaN()), float32(math.Inf(1)), 1e-40, 3e38, math.SmallestNonzeroFloat32}
	pick := func(typical float32) float32 {
		if rng.IntN(8) == 0 {
			return special[rng.IntN(len(special))]
		}
		return typical * rng.Float32()
	}
	for r := range rows {
		c.scale[r], c.err[r], c.norm[r] = pick(1.0/rowMax), pick(0.01), pick(1.1)
		for _, x := range codes[r*stride : (r+1)*stride] {
			c.sum[r] += int32(x)
		}
	}
	return c
}

// boundsKernel is a version of boundsI8.
type boundsKernel func(q *quantQuery, codes []int8, cols quantCols, out []float32)

// checkBounds checks a bound kernel against boundOf of the exact integer
// dot products, value for value (bit for bit: every version rounds the
// same float32 steps): random codes at the extremes of their ranges
// (where an overflow would show), every stride up to 176, row counts up
// to 25 (whole groups of eight and the rest), quantisations with extreme
// values, and the largest sums a stride can meet.
func checkBounds(t *testing.T, kernel boundsKernel) {
	t.Helper()
	rng := rand.New(rand.NewPCG(21, 22))
	for stride := 16; stride <= 176; stride += 16 {
		qMax := min(math.MaxInt16, math.MaxInt32/(rowMax*stride))
		for rows := 0; rows <= 25; rows++ {
			qq := quantQuery{codes: make([]int16, stride), params: boundParams{
				qScale: rng.Float32() * 1e-4, errWeight: 1 + rng.Float32()*1e-5, normWeight: rng.Float32() * 1e-3,
				absMask: 1<<31 - 1, relSlack: relSlack, absSlack: absSlack,
			}}
			codes := make([]int8, rows*stride)
			for i := range qq.codes {
				qq.codes[i] = int16(rng.IntN(2*qMax+1) - qMax)
				if rng.IntN(4) == 0 {
					qq.codes[i] = int16([]int{qMax, -qMax}[rng.IntN(2)])
				}
			}
			for i := range codes {
				codes[i] = int8(rng.IntN(2*rowMax+1) - rowMax)
				if rng.IntN(4) == 0 {
					codes[i] = int8([]int{rowMax, -rowMax}[rng.IntN(2)])
				}
			}
			cols := randomCols(rng, codes, stride)
			got := make([]float32, rows)
			kernel(&qq, codes, cols, got)
			for r := range rows {
				var exact int64
				for i := range stride {
					exact += int64(qq.codes[i]) * int64(codes[r*stride+i])
				}
				want := qq.params.boundOf(int32(exact), cols.scale[r], cols.err[r], cols.norm[r])
				if math.Float32bits(got[r]) != math.Float32bits(want) && !(got[r] != got[r] && want != want) {
					t.Fatalf("stride %d, %d rows, row %d: %v, from the exact sum %d: %v", stride, rows, r, got[r], exact, want)
				}
			}
		}
	}
	// All codes at their extremes: the largest sums the kernel can meet,
	// in a full group of eight rows.
	for _, stride := range []int{16, 48, 384, 4096, 65536} {
		qMax := int16(min(math.MaxInt16, math.MaxInt32/(rowMax*stride)))
		for _, sign := range []int16{1, -1} {
			qq := quantQuery{codes: make([]int16, stride), params: boundParams{qScale: 1, absMask: 1<<31 - 1}}
			for i := range qq.codes {
				qq.codes[i] = sign * qMax
			}
			codes := make([]int8, 8*stride)
			for i := range codes {
				codes[i] = -rowMax
			}
			cols := randomCols(rng, codes, stride)
			for r := range 8 {
				cols.scale[r], cols.err[r], cols.norm[r] = 1, 0, 0
			}
			got := make([]float32, 8)
			kernel(&qq, codes, cols, got)
			want := float32(-int64(sign) * int64(qMax) * rowMax * int64(stride))
			for r, b := range got {
				if b != want {
					t.Fatalf("stride %d at the extremes, row %d: %v, want %v", stride, r, b, want)
				}
			}
		}
	}
}

// TestBoundsI8 checks boundsI8 as searches call it (with the vector
// instructions of this processor, if any) and the plain Go version.
func TestBoundsI8(t *testing.T) {
	checkBounds(t, func(q *quantQuery, codes []int8, cols quantCols, out []float32) {
		prepareQuery(q)
		boundsI8(q, codes, cols, out)
	})
	checkBounds(t, boundsI8Generic)
}

// quantVectors returns the kinds of vectors the bound must hold for:
// Gaussian ones, small integers (many exact ties), one large coordinate
// among tiny ones, and coordinates spanning many orders of magnitude.
func quantVectors(rng *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	switch rng.IntN(4) {
	case 0:
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
	case 1:
		for i := range v {
			v[i] = float32(rng.IntN(5) - 2)
		}
	case 2:
		for i := range v {
			v[i] = float32(rng.NormFloat64() * 1e-3)
		}
		v[rng.IntN(dim)] = 1
	default:
		for i := range v {
			v[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(30)-15)))
		}
	}
	return v
}

// TestQuantBound: the bound of a row is never below the exact score of
// the row (as dot and the plain Go loop compute it), across dimensions
// that do and do not fill the kernel's steps and kinds of vectors.
func TestQuantBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	var slack float64
	for _, dim := range []int{1, 2, 3, 7, 16, 17, 64, 100, 384, 1536} {
		stride := codeStride(dim)
		for range 40 {
			v := Normalize(quantVectors(rng, dim))
			if v == nil {
				continue
			}
			qq := quantizeQuery(v, nil)
			const rows = 50
			codes := make([]int8, rows*stride)
			data := make([]float32, 0, rows*dim)
			quant := makeQuantCols(rows, 0)
			for r := range rows {
				x := Normalize(quantVectors(rng, dim))
				if x == nil {
					x = make([]float32, dim)
				}
				if r == 0 {
					x = slices.Clone(v) // the query itself: the largest score
				}
				data = append(data, x...)
				quant.set(r, quantizeRow(codes[r*stride:(r+1)*stride], x))
			}
			bounds := make([]float32, rows)
			prepareQuery(&qq)
			boundsI8(&qq, codes, quant, bounds)
			for r := range rows {
				x := data[r*dim : (r+1)*dim]
				ub := float64(bounds[r])
				for _, exact := range []float64{float64(dot(v, x)), float64(dotGeneric(v, x))} {
					if exact > ub {
						t.Fatalf("dim %d row %d: exact score %v above its bound %v", dim, r, exact, ub)
					}
					slack = max(slack, ub-exact)
				}
			}
		}
	}
	t.Logf("largest bound above an exact score: %.4f", slack)
}

// TestQuantizeRowEdges: a zero row has a zero bound; a row that is not
// finite has none (NaN), so a search always scores it exactly.
func TestQuantizeRowEdges(t *testing.T) {
	codes := make([]int8, 16)
	for i := range codes {
		codes[i] = 9 // padding and codes must be overwritten
	}
	if rq := quantizeRow(codes, make([]float32, 3)); rq != (rowQuant{}) || slices.ContainsFunc(codes, func(c int8) bool { return c != 0 }) {
		t.Fatalf("zero row: %+v, codes %v", rq, codes)
	}
	qq := quantizeQuery(Normalize([]float32{1, 2, 3}), nil)
	for _, bad := range []float32{float32(math.Inf(1)), float32(math.NaN())} {
		rq := quantizeRow(codes, []float32{1, bad, 0})
		if ub := qq.params.boundOf(0, rq.scale, rq.err, rq.norm); ub == ub {
			t.Fatalf("row with %v: bound %v, want NaN", bad, ub)
		}
	}
}

// TestSearchMatchesExactScan is the property of the filter-and-refine
// scan: on random corpora (several dimensions, exact ties, near
// duplicates, removed and replaced rows, sizes that use the parallel
// scan) and random queries, k, minimum scores and filters, Search returns
// exactly what scoring every row exactly returns, scores and order
// included.
func TestSearchMatchesExactScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	for round := range 12 {
		dim := []int{3, 16, 33, 64, 384}[round%5]
		n := 200 + rng.IntN(3000)
		if round%4 == 3 {
			n = parallelRows + rng.IntN(3000)
		}
		x := New(nil)
		x.parallelCodes = parallelRows * codeStride(dim)
		var base []float32
		for i := range n {
			v := quantVectors(rng, dim)
			switch {
			case i%7 == 3 && base != nil:
				// A near duplicate of an earlier row.
				v = slices.Clone(base)
				v[rng.IntN(dim)] += float32(rng.NormFloat64() * 1e-6)
			case i%11 == 5 && base != nil:
				v = slices.Clone(base) // an exact tie
			}
			if i == 10 {
				base = v
			}
			x.Put(testID(i), v)
		}
		for i := range n / 10 {
			id := testID(rng.IntN(n))
			if i%2 == 0 {
				x.Remove(id)
			} else {
				x.Put(id, quantVectors(rng, dim))
			}
		}
		for range 8 {
			q := Query{Vector: quantVectors(rng, dim), K: 1 + rng.IntN(80)}
			switch rng.IntN(3) {
			case 0:
				q.Vector = slices.Clone(base)
			case 1:
				q.MinScore = rng.Float64()*1.2 - 0.2
			}
			if rng.IntN(2) == 0 {
				mod := 2 + rng.IntN(3)
				q.Filter = func(id memory.ID) bool { return int(id[2])%mod != 0 }
			}
			got := x.Search(q)
			want := exactScan(x.byDim[dim], q.Vector, q)
			if !slices.Equal(got, want) {
				t.Fatalf("round %d (dim %d, %d rows, k %d, min %.3f): search differs from the exact scan\ngot  %v\nwant %v",
					round, dim, n, q.K, q.MinScore, got[:min(5, len(got))], want[:min(5, len(want))])
			}
		}
	}
}

// TestSearchFiltersFewRows: the exact pass starts from the best bounds,
// best first, so on Gaussian embeddings the filter sees little more than
// k rows (at most 1.2·k here), not the k·ln(n/k) a scan in row order
// offers it, nor all the rows of the best bounds.
func TestSearchFiltersFewRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	for _, dim := range []int{64, 384} {
		x := New(nil)
		for i := range 20_000 {
			x.Put(testID(i), normalVec(rng, dim))
		}
		calls := 0
		for range 10 {
			hits := x.Search(Query{Vector: normalVec(rng, dim), K: 50, Filter: func(memory.ID) bool { calls++; return true }})
			if len(hits) != 50 {
				t.Fatalf("%d hits", len(hits))
			}
		}
		if calls > 10*60 {
			t.Fatalf("dim %d: %d filter calls per search of k=50", dim, calls/10)
		}
		t.Logf("dim %d: %d filter calls per search of k=50", dim, calls/10)
	}
}

// TestSearchDuringWrites: parallel searches while rows are updated in
// place, removed (enough to compact the matrix) and added return sorted
// answers with each record once (run with -race, it also checks the
// locking of both passes).
func TestSearchDuringWrites(t *testing.T) {
	const dim, n = 32, parallelRows + 2000
	rng := rand.New(rand.NewPCG(29, 30))
	x := New(nil)
	x.parallelCodes = parallelRows * codeStride(dim)
	for i := range n {
		x.Put(testID(i), normalVec(rng, dim))
	}
	queries := make([][]float32, 20)
	for i := range queries {
		queries[i] = normalVec(rng, dim)
	}
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		wr := rand.New(rand.NewPCG(31, 32))
		for i := range n / 2 {
			x.Remove(testID(i))
			x.Put(testID(n-1-i%1000), normalVec(wr, dim)) // in place
			if i%4 == 0 {
				x.Put(testID(n+i), normalVec(wr, dim))
			}
		}
	}()
	for i := 0; ; i++ {
		got := x.Search(Query{Vector: queries[i%len(queries)], K: 40})
		seen := map[memory.ID]bool{}
		for j, h := range got {
			if seen[h.ID] || j > 0 && better(h, got[j-1]) {
				t.Fatalf("search %d: hit %d (%v) repeated or out of order", i, j, h)
			}
			seen[h.ID] = true
		}
		select {
		case <-wrote:
			if m := x.byDim[dim]; len(m.ids) >= n {
				t.Fatalf("the removals did not compact the matrix (%d rows)", len(m.ids))
			}
			return
		default:
		}
		if i == 10_000 {
			t.Fatal("the writer did not finish within 10,000 searches")
		}
	}
}
