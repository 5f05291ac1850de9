package mcpproxy

import (
	"strconv"
	"unicode/utf8"

	"memsvc.dev/memsvc/pkg/memory"
)

// parseRecall reads the recall tool's result straight from a recall
// answer as the server writes it, and reports whether it could. The tool
// shows a few fields of each record; decoding whole records (both content
// copies as integer arrays, meta-memory, associations, three timestamps)
// only to drop most of them cost more than the rest of the proxy's work on
// a search. The fields the tool shows are read as the full decoder reads
// them; the others are checked to be well-formed JSON and skipped, not
// decoded. Whatever the parser does not expect (an unknown or repeated
// key, null where the server writes a value, content data that is not an
// integer array, a number out of range) makes it give up, and the caller
// decodes the answer in full: such answers get exactly the result, or the
// error, they always got.
func parseRecall(data []byte) (*recallResult, bool) {
	p := recallParser{b: data}
	out := &recallResult{Memories: []recallItem{}}
	ok := p.object(func(key []byte) bool {
		switch string(key) {
		case "memories":
			return p.array(func() bool {
				it, ok := p.recalled()
				out.Memories = append(out.Memories, it)
				return ok
			})
		case "total_candidates":
			return p.uint32(&out.TotalCandidates)
		case "query_metadata":
			if p.null() {
				return true
			}
			out.QueryMetadata = &memory.QueryMetadata{}
			return p.queryMetadata(out.QueryMetadata)
		case "activation_trace":
			return p.skip()
		}
		return false
	})
	if !ok || !p.end() {
		return nil, false
	}
	return out, true
}

// recallParser is a strict JSON parser over one recall answer. Its
// methods report whether they read what they expect; false abandons the
// parse.
type recallParser struct {
	b    []byte
	i    int
	data []byte // scratch for content data
}

func (p *recallParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// lit consumes c after white space.
func (p *recallParser) lit(c byte) bool {
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *recallParser) null() bool {
	p.ws()
	if len(p.b)-p.i >= 4 && string(p.b[p.i:p.i+4]) == "null" {
		p.i += 4
		return true
	}
	return false
}

func (p *recallParser) end() bool {
	p.ws()
	return p.i == len(p.b)
}

// strToken returns the next string token, quotes included, and whether it
// holds escapes; it checks the escapes and refuses control characters.
func (p *recallParser) strToken() (tok []byte, escaped, ok bool) {
	p.ws()
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return nil, false, false
	}
	for j := p.i + 1; j < len(p.b); j++ {
		switch c := p.b[j]; {
		case c == '"':
			tok = p.b[p.i : j+1]
			p.i = j + 1
			return tok, escaped, true
		case c == '\\':
			escaped = true
			j++
			if j >= len(p.b) {
				return nil, false, false
			}
			switch p.b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(p.b) {
					return nil, false, false
				}
				for _, h := range p.b[j+1 : j+5] {
					if !isHex(h) {
						return nil, false, false
					}
				}
				j += 4
			default:
				return nil, false, false
			}
		case c < 0x20:
			return nil, false, false
		}
	}
	return nil, false, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// plainString returns the next string when it has neither escapes nor
// invalid UTF-8, which the decoders would treat specially.
func (p *recallParser) plainString() ([]byte, bool) {
	tok, escaped, ok := p.strToken()
	if !ok || escaped || !utf8.Valid(tok) {
		return nil, false
	}
	return tok[1 : len(tok)-1], true
}

// number returns the next number token, checked against JSON's grammar.
func (p *recallParser) number() ([]byte, bool) {
	p.ws()
	b, j := p.b, p.i
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
	tok := b[p.i:j]
	p.i = j
	return tok, true
}

