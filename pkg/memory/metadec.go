package memory

import "time"

// The strict parser of a record's meta-memory inside a recall answer
// (recalldec.go): through json.Unmarshal and MetaMemory's UnmarshalJSON
// every meta-memory was scanned three times and decoded by reflection, a
// third of the client's decoding of an answer. Like the rest of that
// parser it reads exactly what json.Unmarshal would and gives up, for the
// whole answer to go to json.Unmarshal, on whatever it does not expect.

// meta parses a meta-memory, the fields it leaves out at their
// UnmarshalJSON defaults (schema version 1, status legacy).
func (d *recallDecoder) meta(m *MetaMemory) bool {
	*m = MetaMemory{SchemaVersion: 1, CaptureStatus: CaptureLegacy}
	return d.Object(func(key []byte) bool {
		switch string(key) {
		case "schema_version":
			return d.Uint32(&m.SchemaVersion)
		case "capture_status":
			return d.Text(&m.CaptureStatus)
		case "intent":
			return d.optStr(&m.Intent)
		case "rationale":
			return d.optStr(&m.Rationale)
		case "trigger":
			return d.optStr(&m.Trigger)
		case "goals":
			return sliceOf(d, &m.Goals, d.str)
		case "evidence":
			return sliceOf(d, &m.Evidence, d.evidence)
		case "assumptions":
			return sliceOf(d, &m.Assumptions, d.str)
		case "alternatives":
			return sliceOf(d, &m.Alternatives, d.alternative)
		case "decision":
			return d.optStr(&m.Decision)
		case "confidence":
			return d.optFloat(&m.Confidence)
		case "source_record_ids":
			return sliceOf(d, &m.SourceRecordIDs, func(id *ID) bool { return d.Text(id) })
		case "parent_meta_ids":
			return sliceOf(d, &m.ParentMetaIDs, func(id *ID) bool { return d.Text(id) })
		case "context_edges":
			return sliceOf(d, &m.ContextEdges, d.edge)
		case "tags":
			return sliceOf(d, &m.Tags, d.str)
		case "captured_at":
			return d.optTime(&m.CapturedAt)
		}
		return false
	})
}

// edge parses a context edge, its relation context_of when left out.
func (d *recallDecoder) edge(e *MetaEdge) bool {
	*e = MetaEdge{Relation: RelContextOf}
	return d.Object(func(key []byte) bool {
		switch string(key) {
		case "source_id":
			return d.optID(&e.SourceID)
		case "target_id":
			return d.Text(&e.TargetID)
		case "relation":
			return d.Text(&e.Relation)
		case "rationale":
			return d.optStr(&e.Rationale)
		case "evidence":
			return sliceOf(d, &e.Evidence, d.evidence)
		case "confidence":
			return d.optFloat(&e.Confidence)
		case "created_at":
			return d.optTime(&e.CreatedAt)
		}
		return false
	})
}

func (d *recallDecoder) evidence(r *MetaEvidenceRef) bool {
	return d.Object(func(key []byte) bool {
		switch string(key) {
		case "record_id":
			return d.optID(&r.RecordID)
		case "raw_record_id":
			return d.optID(&r.RawRecordID)
		case "label":
			return d.optStr(&r.Label)
		case "excerpt":
			return d.optStr(&r.Excerpt)
		case "uri":
			return d.optStr(&r.URI)
		case "confidence":
			return d.optFloat(&r.Confidence)
		}
		return false
	})
}

func (d *recallDecoder) alternative(a *MetaAlternative) bool {
	return d.Object(func(key []byte) bool {
		switch string(key) {
		case "option":
			return d.str(&a.Option)
		case "reason":
			return d.optStr(&a.Reason)
		case "chosen":
			return d.Bool(&a.Chosen)
		}
		return false
	})
}

// optStr parses a string into a new *p, or null into nil.
func (d *recallDecoder) optStr(p **string) bool {
	if d.Null() {
		*p = nil
		return true
	}
	s := new(string)
	*p = s
	return d.str(s)
}

// optFloat parses a number into a new *p, or null into nil.
func (d *recallDecoder) optFloat(p **float64) bool {
	if d.Null() {
		*p = nil
		return true
	}
	f := new(float64)
	*p = f
	return d.Float(f, 64)
}

// optID parses an id into a new *p, or null into nil.
func (d *recallDecoder) optID(p **ID) bool {
	if d.Null() {
		*p = nil
		return true
	}
	id := new(ID)
	*p = id
	return d.Text(id)
}

// optTime parses a time into a new *p, or null into nil.
func (d *recallDecoder) optTime(p **time.Time) bool {
	if d.Null() {
		*p = nil
		return true
	}
	t := new(time.Time)
	*p = t
	return d.Time(t)
}
