package memory

import (
	"encoding/json"
	"strconv"
)

// The answers that carry recalled memories (recall, associate, timeline)
// are the largest and most frequent bodies memsvc writes, and almost all of
// their bytes are record content: text as integer arrays and embeddings.
// These encoders write them in one buffer with the hand-written record
// and content encoders of recordjson.go; small parts (traces, metadata)
// still go through json.Marshal. json_test.go pins the shapes.

// jsonWriter assembles a JSON text. The first error of a value sticks and
// ends the writing.
type jsonWriter struct {
	b     []byte
	err   error
	form  BinaryForm     // of content data and embeddings
	texts embeddingTexts // of the memory being written
}

// raw appends s, which is JSON syntax or a field name with its quotes.
func (w *jsonWriter) raw(s string) { w.b = append(w.b, s...) }

// value appends v as encoding/json marshals it.
func (w *jsonWriter) value(v any) {
	if w.err != nil {
		return
	}
	out, err := json.Marshal(v)
	if err != nil {
		w.err = err
		return
	}
	w.b = append(w.b, out...)
}

// uint appends n.
func (w *jsonWriter) uint(n uint32) { w.b = strconv.AppendUint(w.b, uint64(n), 10) }

// memory appends m, with an empty rendered block list as [].
func (w *jsonWriter) memory(m *RecalledMemory) {
	if w.err != nil {
		return
	}
	w.raw(`{"record":`)
	w.texts.reset() // the rendered content repeats the record's embeddings
	var at [2]int
	if w.b, at, w.err = appendRecordContentAt(w.b, &m.Record, &w.texts, w.form); w.err != nil {
		return
	}
	w.raw(`,"relevance_score":`)
	if w.b, w.err = appendJSONFloat(w.b, m.RelevanceScore, 64); w.err != nil {
		return
	}
	w.raw(`,"activation_path":`)
	if m.ActivationPath == nil {
		w.raw(`null`)
	} else {
		w.b = appendJSONIDs(w.b, m.ActivationPath)
	}
	w.raw(`,"rendered_content":`)
	if sameContent(&m.RenderedContent, &m.Record.Content) {
		// Rendered as stored: the record's content once more.
		w.b = append(w.b, w.b[at[0]:at[1]]...)
	} else {
		w.b, w.err = appendContentJSON(w.b, &m.RenderedContent, &w.texts, w.form)
	}
	w.raw(`}`)
}

// memories appends ms as an array ([] when empty).
func (w *jsonWriter) memories(ms []RecalledMemory) {
	w.raw(`[`)
	for i := range ms {
		if i > 0 {
			w.raw(`,`)
		}
		w.memory(&ms[i])
	}
	w.raw(`]`)
}

// bucket appends t, with an empty memory list as [].
func (w *jsonWriter) bucket(t *TimelineBucket) {
	w.raw(`{"start":`)
	w.value(t.Start)
	w.raw(`,"end":`)
	w.value(t.End)
	w.raw(`,"memories":`)
	w.memories(t.Memories)
	w.raw(`,"count":`)
	w.uint(t.Count)
	w.raw(`}`)
}

// answerEnd appends a recall answer's last fields and its closing brace,
// with query_metadata left out when qm is nil.
func (w *jsonWriter) answerEnd(total uint32, qm *QueryMetadata) {
	w.raw(`"total_candidates":`)
	w.uint(total)
	if qm != nil {
		w.raw(`,"query_metadata":`)
		w.value(qm)
	}
	w.raw(`}`)
}

// done returns the text, or the first error.
func (w *jsonWriter) done() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	return w.b, nil
}

// newJSONWriter returns a writer with room for about size bytes, so that
// an answer is built in one buffer instead of being copied as it grows.
func newJSONWriter(size int) *jsonWriter { return &jsonWriter{b: make([]byte, 0, size)} }

// jsonSizeHint estimates the encoded size of ms, records and rendered
// copies, plus the fixed fields.
func jsonSizeHint(ms []RecalledMemory) int {
	n := 64
	for i := range ms {
		n += 128 + 40*len(ms[i].ActivationPath) + recordSizeHint(&ms[i].Record) + contentSizeHint(&ms[i].RenderedContent)
	}
	return n
}

// MarshalJSON writes the memory, with an empty rendered block list as [].
func (m RecalledMemory) MarshalJSON() ([]byte, error) {
	w := newJSONWriter(jsonSizeHint([]RecalledMemory{m}))
	w.memory(&m)
	return w.done()
}

// MarshalJSON writes an empty memory list as [] and leaves query_metadata
// out when it is absent.
func (r RecallQueryResponse) MarshalJSON() ([]byte, error) {
	return r.AppendJSONForm(make([]byte, 0, jsonSizeHint(r.Memories)), BinaryArrays)
}

// AppendJSONForm appends what MarshalJSON writes to dst, with the
// memories' content data and embeddings in form f (MarshalJSON's is
// BinaryArrays), so that a server can reuse its answer buffers; on an
// error dst's contents are undefined.
func (r *RecallQueryResponse) AppendJSONForm(dst []byte, f BinaryForm) ([]byte, error) {
	w := &jsonWriter{b: dst, form: f}
	w.raw(`{"memories":`)
	w.memories(r.Memories)
	w.raw(`,"activation_trace":`)
	w.value(r.ActivationTrace)
	w.raw(`,`)
	w.answerEnd(r.TotalCandidates, r.QueryMetadata)
	return w.done()
}

// MarshalJSON writes an empty memory list as [].
func (r RecallAssociateResponse) MarshalJSON() ([]byte, error) {
	return r.AppendJSONForm(make([]byte, 0, jsonSizeHint(r.Memories)), BinaryArrays)
}

// AppendJSONForm appends what MarshalJSON writes to dst, with the
// memories' content data and embeddings in form f; on an error dst's
// contents are undefined.
func (r *RecallAssociateResponse) AppendJSONForm(dst []byte, f BinaryForm) ([]byte, error) {
	w := &jsonWriter{b: dst, form: f}
	w.raw(`{"memories":`)
	w.memories(r.Memories)
	w.raw(`,"total_candidates":`)
	w.uint(r.TotalCandidates)
	w.raw(`}`)
	return w.done()
}

// MarshalJSON writes an empty memory list as [].
func (t TimelineBucket) MarshalJSON() ([]byte, error) {
	w := newJSONWriter(128 + jsonSizeHint(t.Memories))
	w.bucket(&t)
	return w.done()
}

// MarshalJSON writes an empty bucket list as [].
func (r RecallTimelineResponse) MarshalJSON() ([]byte, error) {
	n := 16
	for _, t := range r.Buckets {
		n += 128 + jsonSizeHint(t.Memories)
	}
	return r.AppendJSONForm(make([]byte, 0, n), BinaryArrays)
}

// AppendJSONForm appends what MarshalJSON writes to dst, with the
// memories' content data and embeddings in form f; on an error dst's
// contents are undefined.
func (r *RecallTimelineResponse) AppendJSONForm(dst []byte, f BinaryForm) ([]byte, error) {
	w := &jsonWriter{b: dst, form: f}
	w.raw(`{"buckets":[`)
	for i := range r.Buckets {
		if i > 0 {
			w.raw(`,`)
		}
		w.bucket(&r.Buckets[i])
	}
	w.raw(`]`)
	if r.Truncated {
		w.raw(`,"truncated":true`)
	}
	w.raw(`}`)
	return w.done()
}