func (p *recallParser) float(out *float64) bool {
	tok, ok := p.number()
	if !ok {
		return false
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	*out = f
	return err == nil
}

func (p *recallParser) uint32(out *uint32) bool {
	tok, ok := p.number()
	if !ok {
		return false
	}
	n, err := strconv.ParseUint(string(tok), 10, 32)
	*out = uint32(n)
	return err == nil
}

// object parses an object, calling field with each key; field parses the
// value and reports false for a key it does not know. A repeated key
// abandons the parse.
func (p *recallParser) object(field func(key []byte) bool) bool {
	if !p.lit('{') {
		return false
	}
	if p.lit('}') {
		return true
	}
	var seen [16][]byte
	n := 0
	for {
		key, ok := p.plainString()
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
		if !p.lit(':') || !field(key) {
			return false
		}
		if p.lit('}') {
			return true
		}
		if !p.lit(',') {
			return false
		}
	}
}

// array parses an array or null, calling item for each element.
func (p *recallParser) array(item func() bool) bool {
	if p.null() {
		return true
	}
	if !p.lit('[') {
		return false
	}
	if p.lit(']') {
		return true
	}
	for {
		if !item() {
			return false
		}
		if p.lit(']') {
			return true
		}
		if !p.lit(',') {
			return false
		}
	}
}

// maxSkipDepth bounds the nesting of a skipped value.
const maxSkipDepth = 64

// skip passes over the next value, checking that it is well-formed JSON.
func (p *recallParser) skip() bool { return p.skipDepth(0) }

func (p *recallParser) skipDepth(depth int) bool {
	p.ws()
	if p.i >= len(p.b) || depth > maxSkipDepth {
		return false
	}
	switch c := p.b[p.i]; {
	case c == '[' && p.skipUints():
		return true
	case c == '{' || c == '[':
		p.i++
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		if p.lit(closing) {
			return true
		}
		for {
			if c == '{' {
				if _, _, ok := p.strToken(); !ok || !p.lit(':') {
					return false
				}
			}
			if !p.skipDepth(depth + 1) {
				return false
			}
			if p.lit(closing) {
				return true
			}
			if !p.lit(',') {
				return false
			}
		}
	case c == '"':
		_, _, ok := p.strToken()
		return ok
	case c == '-' || '0' <= c && c <= '9':
		_, ok := p.number()
		return ok
	default:
		for _, w := range []string{"null", "true", "false"} {
			if len(p.b)-p.i >= len(w) && string(p.b[p.i:p.i+len(w)]) == w {
				p.i += len(w)
				return true
			}
		}
		return false
	}
}

// skipUints passes over an array of unsigned integers without white
// space, such as content data, and reports whether it did; it moves
// nothing when the array is anything else.
func (p *recallParser) skipUints() bool {
	b, j := p.b, p.i+1
	if j < len(b) && b[j] == ']' {
		p.i = j + 1
		return true
	}
	for j < len(b) {
		k := j
		for j < len(b) && '0' <= b[j] && b[j] <= '9' {
			j++
		}
		if j == k || j-k > 1 && b[k] == '0' || j == len(b) {
			return false
		}
		switch b[j] {
		case ',':
			j++
		case ']':
			p.i = j + 1
			return true
		default:
			return false
		}
	}
	return false
}

// text reads the next string into v with its UnmarshalText; null leaves
// v as it is.
func (p *recallParser) text(v interface{ UnmarshalText([]byte) error }) bool {
	if p.null() {
		return true
	}
	s, ok := p.plainString()
	return ok && v.UnmarshalText(s) == nil
}

func (p *recallParser) recalled() (recallItem, bool) {
	var f recallFields
	ok := p.object(func(key []byte) bool {
		switch string(key) {
		case "record":
			return p.record(&f)
		case "relevance_score":
			return p.float(&f.relevance)
		case "activation_path", "rendered_content":
			return p.skip()
		}
		return false
	})
	return f.item(), ok
}

func (p *recallParser) record(f *recallFields) bool {
	return p.object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return p.text(&f.id)
		case "store":
			return p.text(&f.store)
		case "created_at":
			if p.null() {
				return true
			}
			tok, _, ok := p.strToken()
			return ok && f.created.UnmarshalJSON(tok) == nil
		case "content":
			return p.content(f)
		case "fidelity":
			return p.object(func(key []byte) bool {
				switch string(key) {
				case "score":
					return p.float(&f.fidelity)
				case "noise_level", "decay_rate", "emotional_anchor", "reinforcement_count", "stability", "last_decay_tick":
					return p.skip()
				}
				return false
			})
		case "emotion":
			return p.emotion(&f.emotion)
		case "updated_at", "last_accessed_at", "access_count", "associations", "metadata", "version", "meta":
			return p.skip()
		}
		return false
	})
}

