package vecindex

import "math"

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
// integer dot product times the two scales, exact up to a float64
// rounding. A row whose approximate score plus this bound is below the
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
// length of its approximation ‖x̂‖, both rounded up.
type rowQuant struct {
	scale float32
	err   float32
	norm  float32
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
	for i, x := range v {
		f := x * inv
		c := int32(f + math.Float32frombits(math.Float32bits(f)&(1<<31)|math.Float32bits(0.5)))
		codes[i] = int8(c)
		d := float64(x) - float64(c)*s // exact: both terms have few bits and close exponents
		errSq += d * d
		codeSq += int64(c) * int64(c)
	}
	return rowQuant{scale: scale, err: roundUp(math.Sqrt(errSq)), norm: roundUp(s * math.Sqrt(float64(codeSq)))}
}

// roundUp is f as a float32 no smaller than f (and a little larger, to
// cover the float64 rounding that computed f).
func roundUp(f float64) float32 {
	return math.Nextafter32(float32(f*(1+1e-12)), float32(math.Inf(1)))
}

func abs32(x float32) float32 {
	return math.Float32frombits(math.Float32bits(x) &^ (1 << 31))
}

// quantQuery is a search's query, quantised: int16 codes (padded to the
// code stride), their scale, and what the bound needs.
type quantQuery struct {
	codes []int16
	scale float64
	// errWeight and normWeight turn a row's rowQuant into the bound on
	// its score error: errWeight·err + normWeight·norm.
	errWeight  float64
	normWeight float64
}

// quantizeQuery quantises the normalised query v. Its codes are as fine
// as the int32 sums of the kernel allow: |code|·127·stride stays below
// 2³¹, so no partial sum overflows.
func quantizeQuery(v []float32) quantQuery {
	stride := codeStride(len(v))
	qMax := float64(min(math.MaxInt16, (math.MaxInt32)/(rowMax*stride)))
	var maxAbs float64
	var normSq float64
	for _, x := range v {
		maxAbs = max(maxAbs, math.Abs(float64(x)))
		normSq += float64(x) * float64(x)
	}
	q := quantQuery{codes: make([]int16, stride)}
	var errSq float64
	if maxAbs > 0 && !math.IsInf(maxAbs, 0) {
		q.scale = maxAbs / qMax
		for i, x := range v {
			c := min(max(math.Round(float64(x)/q.scale), -qMax), qMax)
			q.codes[i] = int16(c)
			d := float64(x) - c*q.scale
			errSq += d * d
		}
	}
	norm := math.Sqrt(normSq) * (1 + 1e-12)
	qErr := math.Sqrt(errSq) * (1 + 1e-12)
	gamma := float64(len(v)+4) * 0x1p-23
	// |exact float32 score − q̂·x̂| ≤ norm·err + qErr·rowNorm + γ·norm·(rowNorm + err).
	q.errWeight = norm * (1 + gamma)
	q.normWeight = qErr + gamma*norm
	return q
}

// bound returns the largest exact score a row with quantised score dots
// (the integer dot product of the codes) and quantisation rq can have.
// It is NaN for a row without a usable bound.
func (q *quantQuery) bound(dots int32, rq rowQuant) float64 {
	approx := q.scale * float64(rq.scale) * float64(dots)
	slack := q.errWeight*float64(rq.err) + q.normWeight*float64(rq.norm)
	return approx + slack*(1+1e-9) + 1e-12
}

// dotsI8Generic sets out[r] to the dot product of q with row r of codes
// (rows of len(q) codes), in plain Go. dotsI8 uses it where there is no
// vector instruction version.
func dotsI8Generic(q []int16, codes []int8, out []int32) {
	stride := len(q)
	for r := range out {
		row := codes[r*stride : (r+1)*stride]
		var s int32
		for i, c := range row {
			s += int32(q[i]) * int32(c)
		}
		out[r] = s
	}
}
