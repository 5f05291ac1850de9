package store

import (
	"fmt"
	"math"
	"strings"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// Record builders shared by the codec, store, crash and benchmark tests.

func ptr[T any](v T) *T { return &v }

var (
	idA = memory.MustParseID("0196a9e2-5c1d-7f00-8a00-0000000000aa")
	idB = memory.MustParseID("0196a9e2-5c1d-7f00-8a00-0000000000bb")
	idC = memory.MustParseID("0196a9e2-5c1d-7f00-8a00-0000000000cc")

	tBase = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
)

// fullMeta sets every meta-memory field, including every nested pointer.
func fullMeta() memory.MetaMemory {
	captured := tBase.Add(90 * time.Minute)
	edgeAt := time.Date(1969, 7, 20, 20, 17, 40, 999_999_999, time.UTC) // before the epoch
	return memory.MetaMemory{
		SchemaVersion: 2,
		CaptureStatus: memory.CaptureInferred,
		Intent:        ptr("keep deploys safe"),
		Rationale:     ptr(""), // empty, not null
		Trigger:       ptr("lifecycle.dream_tick"),
		Goals:         []string{"g1", ""},
		Evidence: []memory.MetaEvidenceRef{
			{RecordID: &idA, RawRecordID: &idB, Label: ptr("l"), Excerpt: ptr("ex"), URI: ptr("https://x/y"), Confidence: ptr(0.25)},
			{}, // every pointer nil
		},
		Assumptions: []string{"a1"},
		Alternatives: []memory.MetaAlternative{
			{Option: "o1", Reason: ptr("r1"), Chosen: true},
			{Option: "", Reason: nil, Chosen: false},
		},
		Decision:        ptr("d"),
		Confidence:      ptr(1.0),
		SourceRecordIDs: []memory.ID{idA, idB},
		ParentMetaIDs:   []memory.ID{idC},
		ContextEdges: []memory.MetaEdge{
			{SourceID: &idA, TargetID: idB, Relation: memory.RelChoseOver, Rationale: ptr("why"),
				Evidence:   []memory.MetaEvidenceRef{{Label: ptr("inner"), Confidence: ptr(0.5)}},
				Confidence: ptr(0.0), CreatedAt: &edgeAt},
			{TargetID: idC, Relation: memory.RelContextOf},
		},
		Tags:       []string{"t1", "t2"},
		CapturedAt: &captured,
	}
}

// fullRecord sets every field of a curated record to a non-zero value.
func fullRecord() *memory.MemoryRecord {
	return &memory.MemoryRecord{
		ID:             idA,
		Store:          memory.StoreProcedural,
		CreatedAt:      tBase,
		UpdatedAt:      tBase.Add(time.Nanosecond),
		LastAccessedAt: tBase.Add(36*time.Hour + 123456789),
		AccessCount:    math.MaxUint32,
		Content: memory.MemoryContent{
			Blocks: []memory.ContentBlock{
				{Modality: memory.ModalityText, Format: "text/plain", Data: memory.Bytes("héllo wörld"), Embedding: []float32{0.5, -1.25, float32(math.SmallestNonzeroFloat32), math.MaxFloat32}},
				{Modality: memory.ModalityImage, Format: "image/png", Data: memory.Bytes{0, 1, 2, 255}},
				{Modality: memory.ModalityStructured, Format: "", Data: memory.Bytes{}, Embedding: []float32{}},
			},
			Summary: ptr("summary"),
		},
		Fidelity: memory.FidelityState{
			Score: 0.71, NoiseLevel: 0.29, DecayRate: 0.5, EmotionalAnchor: 2.2,
			ReinforcementCount: 7, Stability: 8.5, LastDecayTick: tBase.Add(-time.Hour), ClockBase: 98765.4321,
		},
		Emotion: memory.EmotionVector{Joy: 0.1, Trust: 0.2, Fear: 0.3, Surprise: 0.4, Sadness: 0.5, Disgust: 0.6,
			Anger: 0.7, Anticipation: 0.8, Intensity: 0.9, Valence: -1},
		Associations: []memory.Association{
			{TargetID: idB, AssociationType: memory.AssocSequential, Weight: 0.7, CreatedAt: tBase, LastCoActivation: tBase.Add(time.Minute), Origin: memory.OriginClient},
			{TargetID: idC, AssociationType: memory.AssocUserDefined, Weight: 0, CreatedAt: time.Unix(-1, 5).UTC(), LastCoActivation: time.Time{}},
			{TargetID: idA, AssociationType: memory.AssocSemantic, Weight: 0.9, CreatedAt: tBase, LastCoActivation: tBase, Origin: memory.OriginSimilarity},
		},
		Metadata: memory.JSON(`{"_context":{"source":"chat","session_id":null},"k":[1,2,3]}`),
		Version:  42,
		Meta:     fullMeta(),
	}
}

// minimalRecord leaves every optional field at its zero value.
func minimalRecord() *memory.MemoryRecord {
	return &memory.MemoryRecord{
		ID:      idB,
		Store:   memory.StoreEpisodic,
		Content: memory.MemoryContent{Blocks: []memory.ContentBlock{{Modality: memory.ModalityText, Format: "text/plain", Data: memory.Bytes("x")}}},
	}
}

func fullRaw() *memory.RawJournalRecord {
	return &memory.RawJournalRecord{
		ID:               idC,
		SessionID:        "  session with spaces ünïcode  ",
		TurnID:           ptr(""),
		TopicID:          ptr("topic"),
		Source:           memory.SourceToolIO,
		Speaker:          memory.SpeakerTool,
		Visibility:       memory.VisibilitySealed,
		SecrecyLevel:     memory.SecrecySecret,
		CreatedAt:        tBase,
		UpdatedAt:        tBase.Add(999 * time.Millisecond),
		Content:          memory.MemoryContent{Blocks: []memory.ContentBlock{{Modality: memory.ModalityAudio, Format: "audio/wav", Data: memory.Bytes{9, 8, 7}, Embedding: []float32{1}}}, Summary: ptr("")},
		Metadata:         memory.JSON(`{"_dream":{"processed_at":"2025-03-01T12:00:00Z"}}`),
		DerivedMemoryIDs: []memory.ID{idA, idB},
		Suppressed:       true,
		Meta:             fullMeta(),
	}
}

func minimalRaw() *memory.RawJournalRecord {
	return &memory.RawJournalRecord{
		ID:        idA,
		SessionID: "s",
		Content:   memory.MemoryContent{Blocks: []memory.ContentBlock{{Modality: memory.ModalityText, Format: "text/plain", Data: memory.Bytes("y")}}},
	}
}

// realisticRecord is a 1 KiB text record with a 384-dimensional embedding,
// the shape the benchmarks and the crash test use.
func realisticRecord(i int, id memory.ID) *memory.MemoryRecord {
	text := fmt.Sprintf("record %d: ", i) + strings.Repeat("the quick brown fox jumps over the lazy dog. ", 24)
	emb := make([]float32, 384)
	for j := range emb {
		emb[j] = float32(math.Sin(float64(i*384+j))) / 2
	}
	at := tBase.Add(time.Duration(i) * time.Second)
	return &memory.MemoryRecord{
		ID: id, Store: memory.PersistentStores()[i%len(memory.PersistentStores())],
		CreatedAt: at, UpdatedAt: at, LastAccessedAt: at, AccessCount: uint32(i % 5),
		Content: memory.MemoryContent{Blocks: []memory.ContentBlock{
			{Modality: memory.ModalityText, Format: "text/plain", Data: memory.Bytes(text[:1024]), Embedding: emb},
		}},
		Fidelity: memory.FidelityState{Score: 1, DecayRate: 0.5, EmotionalAnchor: 1 + float64(i%3), Stability: 1, LastDecayTick: at, ClockBase: float64(i)},
		Emotion:  memory.EmotionVector{Joy: float64(i%10) / 10, Intensity: 0.5},
		Associations: []memory.Association{
			{TargetID: idA, AssociationType: memory.AssocSemantic, Weight: 0.5, CreatedAt: at, LastCoActivation: at},
		},
		Metadata: memory.JSON(fmt.Sprintf(`{"_context":{"source":"bench","session_id":"s%d","spatial":null,"temporal":null}}`, i%7)),
		Version:  1,
		Meta:     memory.UnavailableMeta(memory.TriggerEncodeStore, at),
	}
}

func realisticRaw(i int, id memory.ID) *memory.RawJournalRecord {
	at := tBase.Add(time.Duration(i) * time.Second)
	return &memory.RawJournalRecord{
		ID: id, SessionID: fmt.Sprintf("session-%d", i%3), TurnID: ptr(fmt.Sprint(i)),
		Source: memory.SourceConversation, Speaker: memory.SpeakerAssistant,
		Visibility: memory.Visibility(i%3 + 1), SecrecyLevel: memory.SecrecyLevel(i%3 + 1),
		CreatedAt: at, UpdatedAt: at,
		Content:  memory.TextContent(fmt.Sprintf("raw entry %d ", i) + strings.Repeat("lorem ipsum ", i%50)),
		Metadata: memory.JSON(fmt.Sprintf(`{"n":%d}`, i)),
		Meta:     memory.UnavailableMeta(memory.TriggerEncodeStoreRaw, at),
	}
}