// content finds the text the tool shows: that of the first text block
// whose data is valid UTF-8 (memory.MemoryContent.Text).
func (p *recallParser) content(f *recallFields) bool {
	return p.object(func(key []byte) bool {
		switch string(key) {
		case "blocks":
			return p.array(func() bool {
				var modality memory.Modality
				var data []byte
				ok := p.object(func(key []byte) bool {
					switch string(key) {
					case "modality":
						return p.text(&modality)
					case "data":
						var ok bool
						data, ok = p.bytes()
						return ok
					case "format", "embedding":
						return p.skip()
					}
					return false
				})
				if ok && !f.isText && modality == memory.ModalityText && utf8.Valid(data) {
					f.text, f.isText = string(data), true
				}
				return ok
			})
		case "summary":
			return p.skip()
		}
		return false
	})
}

// bytes reads content data written as an integer array, as
// memory.Bytes reads it, into scratch space valid until the next call.
// Other forms (base64 strings, null) are left to the full decoder.
func (p *recallParser) bytes() ([]byte, bool) {
	if !p.lit('[') {
		return nil, false
	}
	out := p.data[:0]
	if p.lit(']') {
		return out, true
	}
	b := p.b
	for {
		p.ws()
		j, v := p.i, 0
		for j < len(b) && '0' <= b[j] && b[j] <= '9' {
			v = v*10 + int(b[j]-'0')
			if v > 255 {
				return nil, false
			}
			j++
		}
		if j == p.i || j-p.i > 1 && b[p.i] == '0' {
			return nil, false
		}
		out = append(out, byte(v))
		p.i = j
		if j < len(b) && b[j] == ',' { // the common case, without white space
			p.i++
			continue
		}
		if p.lit(']') {
			p.data = out
			return out, true
		}
		if !p.lit(',') {
			return nil, false
		}
	}
}

func (p *recallParser) emotion(e *memory.EmotionVector) bool {
	return p.object(func(key []byte) bool {
		var v *float64
		switch string(key) {
		case "joy":
			v = &e.Joy
		case "trust":
			v = &e.Trust
		case "fear":
			v = &e.Fear
		case "surprise":
			v = &e.Surprise
		case "sadness":
			v = &e.Sadness
		case "disgust":
			v = &e.Disgust
		case "anger":
			v = &e.Anger
		case "anticipation":
			v = &e.Anticipation
		case "intensity":
			v = &e.Intensity
		case "valence":
			v = &e.Valence
		default:
			return false
		}
		return p.float(v)
	})
}

func (p *recallParser) queryMetadata(m *memory.QueryMetadata) bool {
	return p.object(func(key []byte) bool {
		switch string(key) {
		case "total_records_scanned":
			return p.uint32(&m.TotalRecordsScanned)
		case "fidelity_filtered":
			return p.uint32(&m.FidelityFiltered)
		case "stores_searched":
			if p.null() {
				return true
			}
			m.StoresSearched = []memory.StoreType{}
			return p.array(func() bool {
				var s memory.StoreType
				ok := p.text(&s)
				m.StoresSearched = append(m.StoresSearched, s)
				return ok
			})
		}
		return false
	})
}
