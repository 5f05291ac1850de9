package memory

import (
	"encoding"
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
)

// UnmarshalRecallQueryResponse decodes a recall answer into out exactly
// as json.Unmarshal does. Answers are mostly record content (integer
// arrays, embeddings), and json.Unmarshal scans every byte of them twice
// before the decoders of those values see them; a strict parser of the
// shape the server writes reads them once. Whatever that parser does not
// expect (other key spellings, repeated or unknown fields, values
// of the wrong type, invalid JSON) sends the whole answer through
// json.Unmarshal, so results and errors are json.Unmarshal's.
func UnmarshalRecallQueryResponse(data []byte, out *RecallQueryResponse) error {
	d := recallDecoder{b: data}
	var r RecallQueryResponse
	if d.response(&r) && d.end() {
		*out = r
		return nil
	}
	*out = RecallQueryResponse{}
	return json.Unmarshal(data, out)
}

// recallDecoder is a strict JSON parser of one recall answer. Each method
// reports whether it parsed what it expects; false abandons the parse.
type recallDecoder struct {
	b []byte
	i int
}

func (d *recallDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek returns the next byte after white space, 0 at the end.
func (d *recallDecoder) peek() byte {
	d.ws()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

// lit consumes c after white space.
func (d *recallDecoder) lit(c byte) bool {
	if d.peek() != c {
		return false
	}
	d.i++
	return true
}

func (d *recallDecoder) null() bool {
	d.ws()
	if len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "null" {
		d.i += 4
		return true
	}
	return false
}

func (d *recallDecoder) end() bool {
	d.ws()
	return d.i == len(d.b)
}

// strToken returns the next string token, quotes included, and whether it
// holds escapes. Control characters fail it.
func (d *recallDecoder) strToken() (tok []byte, escaped, ok bool) {
	if d.peek() != '"' {
		return nil, false, false
	}
	start := d.i
	for j := d.i + 1; j < len(d.b); j++ {
		switch c := d.b[j]; {
		case c == '"':
			d.i = j + 1
			return d.b[start:d.i], escaped, true
		case c == '\\':
			escaped = true
			j++
		case c < 0x20:
			return nil, false, false
		}
	}
	return nil, false, false
}

// plainString returns the next string when it has neither escapes nor
// invalid UTF-8 (which json.Unmarshal replaces).
func (d *recallDecoder) plainString() ([]byte, bool) {
	tok, escaped, ok := d.strToken()
	if !ok || escaped || !utf8.Valid(tok) {
		return nil, false
	}
	return tok[1 : len(tok)-1], true
}

// str decodes the next string, escapes included.
func (d *recallDecoder) str(out *string) bool {
	tok, escaped, ok := d.strToken()
	if !ok {
		return false
	}
	if !escaped && utf8.Valid(tok) {
		*out = string(tok[1 : len(tok)-1])
		return true
	}
	return json.Unmarshal(tok, out) == nil
}

// text decodes the next string into v as json.Unmarshal does for a
// TextUnmarshaler; null leaves v as it is.
func (d *recallDecoder) text(v encoding.TextUnmarshaler) bool {
	if d.null() {
		return true
	}
	s, ok := d.plainString()
	return ok && v.UnmarshalText(s) == nil
}

// time decodes the next value with time.Time's UnmarshalJSON, as
// json.Unmarshal does.
func (d *recallDecoder) time(t *time.Time) bool {
	if d.null() {
		return true
	}
	tok, _, ok := d.strToken()
	return ok && t.UnmarshalJSON(tok) == nil
}

// number returns the next number token, checked against JSON's grammar.
func (d *recallDecoder) number() ([]byte, bool) {
	d.ws()
	b, j := d.b, d.i
	if j < len(b) && b[j] == '-' {
		j++
	}
	digits := func() bool {
		k := j
		for j < len(b) && '0' <= b[j] && b[j] <= '9' {
			j++
		}
		return j > k
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case !digits():
		return nil, false
	}
	if j < len(b) && b[j] == '.' {
		j++
		if !digits() {
			return nil, false
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if !digits() {
			return nil, false
		}
	}
	tok := b[d.i:j]
	d.i = j
	return tok, true
}

func (d *recallDecoder) float(out *float64, bits int) bool {
	tok, ok := d.number()
	if !ok {
		return false
	}
	f, err := strconv.ParseFloat(string(tok), bits)
	*out = f
	return err == nil
}

func (d *recallDecoder) uint32(out *uint32) bool {
	tok, ok := d.number()
	if !ok {
		return false
	}
	n, err := strconv.ParseUint(string(tok), 10, 32)
	*out = uint32(n)
	return err == nil
}

// raw returns the next value, whatever it is, for json.Unmarshal to decode
// (which checks it).
func (d *recallDecoder) raw() ([]byte, bool) {
	d.ws()
	start, depth := d.i, 0
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			if _, _, ok := d.strToken(); !ok {
				return nil, false
			}
		case c == '{' || c == '[':
			depth++
			d.i++
		case c == '}' || c == ']':
			if depth == 0 { // the end of the enclosing value
				return d.b[start:d.i], d.i > start
			}
			depth--
			d.i++
		case c == ',' && depth == 0:
			return d.b[start:d.i], d.i > start
		default:
			d.i++
		}
		if depth == 0 && (c == '"' || c == '}' || c == ']') {
			return d.b[start:d.i], true
		}
	}
	return d.b[start:d.i], depth == 0 && d.i > start
}

// delegate decodes the next value into v with json.Unmarshal.
func (d *recallDecoder) delegate(v any) bool {
	raw, ok := d.raw()
	return ok && json.Unmarshal(raw, v) == nil
}

// object parses an object, calling field for each key; field parses the
// value and reports false for a key it does not know.
func (d *recallDecoder) object(field func(key []byte) bool) bool {
	if !d.lit('{') {
		return false
	}
	if d.lit('}') {
		return true
	}
	// json.Unmarshal decodes a repeated key into what the first one
	// filled; rather than imitate that, such answers go to it.
	var seen [16][]byte
	n := 0
	for {
		key, ok := d.plainString()
		if !ok || n == len(seen) {
			return false
		}
		for _, k := range seen[:n] {
			if string(k) == string(key) {
				return false
			}
		}
		seen[n] = key
		n++
		if !d.lit(':') || !field(key) {
			return false
		}
		if d.lit('}') {
			return true
		}
		if !d.lit(',') {
			return false
		}
	}
}

// array parses an array, calling item for each element, or null (and
// sets *isNull).
func (d *recallDecoder) array(isNull *bool, item func() bool) bool {
	if d.null() {
		*isNull = true
		return true
	}
	if !d.lit('[') {
		return false
	}
	if d.lit(']') {
		return true
	}
	for {
		if !item() {
			return false
		}
		if d.lit(']') {
			return true
		}
		if !d.lit(',') {
			return false
		}
	}
}

func (d *recallDecoder) response(r *RecallQueryResponse) bool {
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "memories":
			return sliceOf(d, &r.Memories, d.recalled)
		case "activation_trace":
			return d.delegate(&r.ActivationTrace)
		case "total_candidates":
			return d.uint32(&r.TotalCandidates)
		case "query_metadata":
			return d.delegate(&r.QueryMetadata)
		}
		return false
	})
}

