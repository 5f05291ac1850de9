package memory

import (
	"encoding/json"
	"errors"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
)

// MetaMemory is the "why" of a record: intent, rationale, evidence and the
// decision context around it. Every field is optional on input.
type MetaMemory struct {
	SchemaVersion   uint32            `json:"schema_version"`
	CaptureStatus   MetaCaptureStatus `json:"capture_status"`
	Intent          *string           `json:"intent"`
	Rationale       *string           `json:"rationale"`
	Trigger         *string           `json:"trigger"`
	Goals           []string          `json:"goals"`
	Evidence        []MetaEvidenceRef `json:"evidence"`
	Assumptions     []string          `json:"assumptions"`
	Alternatives    []MetaAlternative `json:"alternatives"`
	Decision        *string           `json:"decision"`
	Confidence      *float64          `json:"confidence"`
	SourceRecordIDs []ID              `json:"source_record_ids"`
	ParentMetaIDs   []ID              `json:"parent_meta_ids"`
	ContextEdges    []MetaEdge        `json:"context_edges"`
	Tags            []string          `json:"tags"`
	CapturedAt      *time.Time        `json:"captured_at"`
}

// MetaEvidenceRef points at something that supports a record.
type MetaEvidenceRef struct {
	RecordID    *ID      `json:"record_id"`
	RawRecordID *ID      `json:"raw_record_id"`
	Label       *string  `json:"label"`
	Excerpt     *string  `json:"excerpt"`
	URI         *string  `json:"uri"`
	Confidence  *float64 `json:"confidence"`
}

// MetaAlternative is an option that was considered.
type MetaAlternative struct {
	Option string  `json:"option"`
	Reason *string `json:"reason"`
	Chosen bool    `json:"chosen"`
}

// MetaEdge relates a record to another record in its decision context.
type MetaEdge struct {
	SourceID   *ID               `json:"source_id"`
	TargetID   ID                `json:"target_id"`
	Relation   MetaRelation      `json:"relation"`
	Rationale  *string           `json:"rationale"`
	Evidence   []MetaEvidenceRef `json:"evidence"`
	Confidence *float64          `json:"confidence"`
	CreatedAt  *time.Time        `json:"created_at"`
}

// The fixed rationale sentences of the engine-written presets. The legacy
// one is compared against when normalising client input.
const (
	LegacyRationale      = "No structured meta-memory was captured for this legacy record."
	UnavailableRationale = "No explicit rationale was provided at ingest."
)

// Trigger names used in meta-memory presets.
const (
	TriggerEncodeStore    = "encode.store"
	TriggerEncodeUpdate   = "encode.update"
	TriggerEncodeStoreRaw = "encode.store_raw"
	TriggerDreamTick      = "lifecycle.dream_tick"
	TriggerConsolidate    = "lifecycle.consolidate"
)

// UnmarshalJSON applies the field defaults: schema version 1, status legacy,
// relation context_of (inside edges), then reads the given fields.
func (m *MetaMemory) UnmarshalJSON(b []byte) error {
	type plain MetaMemory
	p := plain{SchemaVersion: 1, CaptureStatus: CaptureLegacy}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*m = MetaMemory(p)
	return nil
}

// MarshalJSON writes empty lists as [] rather than null.
func (m MetaMemory) MarshalJSON() ([]byte, error) {
	type plain MetaMemory
	p := plain(m.withLists())
	return json.Marshal(p)
}

// UnmarshalJSON defaults the relation to context_of.
func (e *MetaEdge) UnmarshalJSON(b []byte) error {
	type plain MetaEdge
	p := plain{Relation: RelContextOf}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*e = MetaEdge(p)
	return nil
}

// MarshalJSON writes an empty evidence list as [].
func (e MetaEdge) MarshalJSON() ([]byte, error) {
	type plain MetaEdge
	p := plain(e)
	if p.Evidence == nil {
		p.Evidence = []MetaEvidenceRef{}
	}
	return json.Marshal(p)
}

