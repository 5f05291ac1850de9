package memory

import "slices"

// CloneRecord returns a deep copy of rec: it shares no memory that a
// caller could change with rec (strings, which cannot change, are
// shared). TestCloneRecordSharesNothing fills every field and checks, so
// a field added to the record without a line here fails it.
func CloneRecord(rec *MemoryRecord) *MemoryRecord {
	out := *rec
	out.Content = cloneContent(&rec.Content)
	out.Associations = slices.Clone(rec.Associations)
	out.Metadata = slices.Clone(rec.Metadata)
	cloneMeta(&out.Meta)
	return &out
}

// cloneMeta replaces everything m points at with copies.
func cloneMeta(m *MetaMemory) {
	m.Intent = clonePtr(m.Intent)
	m.Rationale = clonePtr(m.Rationale)
	m.Trigger = clonePtr(m.Trigger)
	m.Goals = slices.Clone(m.Goals)
	m.Evidence = cloneEvidence(m.Evidence)
	m.Assumptions = slices.Clone(m.Assumptions)
	if m.Alternatives != nil {
		m.Alternatives = slices.Clone(m.Alternatives)
		for i := range m.Alternatives {
			m.Alternatives[i].Reason = clonePtr(m.Alternatives[i].Reason)
		}
	}
	m.Decision = clonePtr(m.Decision)
	m.Confidence = clonePtr(m.Confidence)
	m.SourceRecordIDs = slices.Clone(m.SourceRecordIDs)
	m.ParentMetaIDs = slices.Clone(m.ParentMetaIDs)
	if m.ContextEdges != nil {
		m.ContextEdges = slices.Clone(m.ContextEdges)
		for i := range m.ContextEdges {
			e := &m.ContextEdges[i]
			e.SourceID = clonePtr(e.SourceID)
			e.Rationale = clonePtr(e.Rationale)
			e.Evidence = cloneEvidence(e.Evidence)
			e.Confidence = clonePtr(e.Confidence)
			e.CreatedAt = clonePtr(e.CreatedAt)
		}
	}
	m.Tags = slices.Clone(m.Tags)
	m.CapturedAt = clonePtr(m.CapturedAt)
}

func cloneEvidence(ev []MetaEvidenceRef) []MetaEvidenceRef {
	if ev == nil {
		return nil
	}
	out := slices.Clone(ev)
	for i := range out {
		r := &out[i]
		r.RecordID = clonePtr(r.RecordID)
		r.RawRecordID = clonePtr(r.RawRecordID)
		r.Label = clonePtr(r.Label)
		r.Excerpt = clonePtr(r.Excerpt)
		r.URI = clonePtr(r.URI)
		r.Confidence = clonePtr(r.Confidence)
	}
	return out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