// sliceOf parses an array into *s with item parsing each element: null
// is nil and [] an empty, non-nil slice, as json.Unmarshal makes them.
func sliceOf[T any](d *recallDecoder, s *[]T, item func(*T) bool) bool {
	out := []T{}
	isNull := false
	ok := d.array(&isNull, func() bool {
		var zero T
		out = append(out, zero)
		return item(&out[len(out)-1]) // in place: a local would escape
	})
	if isNull {
		out = nil
	}
	*s = out
	return ok
}

func (d *recallDecoder) recalled(m *RecalledMemory) bool {
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "record":
			return d.record(&m.Record)
		case "relevance_score":
			return d.float(&m.RelevanceScore, 64)
		case "activation_path":
			return sliceOf(d, &m.ActivationPath, func(id *ID) bool { return d.text(id) })
		case "rendered_content":
			return d.content(&m.RenderedContent)
		}
		return false
	})
}

func (d *recallDecoder) record(r *MemoryRecord) bool {
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return d.text(&r.ID)
		case "store":
			return d.text(&r.Store)
		case "created_at":
			return d.time(&r.CreatedAt)
		case "updated_at":
			return d.time(&r.UpdatedAt)
		case "last_accessed_at":
			return d.time(&r.LastAccessedAt)
		case "access_count":
			return d.uint32(&r.AccessCount)
		case "content":
			return d.content(&r.Content)
		case "fidelity":
			return d.fidelity(&r.Fidelity)
		case "emotion":
			return d.emotion(&r.Emotion)
		case "associations":
			return sliceOf(d, &r.Associations, d.association)
		case "metadata":
			return d.delegate(&r.Metadata)
		case "version":
			return d.uint32(&r.Version)
		case "meta":
			return d.delegate(&r.Meta)
		}
		return false
	})
}

