package memory

import "time"

// The hand-written encoder of the meta-memory, the same bytes as
// MetaMemory.MarshalJSON through encoding/json (unset lists as [], an
// unset capture status as legacy, an edge's unset evidence as []):
// every record of an answer carries one, and through encoding/json it
// cost a fifth of a recall answer's encoding.

// appendMetaJSON appends m as MetaMemory.MarshalJSON writes it.
func appendMetaJSON(dst []byte, m *MetaMemory) ([]byte, error) {
	var err error
	dst = append(dst, `{"schema_version":`...)
	dst = appendJSONUint(dst, m.SchemaVersion)
	dst = append(dst, `,"capture_status":`...)
	status := m.CaptureStatus
	if status == 0 {
		status = CaptureLegacy
	}
	if dst, err = appendJSONEnum(dst, captureNames, uint8(status)); err != nil {
		return dst, err
	}
	dst = append(dst, `,"intent":`...)
	dst = appendJSONOptString(dst, m.Intent)
	dst = append(dst, `,"rationale":`...)
	dst = appendJSONOptString(dst, m.Rationale)
	dst = append(dst, `,"trigger":`...)
	dst = appendJSONOptString(dst, m.Trigger)
	dst = append(dst, `,"goals":`...)
	dst = appendJSONStrings(dst, m.Goals)
	dst = append(dst, `,"evidence":`...)
	if dst, err = appendEvidenceJSON(dst, m.Evidence); err != nil {
		return dst, err
	}
	dst = append(dst, `,"assumptions":`...)
	dst = appendJSONStrings(dst, m.Assumptions)
	dst = append(dst, `,"alternatives":[`...)
	for i := range m.Alternatives {
		a := &m.Alternatives[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"option":`...)
		dst = appendJSONString(dst, a.Option)
		dst = append(dst, `,"reason":`...)
		dst = appendJSONOptString(dst, a.Reason)
		if a.Chosen {
			dst = append(dst, `,"chosen":true}`...)
		} else {
			dst = append(dst, `,"chosen":false}`...)
		}
	}
	dst = append(dst, `],"decision":`...)
	dst = appendJSONOptString(dst, m.Decision)
	dst = append(dst, `,"confidence":`...)
	if dst, err = appendJSONOptFloat(dst, m.Confidence); err != nil {
		return dst, err
	}
	dst = append(dst, `,"source_record_ids":`...)
	dst = appendJSONIDs(dst, m.SourceRecordIDs)
	dst = append(dst, `,"parent_meta_ids":`...)
	dst = appendJSONIDs(dst, m.ParentMetaIDs)
	dst = append(dst, `,"context_edges":[`...)
	for i := range m.ContextEdges {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = appendMetaEdgeJSON(dst, &m.ContextEdges[i]); err != nil {
			return dst, err
		}
	}
	dst = append(dst, `],"tags":`...)
	dst = appendJSONStrings(dst, m.Tags)
	dst = append(dst, `,"captured_at":`...)
	if dst, err = appendJSONOptTime(dst, m.CapturedAt); err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// appendMetaEdgeJSON appends e as MetaEdge.MarshalJSON writes it.
func appendMetaEdgeJSON(dst []byte, e *MetaEdge) ([]byte, error) {
	var err error
	dst = append(dst, `{"source_id":`...)
	dst = appendJSONOptID(dst, e.SourceID)
	dst = append(dst, `,"target_id":`...)
	dst = appendJSONID(dst, e.TargetID)
	dst = append(dst, `,"relation":`...)
	if dst, err = appendJSONEnum(dst, relationNames, uint8(e.Relation)); err != nil {
		return dst, err
	}
	dst = append(dst, `,"rationale":`...)
	dst = appendJSONOptString(dst, e.Rationale)
	dst = append(dst, `,"evidence":`...)
	if dst, err = appendEvidenceJSON(dst, e.Evidence); err != nil {
		return dst, err
	}
	dst = append(dst, `,"confidence":`...)
	if dst, err = appendJSONOptFloat(dst, e.Confidence); err != nil {
		return dst, err
	}
	dst = append(dst, `,"created_at":`...)
	if dst, err = appendJSONOptTime(dst, e.CreatedAt); err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// appendEvidenceJSON appends refs as an array, [] when nil.
func appendEvidenceJSON(dst []byte, refs []MetaEvidenceRef) ([]byte, error) {
	var err error
	dst = append(dst, '[')
	for i := range refs {
		r := &refs[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"record_id":`...)
		dst = appendJSONOptID(dst, r.RecordID)
		dst = append(dst, `,"raw_record_id":`...)
		dst = appendJSONOptID(dst, r.RawRecordID)
		dst = append(dst, `,"label":`...)
		dst = appendJSONOptString(dst, r.Label)
		dst = append(dst, `,"excerpt":`...)
		dst = appendJSONOptString(dst, r.Excerpt)
		dst = append(dst, `,"uri":`...)
		dst = appendJSONOptString(dst, r.URI)
		dst = append(dst, `,"confidence":`...)
		if dst, err = appendJSONOptFloat(dst, r.Confidence); err != nil {
			return dst, err
		}
		dst = append(dst, '}')
	}
	return append(dst, ']'), nil
}

// appendJSONStrings appends ss as an array of strings, [] when nil.
func appendJSONStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, s)
	}
	return append(dst, ']')
}

// appendJSONIDs appends ids as an array of quoted UUIDs, [] when nil.
func appendJSONIDs(dst []byte, ids []ID) []byte {
	dst = append(dst, '[')
	for i, id := range ids {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONID(dst, id)
	}
	return append(dst, ']')
}

// appendJSONOptString appends *s, null when s is nil.
func appendJSONOptString(dst []byte, s *string) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	return appendJSONString(dst, *s)
}

// appendJSONOptID appends *id, null when id is nil.
func appendJSONOptID(dst []byte, id *ID) []byte {
	if id == nil {
		return append(dst, "null"...)
	}
	return appendJSONID(dst, *id)
}

// appendJSONOptFloat appends *f, null when f is nil.
func appendJSONOptFloat(dst []byte, f *float64) ([]byte, error) {
	if f == nil {
		return append(dst, "null"...), nil
	}
	return appendJSONFloat(dst, *f, 64)
}

// appendJSONOptTime appends *t, null when t is nil.
func appendJSONOptTime(dst []byte, t *time.Time) ([]byte, error) {
	if t == nil {
		return append(dst, "null"...), nil
	}
	return appendJSONTime(dst, *t)
}