func (m MetaMemory) withLists() MetaMemory {
	if m.CaptureStatus == 0 {
		m.CaptureStatus = CaptureLegacy
	}
	if m.Goals == nil {
		m.Goals = []string{}
	}
	if m.Evidence == nil {
		m.Evidence = []MetaEvidenceRef{}
	}
	if m.Assumptions == nil {
		m.Assumptions = []string{}
	}
	if m.Alternatives == nil {
		m.Alternatives = []MetaAlternative{}
	}
	if m.SourceRecordIDs == nil {
		m.SourceRecordIDs = []ID{}
	}
	if m.ParentMetaIDs == nil {
		m.ParentMetaIDs = []ID{}
	}
	if m.ContextEdges == nil {
		m.ContextEdges = []MetaEdge{}
	}
	if m.Tags == nil {
		m.Tags = []string{}
	}
	return m
}

// LegacyMeta is what a record without any meta-memory reads back as.
func LegacyMeta() MetaMemory {
	r := LegacyRationale
	return MetaMemory{SchemaVersion: 1, CaptureStatus: CaptureLegacy, Rationale: &r}
}

// UnavailableMeta is written on a new record whose writer supplied no
// meta-memory.
func UnavailableMeta(trigger string, now time.Time) MetaMemory {
	r, t := UnavailableRationale, trigger
	now = now.UTC()
	return MetaMemory{SchemaVersion: 1, CaptureStatus: CaptureUnavailable, Rationale: &r, Trigger: &t, CapturedAt: &now}
}

// InferredMeta is written by the engine on records it derives (dream
// summaries, consolidated copies), citing the raw records they came from.
func InferredMeta(trigger, rationale string, rawIDs []ID, now time.Time) MetaMemory {
	t, r := trigger, rationale
	now = now.UTC()
	one := 1.0
	label := "source_raw_record"
	m := MetaMemory{
		SchemaVersion: 1, CaptureStatus: CaptureInferred,
		Rationale: &r, Trigger: &t, CapturedAt: &now, Confidence: &one,
		SourceRecordIDs: append([]ID(nil), rawIDs...),
	}
	for i := range rawIDs {
		id := rawIDs[i]
		m.Evidence = append(m.Evidence, MetaEvidenceRef{RawRecordID: &id, Label: &label, Confidence: &one})
	}
	return m
}

// NormalizeMeta turns client-supplied meta-memory (or its absence) into what
// is stored: absent becomes the unavailable preset; otherwise schema version
// 0 becomes 1, a legacy status becomes provided (dropping the canned legacy
// rationale), and a missing trigger or capture time is filled in.
func NormalizeMeta(m *MetaMemory, trigger string, now time.Time) MetaMemory {
	if m == nil {
		return UnavailableMeta(trigger, now)
	}
	out := *m
	if out.SchemaVersion == 0 {
		out.SchemaVersion = 1
	}
	if out.CaptureStatus == 0 || out.CaptureStatus == CaptureLegacy {
		if out.Rationale != nil && *out.Rationale == LegacyRationale {
			out.Rationale = nil
		}
		out.CaptureStatus = CaptureProvided
	}
	if out.Trigger == nil {
		t := trigger
		out.Trigger = &t
	}
	if out.CapturedAt == nil {
		n := now.UTC()
		out.CapturedAt = &n
	}
	return out
}

