package mcpproxy

import (
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
func parseRecall(data []byte) (*recallResult, bool) {
	p := recallParser{Scanner: jsonscan.Scanner{Data: data}}
	out := &recallResult{Memories: []recallItem{}}
	ok := p.Object(func(key []byte) bool {
		switch string(key) {
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
		return nil, false
	}
	return out, true
}

// recallParser is a strict JSON parser over one recall answer. Its
// methods report whether they read what they expect; false abandons the
// parse.
type recallParser struct {
	jsonscan.Scanner
	data []byte // scratch for content data
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
				ok := p.Object(func(key []byte) bool {
					switch string(key) {
					case "modality":
						return p.Text(&modality)
					case "data":
						var ok bool
						data, ok = p.bytes()
						return ok
					case "format", "embedding":
						return p.Skip()
					}
					return false
				})
				if ok && !f.isText && modality == memory.ModalityText && utf8.Valid(data) {
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
