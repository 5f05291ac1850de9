package vecindex

import (
	"math"
	"slices"
)

// A search reads every row of a matrix, and at a few hundred dimensions
// the float32 rows are tens of megabytes: the scan is bound by memory
// bandwidth. So each row is also kept quantised, as int8 codes with one
// scale per row (a quarter of the bytes), and a search first scores every
// row from its codes, with integer arithmetic, then computes the exact
// float32 score only of the rows that can still make its top k
// (filter and refine).
//
// The answer is exactly the one of a scan of the float32 rows, because
// the quantised score comes with a bound on its error. For a query q and
// a row x, with q̂ and x̂ their quantised approximations,
//
//	q·x − q̂·x̂ = q·(x − x̂) + (q − q̂)·x̂,
//	|q·x − q̂·x̂| ≤ ‖q‖·‖x − x̂‖ + ‖q − q̂‖·‖x̂‖   (Cauchy–Schwarz),
//
// and the float32 dot product the exact pass computes is within
// γ·‖q‖·‖x‖ of q·x, γ = (d+4)·2⁻²³ for d dimensions, more than twice
// the textbook bound of a sum of d products in float32. q̂·x̂ is an
// integer dot product times the two scales; the bound is computed from
// it in float32 with a slack for its roundings (boundParams). A row
// whose approximate score plus this bound is below the
// k-th best exact score found so far (or not above the minimum score)
// cannot enter the top k, and is skipped; every other row is scored
// exactly, as before.

// codeStride is the number of codes a row of dim values takes: dim
// rounded up to a multiple of 16, the width of one step of the integer
// kernel, with zero codes as padding.
func codeStride(dim int) int { return (dim + 15) &^ 15 }

// rowMax is the largest row code: rows are quantised symmetrically to
// [−127, 127].
const rowMax = 127

// rowQuant is what the bound needs of a quantised row: its scale (code
// to value), the length of its quantisation error ‖x − x̂‖ and the
// length of its approximation ‖x̂‖, both rounded up; and the sum of its
// codes, which the VNNI kernel needs (dot_amd64.go).
type rowQuant struct {
	scale float32
	err   float32
	norm  float32
	sum   int32
}

// quantizeRow writes the codes of row v to codes (codeStride(len(v))
// long; the padding is zeroed) and returns the row's quantisation.
func quantizeRow(codes []int8, v []float32) rowQuant {
	var maxAbs float32
	for _, x := range v {
		maxAbs = max(maxAbs, abs32(x))
	}
	clear(codes[len(v):])
	if maxAbs == 0 || math.IsInf(float64(maxAbs), 0) || maxAbs != maxAbs {
		// A zero row scores 0 from zero codes exactly; a row that is not
		// finite gets no usable bound (NaN), so it is always rescored.
		clear(codes[:len(v)])
		if maxAbs == 0 {
			return rowQuant{}
		}
		nan := float32(math.NaN())
		return rowQuant{scale: nan, err: nan, norm: nan}
	}
	scale := maxAbs / rowMax
	inv := rowMax / maxAbs
	// |x·inv| ≤ 127·(1+2⁻²³)², so rounding half away from zero gives a
	// code in [−127, 127]. Which integer a code is matters only for the
	// tightness of the bound, not its validity: the error is measured.
	s := float64(scale)
	var errSq float64
	var codeSq int64
	var sum int32
	for i, x := range v {
		f := x * inv
		c := int32(f + math.Float32frombits(math.Float32bits(f)&(1<<31)|math.Float32bits(0.5)))
		codes[i] = int8(c)
		d := float64(x) - float64(c)*s // exact: both terms have few bits and close exponents
		errSq += d * d
		codeSq += int64(c) * int64(c)
		sum += c
	}
	return rowQuant{scale: scale, err: roundUp(math.Sqrt(errSq)), norm: roundUp(s * math.Sqrt(float64(codeSq))), sum: sum}
}

// roundUp is f as a float32 no smaller than f (and a little larger, to
// cover the float64 rounding that computed f).
func roundUp(f float64) float32 {
	return math.Nextafter32(float32(f*(1+1e-12)), float32(math.Inf(1)))
}

func abs32(x float32) float32 {
	return math.Float32frombits(math.Float32bits(x) &^ (1 << 31))
}

// quantCols holds the rowQuant of each row of a matrix column by
// column, the layout the bound kernel reads eight rows at a time.
type quantCols struct {
	scale, err, norm []float32
	sum              []int32
}

// makeQuantCols returns columns of n zero rows with room for capacity.
func makeQuantCols(n, capacity int) quantCols {
	capacity = max(n, capacity)
	return quantCols{scale: make([]float32, n, capacity), err: make([]float32, n, capacity),
		norm: make([]float32, n, capacity), sum: make([]int32, n, capacity)}
}

// append adds a row.
func (c *quantCols) append(rq rowQuant) {
	c.scale = append(c.scale, rq.scale)
	c.err = append(c.err, rq.err)
	c.norm = append(c.norm, rq.norm)
	c.sum = append(c.sum, rq.sum)
}

// set replaces row r.
func (c *quantCols) set(r int, rq rowQuant) {
	c.scale[r], c.err[r], c.norm[r], c.sum[r] = rq.scale, rq.err, rq.norm, rq.sum
}

// at returns row r.
func (c *quantCols) at(r int) rowQuant {
	return rowQuant{scale: c.scale[r], err: c.err[r], norm: c.norm[r], sum: c.sum[r]}
}

