package store

import (
	"slices"

	"memsvc.dev/memsvc/pkg/memory"
)

// CloneRecord returns a deep copy of rec: it shares no memory that a
// caller could change with rec (strings, which cannot change, are
// shared). TestCloneRecordSharesNothing fills every field and checks, so
// a field added to the record without a line here fails it.
func CloneRecord(rec *memory.MemoryRecord) *memory.MemoryRecord {
	out := *rec
	out.Content.Summary = clonePtr(rec.Content.Summary)
	if rec.Content.Blocks != nil {
		out.Content.Blocks = make([]memory.ContentBlock, len(rec.Content.Blocks))
		for i, b := range rec.Content.Blocks {
			b.Data = slices.Clone(b.Data)
			b.Embedding = slices.Clone(b.Embedding)
			out.Content.Blocks[i] = b
		}
	}
	out.Associations = slices.Clone(rec.Associations)
	out.Metadata = slices.Clone(rec.Metadata)
	cloneMeta(&out.Meta)
	return &out
}

// cloneMeta replaces everything m points at with copies.
func cloneMeta(m *memory.MetaMemory) {
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

func cloneEvidence(ev []memory.MetaEvidenceRef) []memory.MetaEvidenceRef {
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
