package memory

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"

	"memsvc.dev/memsvc/internal/jsonscan"
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
	d := recallDecoder{Scanner: jsonscan.Scanner{Data: data}}
	var r RecallQueryResponse
	if d.response(&r) && d.End() {
		*out = r
		return nil
	}
	*out = RecallQueryResponse{}
	return json.Unmarshal(data, out)
}

// recallDecoder is a strict JSON parser of one recall answer. Each method
// reports whether it parsed what it expects; false abandons the parse.
type recallDecoder struct {
	jsonscan.Scanner
	// lastText and last are the text and the value of the content parsed
	// last: a memory's rendered content is most often its record's
	// content, and the same text decodes to the same value, so it is
	// copied rather than parsed again.
	lastText []byte
	last     *MemoryContent
	// lastEmbedding is the embedding array parsed last, for embeddings
	// the rendered content shares when its text differs.
	lastEmbedding lastEmbedding // float32json.go
}

// str decodes the next string, escapes included.
func (d *recallDecoder) str(out *string) bool {
	tok, escaped, ok := d.StrToken()
	if !ok {
		return false
	}
	if !escaped && utf8.Valid(tok) {
		*out = string(tok[1 : len(tok)-1])
		return true
	}
	return json.Unmarshal(tok, out) == nil
}

// delegate decodes the next value into v with json.Unmarshal.
func (d *recallDecoder) delegate(v any) bool {
	raw, ok := d.Raw()
	return ok && json.Unmarshal(raw, v) == nil
}