// grow makes room for n more rows.
func (c *quantCols) grow(n int) {
	c.scale = slices.Grow(c.scale, n)
	c.err = slices.Grow(c.err, n)
	c.norm = slices.Grow(c.norm, n)
	c.sum = slices.Grow(c.sum, n)
}

// slice returns the rows [lo, hi).
func (c *quantCols) slice(lo, hi int) quantCols {
	return quantCols{scale: c.scale[lo:hi], err: c.err[lo:hi], norm: c.norm[lo:hi], sum: c.sum[lo:hi]}
}

// quantQuery is a search's query, quantised: int16 codes (padded to the
// code stride) and what the bound of a row needs. bytes holds the codes
// again, split for the VNNI kernel (dot_amd64.go), which multiplies
// unsigned bytes by signed ones: each code c is 256·h + l, with l in
// [0, 255] and h in [−128, 127]; the first stride bytes are the l, the
// next stride bytes the h + 128.
type quantQuery struct {
	codes  []int16
	bytes  []uint8
	params boundParams
}

// splitBytes fills q.bytes from q.codes.
func (q *quantQuery) splitBytes() {
	stride := len(q.codes)
	if cap(q.bytes) < 2*stride {
		q.bytes = make([]uint8, 2*stride)
	}
	q.bytes = q.bytes[:2*stride]
	for i, c := range q.codes {
		q.bytes[i] = uint8(c)
		q.bytes[stride+i] = uint8(c>>8) + 128
	}
}

// boundParams turn the integer dot product d of a row's codes with the
// query's and the row's rowQuant into a bound on its exact score, in
// float32 arithmetic (boundOf; the kernels compute it the same way, step
// by step):
//
//	a = d·scale·qScale                 the quantised score
//	s = err·errWeight + norm·normWeight the bound on its error
//	bound = a + s + (|a| + s)·relSlack + absSlack
//
// errWeight·err + normWeight·norm bounds the difference between a and
// the exact float32 score (quantizeQuery). Each step rounds to float32,
// a relative error of 2⁻²⁴, less than 2⁻²¹ over all of them; relSlack
// covers that eight times over, and absSlack the absolute error of a
// result in the subnormal range. A row that is not finite has a NaN
// scale, so a NaN bound: never below any cut, always scored exactly.
type boundParams struct {
	qScale     float32
	errWeight  float32
	normWeight float32
	absMask    uint32 // clears the sign bit: |a|
	relSlack   float32
	absSlack   float32
}

const (
	relSlack = 0x1p-18
	absSlack = 1e-30
)

// quantizeQuery quantises the normalised query v, its codes in buf when
// it has room. They are as fine as the int32 sums of the kernel allow:
// |code|·127·stride stays below 2³¹, so no partial sum overflows.
func quantizeQuery(v []float32, buf []int16) quantQuery {
	stride := codeStride(len(v))
	qMax := float64(min(math.MaxInt16, (math.MaxInt32)/(rowMax*stride)))
	var maxAbs float64
	var normSq float64
	for _, x := range v {
		maxAbs = max(maxAbs, math.Abs(float64(x)))
		normSq += float64(x) * float64(x)
	}
	if cap(buf) < stride {
		buf = make([]int16, stride)
	}
	q := quantQuery{codes: buf[:stride]}
	clear(q.codes)
	var errSq, scale float64
	if maxAbs > 0 && !math.IsInf(maxAbs, 0) {
		scale = maxAbs / qMax
		for i, x := range v {
			c := min(max(math.Round(float64(x)/scale), -qMax), qMax)
			q.codes[i] = int16(c)
			d := float64(x) - c*scale
			errSq += d * d
		}
	}
	norm := math.Sqrt(normSq) * (1 + 1e-12)
	qErr := math.Sqrt(errSq) * (1 + 1e-12)
	gamma := float64(len(v)+4) * 0x1p-23
	// |exact float32 score − q̂·x̂| ≤ norm·err + qErr·rowNorm + γ·norm·(rowNorm + err).
	q.params = boundParams{
		qScale:     float32(scale),
		errWeight:  roundUp(norm * (1 + gamma)),
		normWeight: roundUp(qErr + gamma*norm),
		absMask:    1<<31 - 1,
		relSlack:   relSlack,
		absSlack:   absSlack,
	}
	return q
}

// boundOf returns the largest exact score a row with integer dot product
// d and quantisation (scale, err, norm) can have, computed as the
// kernels compute it (every conversion to float32 is a rounding step the
// kernels make too, and keeps the compiler from fusing operations).
func (p *boundParams) boundOf(d int32, scale, err, norm float32) float32 {
	a := float32(float32(d) * scale)
	a = float32(a * p.qScale)
	s := float32(float32(err*p.errWeight) + float32(norm*p.normWeight))
	m := float32(math.Float32frombits(math.Float32bits(a)&p.absMask) + s)
	b := float32(a + s)
	b = float32(b + float32(m*p.relSlack))
	return float32(b + p.absSlack)
}

// boundsI8Generic sets out[r] to the bound of row r of codes (rows of
// len(q.codes) codes, rowQuant r in cols), in plain Go. boundsI8 uses it
// where there is no vector instruction version, and for the rows that do
// not fill the last group of eight.
func boundsI8Generic(q *quantQuery, codes []int8, cols quantCols, out []float32) {
	stride := len(q.codes)
	for r := range out {
		row := codes[r*stride : (r+1)*stride]
		var d int32
		for i, c := range row {
			d += int32(q.codes[i]) * int32(c)
		}
		out[r] = q.params.boundOf(d, cols.scale[r], cols.err[r], cols.norm[r])
	}
}