func (d *recallDecoder) content(c *MemoryContent) bool {
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "blocks":
			return sliceOf(d, &c.Blocks, d.block)
		case "summary":
			if d.null() {
				c.Summary = nil
				return true
			}
			var s string
			c.Summary = &s
			return d.str(&s)
		}
		return false
	})
}

func (d *recallDecoder) block(b *ContentBlock) bool {
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "modality":
			return d.text(&b.Modality)
		case "format":
			return d.str(&b.Format)
		case "data":
			return d.bytes(&b.Data)
		case "embedding":
			return sliceOf(d, &b.Embedding, func(f *float32) bool {
				var v float64
				ok := d.float(&v, 32)
				*f = float32(v)
				return ok
			})
		}
		return false
	})
}

// bytes parses content data: an integer array with Bytes' own parser,
// anything else (base64, null) through json.Unmarshal.
func (d *recallDecoder) bytes(b *Bytes) bool {
	if d.peek() != '[' {
		return d.delegate(b)
	}
	start := d.i
	d.i++
	if !d.lit(']') {
		for {
			if tok, ok := d.number(); !ok || tok[0] == '-' {
				return false
			}
			if d.lit(']') {
				break
			}
			if !d.lit(',') {
				return false
			}
		}
	}
	return b.UnmarshalJSON(d.b[start:d.i]) == nil
}

func (d *recallDecoder) fidelity(f *FidelityState) bool {
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "score":
			return d.float(&f.Score, 64)
		case "noise_level":
			return d.float(&f.NoiseLevel, 64)
		case "decay_rate":
			return d.float(&f.DecayRate, 64)
		case "emotional_anchor":
			return d.float(&f.EmotionalAnchor, 64)
		case "reinforcement_count":
			return d.uint32(&f.ReinforcementCount)
		case "stability":
			return d.float(&f.Stability, 64)
		case "last_decay_tick":
			return d.time(&f.LastDecayTick)
		}
		return false
	})
}

func (d *recallDecoder) emotion(e *EmotionVector) bool {
	return d.object(func(key []byte) bool {
		var p *float64
		switch string(key) {
		case "joy":
			p = &e.Joy
		case "trust":
			p = &e.Trust
		case "fear":
			p = &e.Fear
		case "surprise":
			p = &e.Surprise
		case "sadness":
			p = &e.Sadness
		case "disgust":
			p = &e.Disgust
		case "anger":
			p = &e.Anger
		case "anticipation":
			p = &e.Anticipation
		case "intensity":
			p = &e.Intensity
		case "valence":
			p = &e.Valence
		default:
			return false
		}
		return d.float(p, 64)
	})
}

func (d *recallDecoder) association(a *Association) bool {
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "target_id":
			return d.text(&a.TargetID)
		case "association_type":
			return d.text(&a.AssociationType)
		case "weight":
			return d.float(&a.Weight, 64)
		case "created_at":
			return d.time(&a.CreatedAt)
		case "last_co_activation":
			return d.time(&a.LastCoActivation)
		case "origin":
			return d.text(&a.Origin)
		}
		return false
	})
}
