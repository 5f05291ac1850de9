package memory

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func validRecord() MemoryRecord {
	return MemoryRecord{
		ID: idA, Store: StoreEpisodic, CreatedAt: t0, UpdatedAt: t0, LastAccessedAt: t0,
		Content:  TextContent("hello"),
		Fidelity: FidelityState{Score: 1, DecayRate: 0.5, EmotionalAnchor: 1, Stability: 1, LastDecayTick: t0},
		Version:  1,
		Meta:     UnavailableMeta(TriggerEncodeStore, t0),
	}
}

func validRaw() RawJournalRecord {
	return RawJournalRecord{
		ID: idA, SessionID: "s1", Source: SourceConversation, Speaker: SpeakerUser,
		Visibility: VisibilityNormal, SecrecyLevel: SecrecyPublic, CreatedAt: t0, UpdatedAt: t0,
		Content: TextContent("hello"), Meta: UnavailableMeta(TriggerEncodeStoreRaw, t0),
	}
}

// checkErr asserts the code and that the message starts with the field
// name followed by ": ".
func checkErr(t *testing.T, err error, code Code, field string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s on %s", code, field)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *memory.Error", err, err)
	}
	if e.Code != code {
		t.Errorf("code = %s, want %s (message %q)", e.Code, code, e.Message)
	}
	if !strings.HasPrefix(e.Message, field+": ") {
		t.Errorf("message %q does not start with %q", e.Message, field+": ")
	}
}

