package grpcapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "memsvc.dev/memsvc/pkg/grpcapi/memsvcpb"
	"memsvc.dev/memsvc/pkg/memory"
)

// This file and convert_ops.go translate between the protobuf messages and
// the pkg/memory model in the directions the server needs: proto → model
// for requests and model → proto for answers. The other two directions are
// in convert_reverse_test.go, so that every conversion is round-trip
// tested without the server carrying them.
//
// Rules, mirroring how the JSON model is decoded:
//
//   - Enum numbers equal the model's values; UNSPECIFIED is the model's
//     zero value ("unset"), where a request field has a default the default
//     applies, and a number the model does not know is a VALIDATION_ERROR.
//   - proto3 optional fields and message fields map to the model's pointer
//     fields; the *List wrappers map nil to a nil slice and a present list
//     to a non-nil slice.
//   - A nil Timestamp is the zero time; the zero time is a nil Timestamp.
//   - Struct and Value hold the model's free-form JSON; nil is absent.
//
// A decoder reports the first problem as a VALIDATION_ERROR naming the
// field by its JSON path ("records[2].content.blocks[0].modality"), so
// gRPC and HTTP clients read the same messages.

// decoder turns messages into model values and keeps the first error.
type decoder struct{ err error }

func (d *decoder) fail(field, format string, args ...any) {
	if d.err == nil {
		d.err = memory.Invalid(field, format, args...)
	}
}

