package memory

// RecallBrief is a recall answer in its brief form, the answer of
// POST /v1/recall/query?view=brief: for clients that show a few fields of
// each memory (the MCP proxy's recall tool) and would otherwise receive,
// and read past, whole records with their content twice as integer
// arrays. It has the full answer's layout with fewer fields:
//
//	{"view":"brief","memories":[{"record":{"id":...,"store":...,
//	"created_at":...,"content":{"blocks":[{"modality":"text","text":"..."}]},
//	"fidelity":{"score":...},"emotion":{...}},"relevance_score":...}],
//	"total_candidates":N,"query_metadata":{...}}
//
// A record's content is its text only, MemoryContent.Text: one text block
// whose "text" is that of the first text block holding valid UTF-8, or no
// block when there is none. Everything else of the record, the rendered
// content, activation paths and the activation trace are left out.
type RecallBrief struct {
	Response *RecallQueryResponse
}

// ViewBrief is the "view" of a brief recall answer.
const ViewBrief = "brief"

// MarshalJSON writes the brief answer, with an empty memory list as []
// and query_metadata left out when it is absent.
func (b RecallBrief) MarshalJSON() ([]byte, error) {
	var ms []RecalledMemory
	if b.Response != nil {
		ms = b.Response.Memories
	}
	return b.AppendJSON(make([]byte, 0, briefSizeHint(ms)))
}

// AppendJSON appends what MarshalJSON writes to dst; on an error dst's
// contents are undefined.
func (b RecallBrief) AppendJSON(dst []byte) ([]byte, error) {
	r := b.Response
	if r == nil {
		r = &RecallQueryResponse{}
	}
	w := &jsonWriter{b: dst}
	w.raw(`{"view":"` + ViewBrief + `","memories":[`)
	for i := range r.Memories {
		if i > 0 {
			w.raw(`,`)
		}
		if w.b, w.err = appendBriefMemoryJSON(w.b, &r.Memories[i]); w.err != nil {
			return nil, w.err
		}
	}
	w.raw(`],`)
	w.answerEnd(r.TotalCandidates, r.QueryMetadata)
	return w.done()
}

// briefSizeHint estimates the encoded size of ms in brief.
func briefSizeHint(ms []RecalledMemory) int {
	n := 160
	for i := range ms {
		n += 400
		for _, b := range ms[i].Record.Content.Blocks {
			n += len(b.Data) + len(b.Data)/8
		}
	}
	return n
}

func appendBriefMemoryJSON(dst []byte, m *RecalledMemory) ([]byte, error) {
	r := &m.Record
	var err error
	dst = append(dst, `{"record":{"id":`...)
	dst = appendJSONID(dst, r.ID)
	dst = append(dst, `,"store":`...)
	if dst, err = appendJSONEnum(dst, storeNames, uint8(r.Store)); err != nil {
		return dst, err
	}
	dst = append(dst, `,"created_at":`...)
	if dst, err = appendJSONTime(dst, r.CreatedAt); err != nil {
		return dst, err
	}
	dst = append(dst, `,"content":{"blocks":[`...)
	if text, ok := r.Content.Text(); ok {
		dst = append(dst, `{"modality":"text","text":`...)
		dst = appendJSONString(dst, text)
		dst = append(dst, '}')
	}
	dst = append(dst, `]},"fidelity":{"score":`...)
	if dst, err = appendJSONFloat(dst, r.Fidelity.Score, 64); err != nil {
		return dst, err
	}
	dst = append(dst, `},"emotion":`...)
	if dst, err = appendEmotionJSON(dst, &r.Emotion); err != nil {
		return dst, err
	}
	dst = append(dst, `},"relevance_score":`...)
	if dst, err = appendJSONFloat(dst, m.RelevanceScore, 64); err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}
