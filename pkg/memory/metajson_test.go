package memory

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func (c jsonCorpus) optText() *string {
	if c.pick(3) == 0 {
		return nil
	}
	s := c.text()
	return &s
}

func (c jsonCorpus) optFloat() *float64 {
	if c.pick(3) == 0 {
		return nil
	}
	f := c.float()
	return &f
}

func (c jsonCorpus) optTime() *time.Time {
	if c.pick(3) == 0 {
		return nil
	}
	t := c.time()
	return &t
}

func (c jsonCorpus) optID() *ID {
	if c.pick(3) == 0 {
		return nil
	}
	id := c.id()
	return &id
}

func (c jsonCorpus) texts() []string {
	if c.pick(3) == 0 {
		return nil
	}
	ss := make([]string, c.pick(4))
	for i := range ss {
		ss[i] = c.text()
	}
	return ss
}

func (c jsonCorpus) ids() []ID {
	if c.pick(3) == 0 {
		return nil
	}
	ids := make([]ID, c.pick(4))
	for i := range ids {
		ids[i] = c.id()
	}
	return ids
}

func (c jsonCorpus) evidence() []MetaEvidenceRef {
	if c.pick(3) == 0 {
		return nil
	}
	refs := make([]MetaEvidenceRef, c.pick(3))
	for i := range refs {
		refs[i] = MetaEvidenceRef{RecordID: c.optID(), RawRecordID: c.optID(), Label: c.optText(), Excerpt: c.optText(),
			URI: c.optText(), Confidence: c.optFloat()}
	}
	return refs
}

// meta draws a meta-memory with every field set or unset at random, the
// capture status unset now and then.
func (c jsonCorpus) meta() MetaMemory {
	m := MetaMemory{SchemaVersion: c.rng.Uint32(), CaptureStatus: MetaCaptureStatus(c.pick(5)), Intent: c.optText(),
		Rationale: c.optText(), Trigger: c.optText(), Goals: c.texts(), Evidence: c.evidence(), Assumptions: c.texts(),
		Decision: c.optText(), Confidence: c.optFloat(), SourceRecordIDs: c.ids(), ParentMetaIDs: c.ids(),
		Tags: c.texts(), CapturedAt: c.optTime()}
	if c.pick(3) > 0 {
		m.Alternatives = []MetaAlternative{}
	}
	for range c.pick(3) {
		m.Alternatives = append(m.Alternatives, MetaAlternative{Option: c.text(), Reason: c.optText(), Chosen: c.pick(2) == 0})
	}
	if c.pick(3) > 0 {
		m.ContextEdges = []MetaEdge{}
	}
	for range c.pick(3) {
		m.ContextEdges = append(m.ContextEdges, MetaEdge{SourceID: c.optID(), TargetID: c.id(), Relation: MetaRelation(1 + c.pick(8)),
			Rationale: c.optText(), Evidence: c.evidence(), Confidence: c.optFloat(), CreatedAt: c.optTime()})
	}
	return m
}

// TestMetaJSONMatchesReflection: the hand-written meta-memory encoder
// writes what MetaMemory.MarshalJSON (encoding/json) writes, on random
// values with every field set or unset, nil and empty lists, unset
// capture statuses and the text, float and time edge cases of the corpus.
func TestMetaJSONMatchesReflection(t *testing.T) {
	c := jsonCorpus{rand.New(rand.NewPCG(7, 8))}
	for i := range 2000 {
		m := c.meta()
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("meta %d: reference: %v", i, err)
		}
		got, err := appendMetaJSON([]byte("prefix"), &m)
		if err != nil || !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Fatalf("meta %d (err %v):\n got %s\nwant prefix%s", i, err, got, want)
		}
	}
	for _, m := range []MetaMemory{{}, UnavailableMeta(TriggerEncodeStore, time.Unix(1e9, 5).UTC())} {
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := appendMetaJSON(nil, &m); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("meta %+v (err %v):\n got %s\nwant %s", m, err, got, want)
		}
	}
}

// TestMetaJSONErrors: a meta-memory encoding/json refuses, the
// hand-written encoder refuses too.
func TestMetaJSONErrors(t *testing.T) {
	c := jsonCorpus{rand.New(rand.NewPCG(9, 10))}
	nan, inf := math.NaN(), math.Inf(1)
	late := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	for name, spoil := range map[string]func(m *MetaMemory){
		"unnamed capture status": func(m *MetaMemory) { m.CaptureStatus = 9 },
		"NaN confidence":         func(m *MetaMemory) { m.Confidence = &nan },
		"captured in year 10000": func(m *MetaMemory) { m.CapturedAt = &late },
		"evidence confidence":    func(m *MetaMemory) { m.Evidence = []MetaEvidenceRef{{Confidence: &inf}} },
		"unset edge relation":    func(m *MetaMemory) { m.ContextEdges = []MetaEdge{{}} },
		"edge confidence":        func(m *MetaMemory) { m.ContextEdges = []MetaEdge{{Relation: RelSupports, Confidence: &nan}} },
		"edge time":              func(m *MetaMemory) { m.ContextEdges = []MetaEdge{{Relation: RelSupports, CreatedAt: &late}} },
		"edge evidence": func(m *MetaMemory) {
			m.ContextEdges = []MetaEdge{{Relation: RelSupports, Evidence: []MetaEvidenceRef{{Confidence: &nan}}}}
		},
	} {
		m := c.meta()
		spoil(&m)
		if _, err := json.Marshal(m); err == nil {
			t.Fatalf("%s: encoding/json accepts it; the case tests nothing", name)
		}
		if out, err := appendMetaJSON(nil, &m); err == nil {
			t.Errorf("%s: encoded as %s, want an error", name, out)
		}
		r := c.record()
		r.Meta = m
		if out, err := r.MarshalJSON(); err == nil {
			t.Errorf("%s: record encoded as %s, want an error", name, out)
		}
	}
}