// join appends a field name to a path.
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// index appends a list index to a path.
func index(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

// encoder turns model values into messages and keeps the first error. Only
// free-form JSON that does not parse can fail, which never happens to
// values the service produced.
type encoder struct{ err error }

func (e *encoder) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

// ---------------------------------------------------------------- scalars

// id parses a required record id.
func (d *decoder) id(f, s string) memory.ID {
	if s == "" {
		d.fail(f, "required: a UUID")
		return memory.ID{}
	}
	id, err := memory.ParseID(s)
	if err != nil {
		d.fail(f, "%v", err)
	}
	return id
}

func (d *decoder) optID(f string, s *string) *memory.ID {
	if s == nil {
		return nil
	}
	id := d.id(f, *s)
	return &id
}

func (d *decoder) ids(f string, in []string) []memory.ID {
	return decodeEach(f, in, d.id)
}

// decodeEach converts every element of in with one, which gets the
// element's field path under f; an empty list is nil.
func decodeEach[P, M any](f string, in []P, one func(f string, p P) M) []M {
	if len(in) == 0 {
		return nil
	}
	out := make([]M, len(in))
	for i, p := range in {
		out[i] = one(index(f, i), p)
	}
	return out
}

// encodeEach converts every element of in with one; nil stays nil.
func encodeEach[M, P any](in []M, one func(m *M) P) []P {
	if in == nil {
		return nil
	}
	out := make([]P, len(in))
	for i := range in {
		out[i] = one(&in[i])
	}
	return out
}

func optIDString(id *memory.ID) *string {
	if id == nil {
		return nil
	}
	s := id.String()
	return &s
}

func idStrings(ids []memory.ID) []string {
	return encodeEach(ids, (*memory.ID).String)
}

// time reads a timestamp; nil is the zero time.
func (d *decoder) time(f string, ts *timestamppb.Timestamp) time.Time {
	if ts == nil {
		return time.Time{}
	}
	if err := ts.CheckValid(); err != nil {
		d.fail(f, "invalid timestamp: %v", err)
		return time.Time{}
	}
	return ts.AsTime()
}

func (d *decoder) optTime(f string, ts *timestamppb.Timestamp) *time.Time {
	if ts == nil {
		return nil
	}
	t := d.time(f, ts)
	return &t
}

// timestamp writes a time; the zero time is nil.
func timestamp(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

func optTimestamp(t *time.Time) *timestamppb.Timestamp {
	if t == nil {
		return nil
	}
	return timestamppb.New(*t)
}

// cursor reads an optional page cursor. An empty id is the zero id, as in
// the JSON model where the id may be left out; the created_at is checked
// by the request's Validate.
func (d *decoder) cursor(f string, in *pb.PageCursor) *memory.PageCursor {
	if in == nil {
		return nil
	}
	c := &memory.PageCursor{CreatedAt: d.time(join(f, "created_at"), in.GetCreatedAt())}
	if in.GetId() != "" {
		c.ID = d.id(join(f, "id"), in.GetId())
	}
	return c
}

// pbCursor writes an optional page cursor.
func pbCursor(c *memory.PageCursor) *pb.PageCursor {
	if c == nil {
		return nil
	}
	return &pb.PageCursor{CreatedAt: timestamp(c.CreatedAt), Id: c.ID.String()}
}

func clone[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// ---------------------------------------------------------------- enums

// modelEnum is one of the model's enumerations: a small integer whose zero
// value means "unset".
type modelEnum interface {
	~uint8
	Valid() bool
}

// enum converts a protobuf enum number; 0 (UNSPECIFIED) is the model's
// zero value.
func enum[E modelEnum, P ~int32](d *decoder, f string, v P) E {
	if v == 0 {
		return 0
	}
	e := E(v)
	if v < 0 || v > 255 || !e.Valid() {
		d.fail(f, "unknown enum value %d", v)
		return 0
	}
	return e
}

// enumOr converts an enum whose UNSPECIFIED means "the default".
func enumOr[E modelEnum, P ~int32](d *decoder, f string, v P, def E) E {
	if v == 0 {
		return def
	}
	return enum[E](d, f, v)
}

func enums[E modelEnum, P ~int32](d *decoder, f string, in []P) []E {
	return decodeEach(f, in, func(f string, v P) E { return enum[E](d, f, v) })
}

func pbEnums[P ~int32, E ~uint8](in []E) []P {
	return encodeEach(in, func(v *E) P { return P(*v) })
}

// optEnum converts a nullable enum: UNSPECIFIED is nil.
func optEnum[E modelEnum, P ~int32](d *decoder, f string, v P) *E {
	if v == 0 {
		return nil
	}
	e := enum[E](d, f, v)
	return &e
}

func pbOptEnum[P ~int32, E ~uint8](v *E) P {
	if v == nil {
		return 0
	}
	return P(*v)
}

// ---------------------------------------------------------------- free-form JSON

// marshalJSON writes v compactly without HTML escaping, as the JSON model
// keeps client JSON.
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// object reads free-form metadata; nil is absent.
func (d *decoder) object(f string, s *structpb.Struct) memory.JSON {
	if s == nil {
		return nil
	}
	b, err := marshalJSON(s.AsMap())
	if err != nil {
		d.fail(f, "not representable as JSON (numbers must be finite): %v", err)
		return nil
	}
	return memory.JSON(b)
}

// value reads a free-form JSON value; nil is absent.
func (d *decoder) value(f string, v *structpb.Value) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := marshalJSON(v.AsInterface())
	if err != nil {
		d.fail(f, "not representable as JSON (numbers must be finite): %v", err)
		return nil
	}
	return json.RawMessage(b)
}

func (e *encoder) object(j memory.JSON) *structpb.Struct {
	return fromJSON(e, "metadata", j, func(m map[string]any) (*structpb.Struct, error) {
		if m == nil { // the JSON null
			return nil, nil
		}
		return structpb.NewStruct(m)
	})
}

// fromJSON decodes raw (nothing when empty) into a V and builds the
// protobuf value of it with build; a failure of either is e's failure,
// named what.
func fromJSON[V, M any](e *encoder, what string, raw []byte, build func(V) (*M, error)) *M {
	if len(raw) == 0 {
		return nil
	}
	var v V
	if err := json.Unmarshal(raw, &v); err != nil {
		e.fail(fmt.Errorf("%s: %w", what, err))
		return nil
	}
	out, err := build(v)
	if err != nil {
		e.fail(fmt.Errorf("%s: %w", what, err))
		return nil
	}
	return out
}

// ---------------------------------------------------------------- shared pieces

func (d *decoder) header(f string, in *pb.CmpHeader) *memory.CMPHeader {
	if in == nil {
		return nil
	}
	h := &memory.CMPHeader{Protocol: in.GetProtocol(), Version: in.GetVersion(), Timestamp: d.time(join(f, "timestamp"), in.GetTimestamp())}
	if in.GetRequestId() != "" {
		h.RequestID = d.id(join(f, "request_id"), in.GetRequestId())
	}
	return h
}

func (d *decoder) temporalRange(f string, in *pb.TemporalRange) memory.TemporalRange {
	return memory.TemporalRange{Start: d.time(join(f, "start"), in.GetStart()), End: d.time(join(f, "end"), in.GetEnd())}
}

func (d *decoder) optTemporalRange(f string, in *pb.TemporalRange) *memory.TemporalRange {
	if in == nil {
		return nil
	}
	r := d.temporalRange(f, in)
	return &r
}

// ---------------------------------------------------------------- records

func (d *decoder) content(f string, in *pb.MemoryContent) memory.MemoryContent {
	if in == nil {
		return memory.MemoryContent{}
	}
	c := memory.MemoryContent{Summary: clone(in.Summary)}
	if n := len(in.GetBlocks()); n > 0 {
		c.Blocks = make([]memory.ContentBlock, n)
		for i, b := range in.GetBlocks() {
			c.Blocks[i] = memory.ContentBlock{
				Modality:  enum[memory.Modality](d, index(join(f, "blocks"), i)+".modality", b.GetModality()),
				Format:    b.GetFormat(),
				Data:      memory.Bytes(b.GetData()),
				Embedding: b.GetEmbedding(),
			}
		}
	}
	return c
}

func (d *decoder) optContent(f string, in *pb.MemoryContent) *memory.MemoryContent {
	if in == nil {
		return nil
	}
	c := d.content(f, in)
	return &c
}

func pbContent(c *memory.MemoryContent) *pb.MemoryContent {
	if c == nil {
		return nil
	}
	out := &pb.MemoryContent{Summary: clone(c.Summary)}
	if c.Blocks != nil {
		out.Blocks = make([]*pb.ContentBlock, len(c.Blocks))
		for i := range c.Blocks {
			b := &c.Blocks[i]
			out.Blocks[i] = &pb.ContentBlock{Modality: pb.Modality(b.Modality), Format: b.Format, Data: b.Data, Embedding: b.Embedding}
		}
	}
	return out
}

func pbFidelity(s *memory.FidelityState) *pb.FidelityState {
	return &pb.FidelityState{
		Score:              s.Score,
		NoiseLevel:         s.NoiseLevel,
		DecayRate:          s.DecayRate,
		EmotionalAnchor:    s.EmotionalAnchor,
		ReinforcementCount: s.ReinforcementCount,
		Stability:          s.Stability,
		LastDecayTick:      timestamp(s.LastDecayTick),
	}
}

func emotion(in *pb.EmotionVector) memory.EmotionVector {
	return memory.EmotionVector{
		Joy: in.GetJoy(), Trust: in.GetTrust(), Fear: in.GetFear(), Surprise: in.GetSurprise(),
		Sadness: in.GetSadness(), Disgust: in.GetDisgust(), Anger: in.GetAnger(), Anticipation: in.GetAnticipation(),
		Intensity: in.GetIntensity(), Valence: in.GetValence(),
	}
}

func optEmotion(in *pb.EmotionVector) *memory.EmotionVector {
	if in == nil {
		return nil
	}
	e := emotion(in)
	return &e
}

func pbEmotion(e *memory.EmotionVector) *pb.EmotionVector {
	if e == nil {
		return nil
	}
	return &pb.EmotionVector{
		Joy: e.Joy, Trust: e.Trust, Fear: e.Fear, Surprise: e.Surprise,
		Sadness: e.Sadness, Disgust: e.Disgust, Anger: e.Anger, Anticipation: e.Anticipation,
		Intensity: e.Intensity, Valence: e.Valence,
	}
}

func (e *encoder) record(r *memory.MemoryRecord) *pb.MemoryRecord {
	out := &pb.MemoryRecord{
		Id:             r.ID.String(),
		Store:          pb.StoreType(r.Store),
		CreatedAt:      timestamp(r.CreatedAt),
		UpdatedAt:      timestamp(r.UpdatedAt),
		LastAccessedAt: timestamp(r.LastAccessedAt),
		AccessCount:    r.AccessCount,
		Content:        pbContent(&r.Content),
		Fidelity:       pbFidelity(&r.Fidelity),
		Emotion:        pbEmotion(&r.Emotion),
		Metadata:       e.object(r.Metadata),
		Version:        r.Version,
		Meta:           pbMeta(&r.Meta),
	}
	if r.Associations != nil {
		out.Associations = make([]*pb.Association, len(r.Associations))
		for i := range r.Associations {
			a := &r.Associations[i]
			out.Associations[i] = &pb.Association{
				TargetId:         a.TargetID.String(),
				AssociationType:  pb.AssociationType(a.AssociationType),
				Weight:           a.Weight,
				CreatedAt:        timestamp(a.CreatedAt),
				LastCoActivation: timestamp(a.LastCoActivation),
				Origin:           pb.AssociationOrigin(a.Origin),
			}
		}
	}
	return out
}

func (e *encoder) rawRecord(r *memory.RawJournalRecord) *pb.RawJournalRecord {
	return &pb.RawJournalRecord{
		Id:               r.ID.String(),
		SessionId:        r.SessionID,
		TurnId:           clone(r.TurnID),
		TopicId:          clone(r.TopicID),
		Source:           pb.RawSource(r.Source),
		Speaker:          pb.RawSpeaker(r.Speaker),
		Visibility:       pb.Visibility(r.Visibility),
		SecrecyLevel:     pb.SecrecyLevel(r.SecrecyLevel),
		CreatedAt:        timestamp(r.CreatedAt),
		UpdatedAt:        timestamp(r.UpdatedAt),
		Content:          pbContent(&r.Content),
		Metadata:         e.object(r.Metadata),
		DerivedMemoryIds: idStrings(r.DerivedMemoryIDs),
		Suppressed:       r.Suppressed,
		Meta:             pbMeta(&r.Meta),
	}
}

// ---------------------------------------------------------------- meta-memory

// meta reads meta-memory with the JSON model's defaults: schema version 1
// and status legacy when unset, the whole message included.
func (d *decoder) meta(f string, in *pb.MetaMemory) memory.MetaMemory {
	if in == nil {
		in = &pb.MetaMemory{}
	}
	m := memory.MetaMemory{
		SchemaVersion:   in.GetSchemaVersion(),
		CaptureStatus:   enumOr(d, join(f, "capture_status"), in.GetCaptureStatus(), memory.CaptureLegacy),
		Intent:          clone(in.Intent),
		Rationale:       clone(in.Rationale),
		Trigger:         clone(in.Trigger),
		Goals:           in.GetGoals(),
		Evidence:        d.evidence(join(f, "evidence"), in.GetEvidence()),
		Assumptions:     in.GetAssumptions(),
		Decision:        clone(in.Decision),
		Confidence:      clone(in.Confidence),
		SourceRecordIDs: d.ids(join(f, "source_record_ids"), in.GetSourceRecordIds()),
		ParentMetaIDs:   d.ids(join(f, "parent_meta_ids"), in.GetParentMetaIds()),
		ContextEdges:    d.metaEdges(join(f, "context_edges"), in.GetContextEdges()),
		Tags:            in.GetTags(),
		CapturedAt:      d.optTime(join(f, "captured_at"), in.GetCapturedAt()),
	}
	if m.SchemaVersion == 0 {
		m.SchemaVersion = 1
	}
	if n := len(in.GetAlternatives()); n > 0 {
		m.Alternatives = make([]memory.MetaAlternative, n)
		for i, a := range in.GetAlternatives() {
			m.Alternatives[i] = memory.MetaAlternative{Option: a.GetOption(), Reason: clone(a.Reason), Chosen: a.GetChosen()}
		}
	}
	return m
}

func (d *decoder) optMeta(f string, in *pb.MetaMemory) *memory.MetaMemory {
	if in == nil {
		return nil
	}
	m := d.meta(f, in)
	return &m
}

func pbMeta(m *memory.MetaMemory) *pb.MetaMemory {
	if m == nil {
		return nil
	}
	out := &pb.MetaMemory{
		SchemaVersion:   m.SchemaVersion,
		CaptureStatus:   pb.MetaCaptureStatus(m.CaptureStatus),
		Intent:          clone(m.Intent),
		Rationale:       clone(m.Rationale),
		Trigger:         clone(m.Trigger),
		Goals:           m.Goals,
		Evidence:        pbEvidence(m.Evidence),
		Assumptions:     m.Assumptions,
		Decision:        clone(m.Decision),
		Confidence:      clone(m.Confidence),
		SourceRecordIds: idStrings(m.SourceRecordIDs),
		ParentMetaIds:   idStrings(m.ParentMetaIDs),
		ContextEdges:    pbMetaEdges(m.ContextEdges),
		Tags:            m.Tags,
		CapturedAt:      optTimestamp(m.CapturedAt),
	}
	if m.Alternatives != nil {
		out.Alternatives = make([]*pb.MetaAlternative, len(m.Alternatives))
		for i, a := range m.Alternatives {
			out.Alternatives[i] = &pb.MetaAlternative{Option: a.Option, Reason: clone(a.Reason), Chosen: a.Chosen}
		}
	}
	return out
}

func (d *decoder) evidence(f string, in []*pb.MetaEvidenceRef) []memory.MetaEvidenceRef {
	return decodeEach(f, in, func(ef string, ev *pb.MetaEvidenceRef) memory.MetaEvidenceRef {
		return memory.MetaEvidenceRef{
			RecordID:    d.optID(join(ef, "record_id"), ev.RecordId),
			RawRecordID: d.optID(join(ef, "raw_record_id"), ev.RawRecordId),
			Label:       clone(ev.Label),
			Excerpt:     clone(ev.Excerpt),
			URI:         clone(ev.Uri),
			Confidence:  clone(ev.Confidence),
		}
	})
}

func pbEvidence(in []memory.MetaEvidenceRef) []*pb.MetaEvidenceRef {
	return encodeEach(in, func(ev *memory.MetaEvidenceRef) *pb.MetaEvidenceRef {
		return &pb.MetaEvidenceRef{
			RecordId:    optIDString(ev.RecordID),
			RawRecordId: optIDString(ev.RawRecordID),
			Label:       clone(ev.Label),
			Excerpt:     clone(ev.Excerpt),
			Uri:         clone(ev.URI),
			Confidence:  clone(ev.Confidence),
		}
	})
}

// metaEdges reads context edges; an unset relation is context_of, as in
// JSON.
func (d *decoder) metaEdges(f string, in []*pb.MetaEdge) []memory.MetaEdge {
	return decodeEach(f, in, func(ef string, e *pb.MetaEdge) memory.MetaEdge {
		return memory.MetaEdge{
			SourceID:   d.optID(join(ef, "source_id"), e.SourceId),
			TargetID:   d.id(join(ef, "target_id"), e.GetTargetId()),
			Relation:   enumOr(d, join(ef, "relation"), e.GetRelation(), memory.RelContextOf),
			Rationale:  clone(e.Rationale),
			Evidence:   d.evidence(join(ef, "evidence"), e.GetEvidence()),
			Confidence: clone(e.Confidence),
			CreatedAt:  d.optTime(join(ef, "created_at"), e.GetCreatedAt()),
		}
	})
}

func pbMetaEdges(in []memory.MetaEdge) []*pb.MetaEdge {
	return encodeEach(in, func(e *memory.MetaEdge) *pb.MetaEdge {
		return &pb.MetaEdge{
			SourceId:   optIDString(e.SourceID),
			TargetId:   e.TargetID.String(),
			Relation:   pb.MetaRelation(e.Relation),
			Rationale:  clone(e.Rationale),
			Evidence:   pbEvidence(e.Evidence),
			Confidence: clone(e.Confidence),
			CreatedAt:  optTimestamp(e.CreatedAt),
		}
	})
}
