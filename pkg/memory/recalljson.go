package memory

import (
	"encoding/json"
	"strconv"
	"time"
)

// The answers that carry recalled memories (recall, associate, timeline)
// are the largest and most frequent bodies memsvc writes, and almost all of
// their bytes are record content: text as integer arrays and embeddings.
// encoding/json re-scans the output of every MarshalJSON method once for
// each MarshalJSON that encloses it, so marshalling them as nested structs
// read the content four or five times over. These encoders assemble the
// outer layers by hand around each record's own MarshalJSON, which keeps it
// to one encoding and one scan of the content. Small parts (traces,
// metadata, paths) still go through json.Marshal. json_test.go pins the
// shapes.

// MarshalJSON writes the memory, with an empty rendered block list as [].
func (m RecalledMemory) MarshalJSON() ([]byte, error) {
	return m.appendJSON(make([]byte, 0, 1024))
}

func (m RecalledMemory) appendJSON(b []byte) ([]byte, error) {
	rec, err := m.Record.MarshalJSON()
	if err != nil {
		return nil, err
	}
	b = append(b, `{"record":`...)
	b = append(b, rec...)
	b = append(b, `,"relevance_score":`...)
	if b, err = appendValue(b, m.RelevanceScore); err != nil {
		return nil, err
	}
	b = append(b, `,"activation_path":`...)
	if b, err = appendValue(b, m.ActivationPath); err != nil {
		return nil, err
	}
	b = append(b, `,"rendered_content":`...)
	type plain MemoryContent
	if b, err = appendValue(b, plain(m.RenderedContent.withBlocks())); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// jsonSizeHint estimates the encoded size of ms, so that the answer is
// built in one buffer instead of being copied as it grows: about four bytes
// per content byte and twelve per embedding value, for the record and its
// rendered copy, plus the fixed fields.
func jsonSizeHint(ms []RecalledMemory) int {
	n := 64
	for _, m := range ms {
		n += 2048
		for _, c := range [2]*MemoryContent{&m.Record.Content, &m.RenderedContent} {
			for _, bl := range c.Blocks {
				n += 4*len(bl.Data) + 12*len(bl.Embedding)
			}
		}
	}
	return n
}

// appendMemories writes ms as a JSON array ([] when empty).
func appendMemories(b []byte, ms []RecalledMemory) ([]byte, error) {
	b = append(b, '[')
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = m.appendJSON(b); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

// appendValue appends v as marshalled by encoding/json.
func appendValue(b []byte, v any) ([]byte, error) {
	out, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, out...), nil
}

func appendTime(b []byte, t time.Time) ([]byte, error) {
	return appendValue(b, t)
}

// MarshalJSON writes an empty memory list as [] and leaves query_metadata
// out when it is absent.
func (r RecallQueryResponse) MarshalJSON() ([]byte, error) {
	b, err := appendMemories(append(make([]byte, 0, jsonSizeHint(r.Memories)), `{"memories":`...), r.Memories)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"activation_trace":`...)
	if b, err = appendValue(b, r.ActivationTrace); err != nil {
		return nil, err
	}
	b = append(b, `,"total_candidates":`...)
	b = strconv.AppendUint(b, uint64(r.TotalCandidates), 10)
	if r.QueryMetadata != nil {
		b = append(b, `,"query_metadata":`...)
		if b, err = appendValue(b, r.QueryMetadata); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// MarshalJSON writes an empty memory list as [].
func (r RecallAssociateResponse) MarshalJSON() ([]byte, error) {
	b, err := appendMemories(append(make([]byte, 0, jsonSizeHint(r.Memories)), `{"memories":`...), r.Memories)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"total_candidates":`...)
	b = strconv.AppendUint(b, uint64(r.TotalCandidates), 10)
	return append(b, '}'), nil
}

// MarshalJSON writes an empty memory list as [].
func (t TimelineBucket) MarshalJSON() ([]byte, error) {
	return t.appendJSON(make([]byte, 0, jsonSizeHint(t.Memories)))
}

func (t TimelineBucket) appendJSON(b []byte) ([]byte, error) {
	var err error
	b = append(b, `{"start":`...)
	if b, err = appendTime(b, t.Start); err != nil {
		return nil, err
	}
	b = append(b, `,"end":`...)
	if b, err = appendTime(b, t.End); err != nil {
		return nil, err
	}
	b = append(b, `,"memories":`...)
	if b, err = appendMemories(b, t.Memories); err != nil {
		return nil, err
	}
	b = append(b, `,"count":`...)
	b = strconv.AppendUint(b, uint64(t.Count), 10)
	return append(b, '}'), nil
}

// MarshalJSON writes an empty bucket list as [].
func (r RecallTimelineResponse) MarshalJSON() ([]byte, error) {
	n := 16
	for _, t := range r.Buckets {
		n += 128 + jsonSizeHint(t.Memories)
	}
	b := append(make([]byte, 0, n), `{"buckets":[`...)
	for i, t := range r.Buckets {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = t.appendJSON(b); err != nil {
			return nil, err
		}
	}
	return append(b, "]}"...), nil
}