// Validate checks confidences (finite, within [0,1]) and edge targets.
// field prefixes the names in error messages, for example "meta".
func (m *MetaMemory) Validate(field string) error {
	if m.SchemaVersion < 1 {
		return Invalid(field+".schema_version", "must be at least 1")
	}
	if !m.CaptureStatus.Valid() {
		return Invalid(field+".capture_status", "want one of %s", captureNames.list())
	}
	if err := checkConfidence(field+".confidence", m.Confidence); err != nil {
		return err
	}
	for i := range m.Evidence {
		if err := checkConfidence(sprintf("%s.evidence[%d].confidence", field, i), m.Evidence[i].Confidence); err != nil {
			return err
		}
	}
	for i := range m.ContextEdges {
		e := &m.ContextEdges[i]
		f := sprintf("%s.context_edges[%d]", field, i)
		if e.TargetID.IsNil() {
			return Invalid(f+".target_id", "must not be the nil UUID")
		}
		if !e.Relation.Valid() {
			return Invalid(f+".relation", "want one of %s", relationNames.list())
		}
		if err := checkConfidence(f+".confidence", e.Confidence); err != nil {
			return err
		}
		for j := range e.Evidence {
			if err := checkConfidence(sprintf("%s.evidence[%d].confidence", f, j), e.Evidence[j].Confidence); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkConfidence(field string, c *float64) error {
	if c == nil {
		return nil
	}
	if math.IsNaN(*c) || *c < 0 || *c > 1 {
		return Invalid(field, "must be between 0 and 1 (got %v)", *c)
	}
	return nil
}

// ParseMetaJSON parses and validates a meta-memory document given as text,
// as the CLI's --meta-json and the MCP tools' meta_json carry it. Blank text
// means "none" and returns nil.
func ParseMetaJSON(field, text string) (*MetaMemory, error) {
	if isBlank(text) {
		return nil, nil
	}
	// Text typed by a person or a model: a misspelt field is an error that
	// names it, where the HTTP API ignores unknown fields like upstream.
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &fields); err != nil {
		return nil, Invalid(field, `not a valid meta-memory JSON object: %v; want e.g. {"intent":"...","rationale":"...","tags":["..."]}`, err)
	}
	for k := range fields {
		if !slices.Contains(metaFieldNames(), k) {
			return nil, Invalid(field, "unknown field %s; meta-memory fields are: %s", Quote(k), strings.Join(metaFieldNames(), ", "))
		}
	}
	var m MetaMemory
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && te.Field != "" {
			return nil, Invalid(field+"."+te.Field, "want %s, got %s", jsonKind(te.Type), article(te.Value))
		}
		return nil, Invalid(field, "not a valid meta-memory JSON object: %v", err)
	}
	// Validate what will be stored: the service turns schema version 0
	// into 1 before validating, so it is accepted here too.
	v := m
	if v.SchemaVersion == 0 {
		v.SchemaVersion = 1
	}
	if err := v.Validate(field); err != nil {
		return nil, err
	}
	return &m, nil
}

// jsonKind says in JSON's words what a Go type accepts: "a string", "a
// list of strings", "a number", "an object".
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		switch k := jsonKind(t.Elem()); k {
		case "a string":
			return "a list of strings"
		case "an object":
			return "a list of objects"
		default:
			return "a list"
		}
	case reflect.Struct:
		if t == reflect.TypeFor[time.Time]() {
			return "an RFC 3339 time string"
		}
		return "an object"
	default:
		return "an object"
	}
}

// article turns encoding/json's name of a JSON value ("string", "number",
// "array", "object", "bool") into words.
func article(value string) string {
	switch value {
	case "array":
		return "a list"
	case "object":
		return "an object"
	case "bool":
		return "true or false"
	case "":
		return "another kind of value"
	default:
		if n, ok := strings.CutPrefix(value, "number "); ok {
			return "a number (" + n + ")"
		}
		return "a " + value
	}
}

// metaFieldNames lists the top-level fields of a meta-memory document,
// sorted, read from the type's own JSON encoding so the list cannot drift.
var metaFieldNames = sync.OnceValue(func() []string {
	b, err := json.Marshal(MetaMemory{SchemaVersion: 1, CaptureStatus: CaptureProvided})
	if err != nil {
		panic(err) // a fixed value of our own type
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err)
	}
	return slices.Sorted(maps.Keys(m))
})
