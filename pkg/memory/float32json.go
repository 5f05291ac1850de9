package memory

import (
	"bytes"
	"math"
	"slices"
	"strconv"
)

// Embeddings are the bulk of a recall answer that carries them: ten
// records of 384 dimensions are 7,680 numbers, each written twice (the
// record's content and its rendered copy share the embedding). These
// functions read such arrays faster than strconv and encoding/json do,
// with exactly their results.

// parseJSONFloat32 returns the float32 nearest the JSON number tok (a
// valid JSON number token) as strconv.ParseFloat(tok, 32) does; ok is
// false where strconv reports an error (the value is out of range).
//
// The fast path reads up to 19 significant digits into an integer m and
// the decimal exponent e; when m < 2⁵³ and |e| ≤ 22, m and 10^|e| are
// exact float64 values, so m·10^e or m/10^-e is the correctly rounded
// float64 of the decimal. Rounding that to float32 is then correct unless
// the float64 landed exactly on a midpoint between two float32 values
// (rounding is monotonic and every float32 midpoint is a float64, so the
// decimal and its float64 lie on the same side of every other midpoint):
// that case, values outside the float32 normal range and longer inputs
// go to strconv.
func parseJSONFloat32(tok []byte) (float32, bool) {
	if f, ok := fastFloat32(tok); ok {
		return f, true
	}
	f, err := strconv.ParseFloat(string(tok), 32)
	return float32(f), err == nil
}

// float64Pow10 holds the powers of ten that float64 represents exactly.
var float64Pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// fastFloat32 is parseJSONFloat32's fast path; false leaves tok to strconv.
func fastFloat32(tok []byte) (float32, bool) {
	i := 0
	neg := len(tok) > 0 && tok[0] == '-'
	if neg {
		i++
	}
	var m uint64
	nd, exp := 0, 0 // significant digits read, decimal exponent of m
	for ; i < len(tok) && '0' <= tok[i] && tok[i] <= '9'; i++ {
		if m == 0 && tok[i] == '0' {
			continue
		}
		if nd == 19 {
			return 0, false
		}
		m = m*10 + uint64(tok[i]-'0')
		nd++
	}
	if i < len(tok) && tok[i] == '.' {
		for i++; i < len(tok) && '0' <= tok[i] && tok[i] <= '9'; i++ {
			exp--
			if m == 0 && tok[i] == '0' {
				continue
			}
			if nd == 19 {
				return 0, false
			}
			m = m*10 + uint64(tok[i]-'0')
			nd++
		}
	}
	if i < len(tok) && (tok[i] == 'e' || tok[i] == 'E') {
		i++
		eneg := i < len(tok) && tok[i] == '-'
		if i < len(tok) && (tok[i] == '-' || tok[i] == '+') {
			i++
		}
		e := 0
		for ; i < len(tok) && '0' <= tok[i] && tok[i] <= '9'; i++ {
			if e > 1000 {
				return 0, false
			}
			e = e*10 + int(tok[i]-'0')
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if i != len(tok) {
		return 0, false
	}
	if m == 0 {
		if neg {
			return float32(math.Copysign(0, -1)), true
		}
		return 0, true
	}
	if m >= 1<<53 || exp < -22 || exp > 22 {
		return 0, false
	}
	f := float64(m)
	if exp < 0 {
		f /= float64Pow10[-exp]
	} else {
		f *= float64Pow10[exp]
	}
	// A float32 midpoint has a 25-bit significand: as a float64, its low
	// 29 significand bits are exactly 1 followed by 28 zeros.
	if f < 0x1p-126 || f > math.MaxFloat32 || math.Float64bits(f)&(1<<29-1) == 1<<28 {
		return 0, false
	}
	if neg {
		f = -f
	}
	return float32(f), true
}

// lastEmbedding is the previous embedding array a decoder read: its text
// and values. A record's rendered content repeats its embedding, and the
// same text parses to the same values, so a repeat is copied, not parsed.
type lastEmbedding struct {
	text []byte
	vals []float32
}

// embedding parses an array of float32 into *out as json.Unmarshal does
// (null is nil and [] an empty, non-nil slice), or a base64 string of
// BinaryBase64 as embeddingJSON does.
func (d *recallDecoder) embedding(out *[]float32) bool {
	d.WS()
	start := d.Pos
	if last := &d.lastEmbedding; last.vals != nil && bytes.HasPrefix(d.Data[start:], last.text) {
		*out = slices.Clone(last.vals)
		d.Pos = start + len(last.text)
		return true
	}
	if d.Peek() == '"' {
		// BinaryBase64; a string with escapes is left to encoding/json.
		// (Invalid UTF-8 needs no check: it is not base64.)
		tok, escaped, ok := d.StrToken()
		if !ok || escaped {
			return false
		}
		vals, err := decodeFloat32s("embedding", tok[1:len(tok)-1])
		if err != nil {
			return false
		}
		*out = vals
		d.lastEmbedding = lastEmbedding{text: d.Data[start:d.Pos], vals: vals}
		return true
	}
	vals := []float32{}
	isNull := false
	ok := d.Array(&isNull, func() bool {
		tok, ok := d.Number()
		if !ok {
			return false
		}
		f, ok := parseJSONFloat32(tok)
		vals = append(vals, f)
		return ok
	})
	if !ok {
		return false
	}
	if isNull {
		*out = nil
		return true
	}
	*out = vals
	d.lastEmbedding = lastEmbedding{text: d.Data[start:d.Pos], vals: vals}
	return true
}

// embeddingTexts notes where the embeddings of one recalled memory were
// written, so that the same slice written again (its rendered content
// shares the record's embeddings) is copied from the text, not formatted
// again: the bytes are the same.
type embeddingTexts struct {
	list []embeddingText
	buf  [2]embeddingText
}

// embeddingText is the text of an embedding in the answer being written.
type embeddingText struct {
	first      *float32 // the slice's first element, and its length
	n          int
	start, end int // its bytes in the answer
}

// appendEmbedding appends v as appendBinaryFloat32s does in form f,
// copying the text of the same slice if t holds it (a memory's texts are
// all of one form); a nil t only formats.
func (t *embeddingTexts) appendEmbedding(dst []byte, v []float32, f BinaryForm) ([]byte, error) {
	if t == nil || len(v) == 0 {
		return appendBinaryFloat32s(dst, v, f)
	}
	for _, e := range t.list {
		if e.first == &v[0] && e.n == len(v) {
			return append(dst, dst[e.start:e.end]...), nil
		}
	}
	start := len(dst)
	dst, err := appendBinaryFloat32s(dst, v, f)
	if err == nil {
		if t.list == nil {
			t.list = t.buf[:0]
		}
		t.list = append(t.list, embeddingText{first: &v[0], n: len(v), start: start, end: len(dst)})
	}
	return dst, err
}

// reset forgets the texts noted, for the next memory of an answer.
func (t *embeddingTexts) reset() {
	clear(t.list) // drop the pointers into the last memory's slices
	t.list = t.list[:0]
}