func (d *recallDecoder) response(r *RecallQueryResponse) bool {
	return d.Object(func(key []byte) bool {
		switch string(key) {
		case "memories":
			return sliceOf(d, &r.Memories, d.recalled)
		case "activation_trace":
			return d.delegate(&r.ActivationTrace)
		case "total_candidates":
			return d.Uint32(&r.TotalCandidates)
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
	ok := d.Array(&isNull, func() bool {
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
	return d.Object(func(key []byte) bool {
		switch string(key) {
		case "record":
			return d.record(&m.Record)
		case "relevance_score":
			return d.Float(&m.RelevanceScore, 64)
		case "activation_path":
			return sliceOf(d, &m.ActivationPath, func(id *ID) bool { return d.Text(id) })
		case "rendered_content":
			return d.content(&m.RenderedContent)
		}
		return false
	})
}

func (d *recallDecoder) record(r *MemoryRecord) bool {
	return d.Object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return d.Text(&r.ID)
		case "store":
			return d.Text(&r.Store)
		case "created_at":
			return d.Time(&r.CreatedAt)
		case "updated_at":
			return d.Time(&r.UpdatedAt)
		case "last_accessed_at":
			return d.Time(&r.LastAccessedAt)
		case "access_count":
			return d.Uint32(&r.AccessCount)
		case "content":
			return d.content(&r.Content)
		case "fidelity":
			return d.fidelity(&r.Fidelity)
		case "emotion":
			return ScanEmotionJSON(&d.Scanner, &r.Emotion)
		case "associations":
			return sliceOf(d, &r.Associations, d.association)
		case "metadata":
			// What json.Unmarshal does for it, without its own scan of
			// the value first: UnmarshalJSON's compaction checks it.
			raw, ok := d.Raw()
			return ok && r.Metadata.UnmarshalJSON(raw) == nil
		case "version":
			return d.Uint32(&r.Version)
		case "meta":
			return d.meta(&r.Meta)
		}
		return false
	})
}

// content parses a content value, or copies the one parsed last when the
// text is the same.
func (d *recallDecoder) content(c *MemoryContent) bool {
	d.WS()
	start := d.Pos
	if n := len(d.lastText); n > 0 && bytes.HasPrefix(d.Data[start:], d.lastText) {
		// An object ends at its closing brace: the same bytes up to it
		// are the same value.
		d.Pos += n
		*c = cloneContent(d.last)
		return true
	}
	if !d.parseContent(c) {
		return false
	}
	d.lastText, d.last = d.Data[start:d.Pos], c
	return true
}

// cloneContent copies c deeply, nil and empty lists kept apart as
// json.Unmarshal makes them.
func cloneContent(c *MemoryContent) MemoryContent {
	out := MemoryContent{Blocks: slices.Clone(c.Blocks)}
	for i := range out.Blocks {
		b := &out.Blocks[i]
		b.Data = bytes.Clone(b.Data)
		b.Embedding = slices.Clone(b.Embedding)
	}
	if c.Summary != nil {
		s := *c.Summary
		out.Summary = &s
	}
	return out
}

func (d *recallDecoder) parseContent(c *MemoryContent) bool {
	return d.Object(func(key []byte) bool {
		switch string(key) {
		case "blocks":
			return sliceOf(d, &c.Blocks, d.block)
		case "summary":
			return d.optStr(&c.Summary)
		}
		return false
	})
}

func (d *recallDecoder) block(b *ContentBlock) bool {
	return d.Object(func(key []byte) bool {
		switch string(key) {
		case "modality":
			return d.Text(&b.Modality)
		case "format":
			return d.str(&b.Format)
		case "data":
			return d.bytes(&b.Data)
		case "embedding":
			return d.embedding(&b.Embedding)
		}
		return false
	})
}

// bytes parses content data: an integer array in one pass, into a slice
// sized as Bytes' own parser sizes it, a base64 string without escapes
// where it lies, anything else (null, escapes) through json.Unmarshal.
func (d *recallDecoder) bytes(b *Bytes) bool {
	switch d.Peek() {
	case '[':
	case '"':
		// No UTF-8 check: a byte that is not ASCII is not base64 either.
		save := d.Pos
		if tok, escaped, ok := d.StrToken(); ok && !escaped {
			v, ok := decodeBase64(tok[1 : len(tok)-1])
			*b = v
			return ok
		}
		d.Pos = save
		return d.delegate(b)
	default:
		return d.delegate(b)
	}
	n := bytes.IndexByte(d.Data[d.Pos:], ']')
	if n < 0 {
		return false
	}
	out, ok := d.ByteArray(make([]byte, 0, (n+1)/3))
	*b = out
	return ok
}

func (d *recallDecoder) fidelity(f *FidelityState) bool {
	return d.Object(func(key []byte) bool {
		switch string(key) {
		case "score":
			return d.Float(&f.Score, 64)
		case "noise_level":
			return d.Float(&f.NoiseLevel, 64)
		case "decay_rate":
			return d.Float(&f.DecayRate, 64)
		case "emotional_anchor":
			return d.Float(&f.EmotionalAnchor, 64)
		case "reinforcement_count":
			return d.Uint32(&f.ReinforcementCount)
		case "stability":
			return d.Float(&f.Stability, 64)
		case "last_decay_tick":
			return d.Time(&f.LastDecayTick)
		}
		return false
	})
}

// ScanEmotionJSON reads an emotion vector as json.Unmarshal reads it,
// for the strict decoders of recall answers (this package's and
// pkg/mcpproxy's); false, on a key it does not know or a value that is
// not a number, abandons the parse.
func ScanEmotionJSON(s *jsonscan.Scanner, e *EmotionVector) bool {
	return s.Object(func(key []byte) bool {
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
		return s.Float(p, 64)
	})
}

func (d *recallDecoder) association(a *Association) bool {
	return d.Object(func(key []byte) bool {
		switch string(key) {
		case "target_id":
			return d.Text(&a.TargetID)
		case "association_type":
			return d.Text(&a.AssociationType)
		case "weight":
			return d.Float(&a.Weight, 64)
		case "created_at":
			return d.Time(&a.CreatedAt)
		case "last_co_activation":
			return d.Time(&a.LastCoActivation)
		case "origin":
			return d.Text(&a.Origin)
		}
		return false
	})
}