func TestValidateRecord(t *testing.T) {
	if r := validRecord(); r.Validate() != nil {
		t.Fatalf("valid record rejected: %v", r.Validate())
	}
	nan := math.NaN()
	tests := []struct {
		name  string
		edit  func(r *MemoryRecord)
		code  Code
		field string
	}{
		{"no store", func(r *MemoryRecord) { r.Store = 0 }, CodeValidation, "store"},
		{"bad store", func(r *MemoryRecord) { r.Store = 6 }, CodeValidation, "store"},
		{"no blocks", func(r *MemoryRecord) { r.Content.Blocks = nil }, CodeValidation, "content.blocks"},
		{"empty blocks", func(r *MemoryRecord) { r.Content.Blocks = []ContentBlock{} }, CodeValidation, "content.blocks"},
		{"no modality", func(r *MemoryRecord) { r.Content.Blocks[0].Modality = 0 }, CodeValidation, "content.blocks[0].modality"},
		{"bad modality second block", func(r *MemoryRecord) {
			r.Content.Blocks = append(r.Content.Blocks, ContentBlock{Modality: 9, Format: "x", Data: Bytes("a")})
		}, CodeValidation, "content.blocks[1].modality"},
		{"invalid utf8", func(r *MemoryRecord) { r.Content.Blocks[0].Data = Bytes{'a', 0xff, 'b'} }, CodeValidation, "content.blocks[0].data"},
		{"truncated utf8", func(r *MemoryRecord) { r.Content.Blocks[0].Data = Bytes("é")[:1] }, CodeValidation, "content.blocks[0].data"},
		{"invalid structured", func(r *MemoryRecord) {
			r.Content.Blocks[0] = ContentBlock{Modality: ModalityStructured, Format: "application/json", Data: Bytes(`{"a":`)}
		}, CodeValidation, "content.blocks[0].data"},
		{"empty structured", func(r *MemoryRecord) {
			r.Content.Blocks[0] = ContentBlock{Modality: ModalityStructured, Format: "application/json"}
		}, CodeValidation, "content.blocks[0].data"},
		{"empty embedding", func(r *MemoryRecord) { r.Content.Blocks[0].Embedding = []float32{} }, CodeValidation, "content.blocks[0].embedding"},
		{"NaN embedding", func(r *MemoryRecord) { r.Content.Blocks[0].Embedding = []float32{1, float32(nan)} }, CodeValidation, "content.blocks[0].embedding[1]"},
		{"+Inf embedding", func(r *MemoryRecord) { r.Content.Blocks[0].Embedding = []float32{float32(math.Inf(1))} }, CodeValidation, "content.blocks[0].embedding[0]"},
		{"-Inf embedding", func(r *MemoryRecord) { r.Content.Blocks[0].Embedding = []float32{0, 0, float32(math.Inf(-1))} }, CodeValidation, "content.blocks[0].embedding[2]"},
		{"huge embedding", func(r *MemoryRecord) { r.Content.Blocks[0].Embedding = make([]float32, MaxEmbeddingDims+1) }, CodeValidation, "content.blocks[0].embedding"},
		{"score above 1", func(r *MemoryRecord) { r.Fidelity.Score = 1.0000001 }, CodeValidation, "fidelity.score"},
		{"score NaN", func(r *MemoryRecord) { r.Fidelity.Score = nan }, CodeValidation, "fidelity.score"},
		{"noise negative", func(r *MemoryRecord) { r.Fidelity.NoiseLevel = -0.1 }, CodeValidation, "fidelity.noise_level"},
		{"weight above 1", func(r *MemoryRecord) {
			r.Associations = []Association{{TargetID: idB, AssociationType: AssocCausal, Weight: 1}, {TargetID: idB, AssociationType: AssocCausal, Weight: 1.01}}
		}, CodeValidation, "associations[1].weight"},
		{"weight negative", func(r *MemoryRecord) {
			r.Associations = []Association{{TargetID: idB, AssociationType: AssocCausal, Weight: -0.01}}
		}, CodeValidation, "associations[0].weight"},
		{"weight NaN", func(r *MemoryRecord) {
			r.Associations = []Association{{TargetID: idB, AssociationType: AssocCausal, Weight: nan}}
		}, CodeValidation, "associations[0].weight"},
		{"no association type", func(r *MemoryRecord) {
			r.Associations = []Association{{TargetID: idB, Weight: 0.5}}
		}, CodeValidation, "associations[0].association_type"},
		{"emotion NaN", func(r *MemoryRecord) { r.Emotion.Valence = nan }, CodeValidation, "emotion.valence"},
		{"emotion Inf", func(r *MemoryRecord) { r.Emotion.Joy = math.Inf(1) }, CodeValidation, "emotion.joy"},
		{"meta confidence", func(r *MemoryRecord) { r.Meta.Confidence = ptr(1.5) }, CodeValidation, "meta.confidence"},
		{"meta schema 0", func(r *MemoryRecord) { r.Meta.SchemaVersion = 0 }, CodeValidation, "meta.schema_version"},
		{"meta status unset", func(r *MemoryRecord) { r.Meta.CaptureStatus = 0 }, CodeValidation, "meta.capture_status"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := validRecord()
			tc.edit(&r)
			checkErr(t, r.Validate(), tc.code, tc.field)
		})
	}

	// Things that are deliberately not validated.
	for name, edit := range map[string]func(r *MemoryRecord){
		"emotion out of range": func(r *MemoryRecord) { r.Emotion.Joy = 7; r.Emotion.Valence = -3 },
		"empty format":         func(r *MemoryRecord) { r.Content.Blocks[0].Format = "" },
		"empty text":           func(r *MemoryRecord) { r.Content.Blocks[0].Data = nil },
		"spatial not json": func(r *MemoryRecord) {
			r.Content.Blocks[0].Modality = ModalitySpatial
			r.Content.Blocks[0].Data = Bytes("{")
		},
		"weights at bounds": func(r *MemoryRecord) {
			r.Associations = []Association{{TargetID: idB, AssociationType: AssocTemporal, Weight: 0}, {TargetID: idC, AssociationType: AssocUserDefined, Weight: 1}}
		},
		"working store": func(r *MemoryRecord) { r.Store = StoreWorking },
	} {
		r := validRecord()
		edit(&r)
		if err := r.Validate(); err != nil {
			t.Errorf("%s: rejected: %v", name, err)
		}
	}
}

