package mcpproxy

import (
	"encoding/json"
	"unicode/utf8"

	"memsvc.dev/memsvc/pkg/memory"

	"memsvc.dev/memsvc/internal/jsonscan"
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
//
// The brief answer (memory.RecallBrief, which begins with "view":"brief")
// is read by the same parser, the blocks' text given as strings; brief
// reports that data declared itself one. The full decoder cannot stand in
// for the parser on a brief answer (it would read no content), so such an
// answer the parser gives up on is an error (recall).
func parseRecall(data []byte) (_ *recallResult, ok, brief bool) {
	p := recallParser{Scanner: jsonscan.Scanner{Data: data}}
	out := &recallResult{Memories: []recallItem{}}
	first := true
	ok = p.Object(func(key []byte) bool {
		isFirst := first
		first = false
		switch string(key) {
		case "view":
			view, ok := p.PlainString()
			p.brief = ok && isFirst && string(view) == memory.ViewBrief
			return p.brief
		case "memories":
			return p.Array(nil, func() bool {
				it, ok := p.recalled()
				out.Memories = append(out.Memories, it)
				return ok
			})
		case "total_candidates":
			return p.Uint32(&out.TotalCandidates)
		case "query_metadata":
			if p.Null() {
				return true
			}
			out.QueryMetadata = &memory.QueryMetadata{}
			return p.queryMetadata(out.QueryMetadata)
		case "activation_trace":
			return p.Skip()
		}
		return false
	})
	if !ok || !p.End() {
		return nil, false, p.brief
	}
	return out, true, p.brief
}

// recallParser is a strict JSON parser over one recall answer. Its
// methods report whether they read what they expect; false abandons the
// parse.
type recallParser struct {
	jsonscan.Scanner
	data  []byte // scratch for content data
	brief bool   // the answer is a brief one
}

func (p *recallParser) recalled() (recallItem, bool) {
	var f recallFields
	ok := p.Object(func(key []byte) bool {
		switch string(key) {
		case "record":
			return p.record(&f)
		case "relevance_score":
			return p.Float(&f.relevance, 64)
		case "activation_path", "rendered_content":
			return p.Skip()
		}
		return false
	})
	return f.item(), ok
}

func (p *recallParser) record(f *recallFields) bool {
	return p.Object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return p.Text(&f.id)
		case "store":
			return p.Text(&f.store)
		case "created_at":
			return p.Time(&f.created)
		case "content":
			return p.content(f)
		case "fidelity":
			return p.Object(func(key []byte) bool {
				switch string(key) {
				case "score":
					return p.Float(&f.fidelity, 64)
				case "noise_level", "decay_rate", "emotional_anchor", "reinforcement_count", "stability", "last_decay_tick":
					return p.Skip()
				}
				return false
			})
		case "emotion":
			return memory.ScanEmotionJSON(&p.Scanner, &f.emotion)
		case "updated_at", "last_accessed_at", "access_count", "associations", "metadata", "version", "meta":
			return p.Skip()
		}
		return false
	})
}

// content finds the text the tool shows: that of the first text block
// whose data is valid UTF-8 (memory.MemoryContent.Text).
func (p *recallParser) content(f *recallFields) bool {
	return p.Object(func(key []byte) bool {
		switch string(key) {
		case "blocks":
			return p.Array(nil, func() bool {
				var modality memory.Modality
				var data []byte
				var text string
				hasText := false
				ok := p.Object(func(key []byte) bool {
					switch string(key) {
					case "modality":
						return p.Text(&modality)
					case "data":
						var ok bool
						data, ok = p.bytes()
						return ok && !p.brief
					case "text":
						hasText = true
						return p.brief && p.str(&text)
					case "format", "embedding":
						return p.Skip() && !p.brief
					}
					return false
				})
				if !ok || f.isText || modality != memory.ModalityText {
					return ok
				}
				switch {
				case p.brief && hasText:
					f.text, f.isText = text, true
				case !p.brief && utf8.Valid(data):
					f.text, f.isText = string(data), true
				}
				return ok
			})
		case "summary":
			return p.Skip()
		}
		return false
	})
}

// str reads the next string, escapes included, as encoding/json does;
// invalid UTF-8 (which encoding/json would replace) makes it give up.
func (p *recallParser) str(out *string) bool {
	tok, escaped, ok := p.StrToken()
	if !ok || !utf8.Valid(tok) {
		return false
	}
	if !escaped {
		*out = string(tok[1 : len(tok)-1])
		return true
	}
	return json.Unmarshal(tok, out) == nil
}

// bytes reads content data written as an integer array, as
// memory.Bytes reads it, into scratch space valid until the next call.
// Other forms (base64 strings, null) are left to the full decoder.
func (p *recallParser) bytes() ([]byte, bool) {
	out, ok := p.ByteArray(p.data[:0])
	if ok {
		p.data = out
	}
	return out, ok
}

func (p *recallParser) queryMetadata(m *memory.QueryMetadata) bool {
	return p.Object(func(key []byte) bool {
		switch string(key) {
		case "total_records_scanned":
			return p.Uint32(&m.TotalRecordsScanned)
		case "fidelity_filtered":
			return p.Uint32(&m.FidelityFiltered)
		case "stores_searched":
			if p.Null() {
				return true
			}
			m.StoresSearched = []memory.StoreType{}
			return p.Array(nil, func() bool {
				var s memory.StoreType
				ok := p.Text(&s)
				m.StoresSearched = append(m.StoresSearched, s)
				return ok
			})
		}
		return false
	})
}