func TestValidateContentSizeLimits(t *testing.T) {
	// One shared buffer: zero bytes are valid UTF-8, and a '0' followed by
	// spaces is valid JSON, so only the size decides.
	big := make([]byte, MaxAudioBlockBytes+1)
	jsonish := make([]byte, MaxTextBlockBytes+1)
	jsonish[0] = '0'
	for i := 1; i < len(jsonish); i++ {
		jsonish[i] = ' '
	}
	tests := []struct {
		m     Modality
		limit int
	}{
		{ModalityText, 1 << 20},
		{ModalityImage, 10 << 20},
		{ModalityAudio, 50 << 20},
		{ModalityVideo, 50 << 20},
		{ModalityStructured, 1 << 20},
		{ModalitySpatial, 1 << 20},
		{ModalityTemporal, 1 << 20},
		{ModalityInteroceptive, 1 << 20},
	}
	for _, tc := range tests {
		t.Run(tc.m.String(), func(t *testing.T) {
			if got := BlockLimit(tc.m); got != tc.limit {
				t.Fatalf("BlockLimit = %d, want %d", got, tc.limit)
			}
			src := big
			if tc.m == ModalityStructured {
				src = jsonish
			}
			at := MemoryContent{Blocks: []ContentBlock{TextBlock("x"), {Modality: tc.m, Format: "f", Data: src[:tc.limit]}}}
			if err := ValidateContent("content", &at); err != nil {
				t.Errorf("exactly %d bytes rejected: %v", tc.limit, err)
			}
			over := MemoryContent{Blocks: []ContentBlock{TextBlock("x"), {Modality: tc.m, Format: "f", Data: src[:tc.limit+1]}}}
			err := ValidateContent("records[2].content", &over)
			checkErr(t, err, CodeContentTooLarge, "records[2].content.blocks[1].data")
			if !errors.Is(err, ErrContentTooLarge) || errors.Is(err, ErrValidation) {
				t.Errorf("errors.Is mismatch for %v", err)
			}
		})
	}
	// The size check comes before the UTF-8 check: an oversized invalid
	// text block is too large, not invalid.
	bad := make([]byte, MaxTextBlockBytes+1)
	bad[0] = 0xff
	c := MemoryContent{Blocks: []ContentBlock{{Modality: ModalityText, Format: "t", Data: bad}}}
	checkErr(t, ValidateContent("content", &c), CodeContentTooLarge, "content.blocks[0].data")
}

func TestValidateRaw(t *testing.T) {
	if r := validRaw(); r.Validate() != nil {
		t.Fatalf("valid raw rejected: %v", r.Validate())
	}
	long := strings.Repeat("x", MaxLabelBytes+1)
	tests := []struct {
		name  string
		edit  func(r *RawJournalRecord)
		code  Code
		field string
	}{
		{"empty session", func(r *RawJournalRecord) { r.SessionID = "" }, CodeValidation, "session_id"},
		{"blank session", func(r *RawJournalRecord) { r.SessionID = " \t\n " }, CodeValidation, "session_id"},
		{"long session", func(r *RawJournalRecord) { r.SessionID = long }, CodeValidation, "session_id"},
		{"invalid utf8 session", func(r *RawJournalRecord) { r.SessionID = "a\xffb" }, CodeValidation, "session_id"},
		{"long turn", func(r *RawJournalRecord) { r.TurnID = &long }, CodeValidation, "turn_id"},
		{"long topic", func(r *RawJournalRecord) { r.TopicID = &long }, CodeValidation, "topic_id"},
		{"no source", func(r *RawJournalRecord) { r.Source = 0 }, CodeValidation, "source"},
		{"no speaker", func(r *RawJournalRecord) { r.Speaker = 5 }, CodeValidation, "speaker"},
		{"no visibility", func(r *RawJournalRecord) { r.Visibility = 0 }, CodeValidation, "visibility"},
		{"no secrecy", func(r *RawJournalRecord) { r.SecrecyLevel = 4 }, CodeValidation, "secrecy_level"},
		{"no blocks", func(r *RawJournalRecord) { r.Content.Blocks = nil }, CodeValidation, "content.blocks"},
		{"too large", func(r *RawJournalRecord) { r.Content.Blocks[0].Data = make(Bytes, MaxTextBlockBytes+1) }, CodeContentTooLarge, "content.blocks[0].data"},
		{"nil edge target", func(r *RawJournalRecord) {
			r.Meta.ContextEdges = []MetaEdge{{TargetID: ID{}, Relation: RelContextOf}}
		}, CodeValidation, "meta.context_edges[0].target_id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := validRaw()
			tc.edit(&r)
			checkErr(t, r.Validate(), tc.code, tc.field)
		})
	}
	r := validRaw()
	r.SessionID = strings.Repeat("é", MaxLabelBytes/2) // exactly at the limit in bytes
	r.TurnID, r.TopicID = ptr(""), ptr(strings.Repeat("t", MaxLabelBytes))
	if err := r.Validate(); err != nil {
		t.Errorf("labels at the limit rejected: %v", err)
	}
}

func TestValidateMeta(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name  string
		edit  func(m *MetaMemory)
		field string
	}{
		{"confidence negative", func(m *MetaMemory) { m.Confidence = ptr(-0.01) }, "meta.confidence"},
		{"confidence above", func(m *MetaMemory) { m.Confidence = ptr(1.01) }, "meta.confidence"},
		{"confidence NaN", func(m *MetaMemory) { m.Confidence = &nan }, "meta.confidence"},
		{"confidence Inf", func(m *MetaMemory) { m.Confidence = &inf }, "meta.confidence"},
		{"evidence confidence", func(m *MetaMemory) { m.Evidence[0].Confidence = ptr(2.0) }, "meta.evidence[0].confidence"},
		{"evidence NaN", func(m *MetaMemory) { m.Evidence[0].Confidence = &nan }, "meta.evidence[0].confidence"},
		{"edge nil target", func(m *MetaMemory) { m.ContextEdges[0].TargetID = ID{} }, "meta.context_edges[0].target_id"},
		{"edge no relation", func(m *MetaMemory) { m.ContextEdges[0].Relation = 0 }, "meta.context_edges[0].relation"},
		{"edge confidence", func(m *MetaMemory) { m.ContextEdges[0].Confidence = ptr(-1.0) }, "meta.context_edges[0].confidence"},
		{"edge evidence confidence", func(m *MetaMemory) { m.ContextEdges[0].Evidence[0].Confidence = &nan }, "meta.context_edges[0].evidence[0].confidence"},
		{"second edge", func(m *MetaMemory) {
			m.ContextEdges = append(m.ContextEdges, MetaEdge{TargetID: ID{}, Relation: RelExplains})
		}, "meta.context_edges[1].target_id"},
		{"schema 0", func(m *MetaMemory) { m.SchemaVersion = 0 }, "meta.schema_version"},
		{"status unknown", func(m *MetaMemory) { m.CaptureStatus = 9 }, "meta.capture_status"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := fullMeta()
			if err := m.Validate("meta"); err != nil {
				t.Fatalf("full meta rejected: %v", err)
			}
			tc.edit(&m)
			checkErr(t, m.Validate("meta"), CodeValidation, tc.field)
		})
	}
	m := fullMeta()
	m.Confidence, m.Evidence[0].Confidence, m.ContextEdges[0].Confidence = ptr(0.0), ptr(1.0), nil
	if err := m.Validate("meta"); err != nil {
		t.Errorf("confidences at the bounds rejected: %v", err)
	}
}

func TestValidateTemporalRange(t *testing.T) {
	if err := ValidateTemporalRange("temporal", nil); err != nil {
		t.Error(err)
	}
	if err := ValidateTemporalRange("temporal", &TemporalRange{Start: t0, End: t0}); err != nil {
		t.Errorf("empty range rejected: %v", err)
	}
	err := ValidateTemporalRange("cue.temporal", &TemporalRange{Start: t1, End: t0})
	checkErr(t, err, CodeValidation, "cue.temporal")
	if err != nil && err.Error() != "cue.temporal: start 2025-03-01T12:30:15.5Z is after end 2025-03-01T12:00:00Z" {
		t.Errorf("message %q", err)
	}
	r := TemporalRange{Start: t0, End: t1}
	for _, tc := range []struct {
		at   int64
		want bool
	}{{t0.UnixNano() - 1, false}, {t0.UnixNano(), true}, {t1.UnixNano(), true}, {t1.UnixNano() + 1, false}} {
		if got := r.Contains(time.Unix(0, tc.at)); got != tc.want {
			t.Errorf("Contains(%d) = %v", tc.at, got)
		}
	}
}

func TestValidateSessionIDAndEmbedding(t *testing.T) {
	checkErr(t, ValidateSessionID("records[4].session_id", "  "), CodeValidation, "records[4].session_id")
	if err := ValidateSessionID("session_id", " padded "); err != nil {
		t.Errorf("padded id rejected: %v", err)
	}
	if err := ValidateEmbedding("e", nil); err != nil {
		t.Errorf("nil embedding rejected: %v", err)
	}
	if err := ValidateEmbedding("e", make([]float32, MaxEmbeddingDims)); err != nil {
		t.Errorf("embedding at the limit rejected: %v", err)
	}
	checkErr(t, ValidateEmbedding("cue.embedding", []float32{}), CodeValidation, "cue.embedding")
}
