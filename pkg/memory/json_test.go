package memory

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// The golden strings below are the wire contract (reference/interfaces.md
// Appendix A, reference/engine.md §1): field names, field order, null for
// nullable fields, [] for lists, bytes as integer arrays, lowercase enums and
// RFC 3339 UTC timestamps with a Z suffix. They are written by hand from the
// contract, not captured from the code.

var (
	idA = MustParseID("0196a9e2-5c1d-7f00-8a00-0000000000aa")
	idB = MustParseID("0196a9e2-5c1d-7f00-8a00-0000000000bb")
	idC = MustParseID("0196a9e2-5c1d-7f00-8a00-0000000000cc")

	t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	t1 = time.Date(2025, 3, 1, 12, 30, 15, 500_000_000, time.UTC)
	t2 = time.Date(2025, 3, 2, 8, 0, 0, 123_456_789, time.UTC)
)

func ptr[T any](v T) *T { return &v }

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %T: %v", v, err)
	}
	return string(b)
}

func checkGolden(t *testing.T, name string, v any, want string) {
	t.Helper()
	want = compactGolden(t, want)
	if got := marshal(t, v); got != want {
		t.Errorf("%s JSON:\n got %s\nwant %s", name, got, want)
	}
}

// compactGolden strips the layout of a hand-written golden string without
// reordering anything.
func compactGolden(t *testing.T, s string) string {
	t.Helper()
	var sb strings.Builder
	inString := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inString:
			sb.WriteByte(c)
			if c == '\\' && i+1 < len(s) {
				i++
				sb.WriteByte(s[i])
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
			sb.WriteByte(c)
		case c == ' ' || c == '\n' || c == '\t':
		default:
			sb.WriteByte(c)
		}
	}
	if !json.Valid([]byte(sb.String())) {
		t.Fatalf("golden is not valid JSON: %s", sb.String())
	}
	return sb.String()
}

// fullMeta has every meta-memory field set.
func fullMeta() MetaMemory {
	return MetaMemory{
		SchemaVersion: 1,
		CaptureStatus: CaptureProvided,
		Intent:        ptr("remember the deploy"),
		Rationale:     ptr("it broke twice"),
		Trigger:       ptr("encode.store"),
		Goals:         []string{"stable deploys"},
		Evidence: []MetaEvidenceRef{{
			RecordID: &idB, RawRecordID: &idC, Label: ptr("log"), Excerpt: ptr("exit 1"),
			URI: ptr("file:///var/log/deploy"), Confidence: ptr(0.75),
		}},
		Assumptions:     []string{"ci is green"},
		Alternatives:    []MetaAlternative{{Option: "rollback", Reason: ptr("too slow"), Chosen: false}, {Option: "hotfix", Chosen: true}},
		Decision:        ptr("hotfix"),
		Confidence:      ptr(0.5),
		SourceRecordIDs: []ID{idB},
		ParentMetaIDs:   []ID{idC},
		ContextEdges: []MetaEdge{{
			SourceID: &idA, TargetID: idB, Relation: RelCausedBy, Rationale: ptr("same host"),
			Evidence: []MetaEvidenceRef{{Label: ptr("ticket")}}, Confidence: ptr(1.0), CreatedAt: &t1,
		}},
		Tags:       []string{"ops", "deploy"},
		CapturedAt: &t2,
	}
}

const fullMetaJSON = `{
 "schema_version":1,"capture_status":"provided",
 "intent":"remember the deploy","rationale":"it broke twice","trigger":"encode.store",
 "goals":["stable deploys"],
 "evidence":[{"record_id":"0196a9e2-5c1d-7f00-8a00-0000000000bb","raw_record_id":"0196a9e2-5c1d-7f00-8a00-0000000000cc",
   "label":"log","excerpt":"exit 1","uri":"file:///var/log/deploy","confidence":0.75}],
 "assumptions":["ci is green"],
 "alternatives":[{"option":"rollback","reason":"too slow","chosen":false},{"option":"hotfix","reason":null,"chosen":true}],
 "decision":"hotfix","confidence":0.5,
 "source_record_ids":["0196a9e2-5c1d-7f00-8a00-0000000000bb"],
 "parent_meta_ids":["0196a9e2-5c1d-7f00-8a00-0000000000cc"],
 "context_edges":[{"source_id":"0196a9e2-5c1d-7f00-8a00-0000000000aa","target_id":"0196a9e2-5c1d-7f00-8a00-0000000000bb",
   "relation":"caused_by","rationale":"same host",
   "evidence":[{"record_id":null,"raw_record_id":null,"label":"ticket","excerpt":null,"uri":null,"confidence":null}],
   "confidence":1,"created_at":"2025-03-01T12:30:15.5Z"}],
 "tags":["ops","deploy"],
 "captured_at":"2025-03-02T08:00:00.123456789Z"}`

const emptyMetaJSON = `{"schema_version":1,"capture_status":"legacy","intent":null,
 "rationale":"No structured meta-memory was captured for this legacy record.","trigger":null,
 "goals":[],"evidence":[],"assumptions":[],"alternatives":[],"decision":null,"confidence":null,
 "source_record_ids":[],"parent_meta_ids":[],"context_edges":[],"tags":[],"captured_at":null}`

func TestMetaMemoryJSONShape(t *testing.T) {
	checkGolden(t, "full meta", fullMeta(), fullMetaJSON)
	checkGolden(t, "legacy meta", LegacyMeta(), emptyMetaJSON)
	checkGolden(t, "edge without evidence", MetaEdge{TargetID: idA, Relation: RelContextOf},
		`{"source_id":null,"target_id":"0196a9e2-5c1d-7f00-8a00-0000000000aa","relation":"context_of",
		  "rationale":null,"evidence":[],"confidence":null,"created_at":null}`)
}

func TestMemoryRecordJSONShape(t *testing.T) {
	full := MemoryRecord{
		ID: idA, Store: StoreSemantic,
		CreatedAt: t0, UpdatedAt: t1, LastAccessedAt: t2,
		AccessCount: 3,
		Content: MemoryContent{
			Blocks: []ContentBlock{
				{Modality: ModalityText, Format: "text/plain", Data: Bytes("hi"), Embedding: []float32{0.5, -1, 0.25}},
				{Modality: ModalityStructured, Format: "application/json", Data: Bytes(`{}`)},
			},
			Summary: ptr("greeting"),
		},
		Fidelity: FidelityState{Score: 0.9, NoiseLevel: 0.1, DecayRate: 0.5, EmotionalAnchor: 1.5,
			ReinforcementCount: 2, Stability: 30, LastDecayTick: t1, ClockBase: 12345},
		Emotion: EmotionVector{Joy: 0.6, Trust: 0.1, Fear: 0.2, Surprise: 0.3, Sadness: 0.4, Disgust: 0.05,
			Anger: 0.7, Anticipation: 0.8, Intensity: 0.5, Valence: -0.25},
		Associations: []Association{{TargetID: idB, AssociationType: AssocCrossModal, Weight: 0.7, CreatedAt: t0, LastCoActivation: t1, Origin: OriginClient}},
		Metadata:     JSON(`{"src":"chat","n":[1,2]}`),
		Version:      4,
		Meta:         fullMeta(),
	}
	checkGolden(t, "full record", full, `{
	 "id":"0196a9e2-5c1d-7f00-8a00-0000000000aa","store":"semantic",
	 "created_at":"2025-03-01T12:00:00Z","updated_at":"2025-03-01T12:30:15.5Z","last_accessed_at":"2025-03-02T08:00:00.123456789Z",
	 "access_count":3,
	 "content":{"blocks":[
	   {"modality":"text","format":"text/plain","data":[104,105],"embedding":[0.5,-1,0.25]},
	   {"modality":"structured","format":"application/json","data":[123,125],"embedding":null}],
	  "summary":"greeting"},
	 "fidelity":{"score":0.9,"noise_level":0.1,"decay_rate":0.5,"emotional_anchor":1.5,"reinforcement_count":2,
	   "stability":30,"last_decay_tick":"2025-03-01T12:30:15.5Z"},
	 "emotion":{"joy":0.6,"trust":0.1,"fear":0.2,"surprise":0.3,"sadness":0.4,"disgust":0.05,"anger":0.7,
	   "anticipation":0.8,"intensity":0.5,"valence":-0.25},
	 "associations":[{"target_id":"0196a9e2-5c1d-7f00-8a00-0000000000bb","association_type":"cross_modal","weight":0.7,
	   "created_at":"2025-03-01T12:00:00Z","last_co_activation":"2025-03-01T12:30:15.5Z","origin":"client"}],
	 "metadata":{"src":"chat","n":[1,2]},
	 "version":4,
	 "meta":`+fullMetaJSON+`}`)

	minimal := MemoryRecord{
		ID: idA, Store: StoreEpisodic, CreatedAt: t0, UpdatedAt: t0, LastAccessedAt: t0,
		Content:  MemoryContent{Blocks: []ContentBlock{{Modality: ModalityImage, Format: "image/png"}}},
		Fidelity: FidelityState{Score: 1, DecayRate: 0.5, EmotionalAnchor: 1, Stability: 1, LastDecayTick: t0},
		Version:  1,
		Meta:     LegacyMeta(),
	}
	checkGolden(t, "minimal record", minimal, `{
	 "id":"0196a9e2-5c1d-7f00-8a00-0000000000aa","store":"episodic",
	 "created_at":"2025-03-01T12:00:00Z","updated_at":"2025-03-01T12:00:00Z","last_accessed_at":"2025-03-01T12:00:00Z",
	 "access_count":0,
	 "content":{"blocks":[{"modality":"image","format":"image/png","data":[],"embedding":null}],"summary":null},
	 "fidelity":{"score":1,"noise_level":0,"decay_rate":0.5,"emotional_anchor":1,"reinforcement_count":0,
	   "stability":1,"last_decay_tick":"2025-03-01T12:00:00Z"},
	 "emotion":{"joy":0,"trust":0,"fear":0,"surprise":0,"sadness":0,"disgust":0,"anger":0,"anticipation":0,"intensity":0,"valence":0},
	 "associations":[],
	 "metadata":{},
	 "version":1,
	 "meta":`+emptyMetaJSON+`}`)

	// A pointer marshals the same as the value (the engine hands out
	// *MemoryRecord).
	if a, b := marshal(t, &minimal), marshal(t, minimal); a != b {
		t.Errorf("pointer and value marshal differently:\n%s\n%s", a, b)
	}
}

func TestRawJournalRecordJSONShape(t *testing.T) {
	full := RawJournalRecord{
		ID: idA, SessionID: "sess-1", TurnID: ptr("turn-9"), TopicID: ptr("deploys"),
		Source: SourceToolIO, Speaker: SpeakerAssistant, Visibility: VisibilityPrivateScratch, SecrecyLevel: SecrecySensitive,
		CreatedAt: t0, UpdatedAt: t1,
		Content:          TextContent("ok"),
		Metadata:         JSON(`{"_dream":{"processed_at":"2025-03-01T12:30:15.5Z"}}`),
		DerivedMemoryIDs: []ID{idB, idC},
		Suppressed:       true,
		Meta:             fullMeta(),
	}
	checkGolden(t, "full raw", full, `{
	 "id":"0196a9e2-5c1d-7f00-8a00-0000000000aa","session_id":"sess-1","turn_id":"turn-9","topic_id":"deploys",
	 "source":"tool_io","speaker":"assistant","visibility":"private_scratch","secrecy_level":"sensitive",
	 "created_at":"2025-03-01T12:00:00Z","updated_at":"2025-03-01T12:30:15.5Z",
	 "content":{"blocks":[{"modality":"text","format":"text/plain","data":[111,107],"embedding":null}],"summary":null},
	 "metadata":{"_dream":{"processed_at":"2025-03-01T12:30:15.5Z"}},
	 "derived_memory_ids":["0196a9e2-5c1d-7f00-8a00-0000000000bb","0196a9e2-5c1d-7f00-8a00-0000000000cc"],
	 "suppressed":true,
	 "meta":`+fullMetaJSON+`}`)

	minimal := RawJournalRecord{
		ID: idA, SessionID: "s", Source: SourceImported, Speaker: SpeakerTool, Visibility: VisibilitySealed,
		SecrecyLevel: SecrecySecret, CreatedAt: t0, UpdatedAt: t0, Meta: LegacyMeta(),
	}
	checkGolden(t, "minimal raw", minimal, `{
	 "id":"0196a9e2-5c1d-7f00-8a00-0000000000aa","session_id":"s","turn_id":null,"topic_id":null,
	 "source":"imported","speaker":"tool","visibility":"sealed","secrecy_level":"secret",
	 "created_at":"2025-03-01T12:00:00Z","updated_at":"2025-03-01T12:00:00Z",
	 "content":{"blocks":[],"summary":null},
	 "metadata":{},
	 "derived_memory_ids":[],
	 "suppressed":false,
	 "meta":`+emptyMetaJSON+`}`)
}

func TestStatsJSONShape(t *testing.T) {
	full := Stats{
		TotalRecords:           6,
		RecordsByStore:         map[StoreType]uint32{StoreEpisodic: 3, StoreSemantic: 2, StoreProcedural: 1, StoreEmotional: 0, StoreWorking: 0},
		TotalAssociations:      4,
		AvgFidelity:            0.75,
		AvgFidelityByStore:     map[StoreType]float64{StoreEpisodic: 0.5, StoreSemantic: 1},
		RawJournalRecords:      10,
		RawJournalPendingDream: 7,
		VectorIndexRecords:     2,
		VectorSearchBackend:    "brute_force",
		DreamEpisodicSummaries: 1,
		DreamSemanticNodes:     1,
		LastDreamTickAt:        &t1,
		EvolutionMetrics: &EvolutionMetrics{
			ParameterAdjustments: []ParameterAdjustment{{Store: StoreEpisodic, Parameter: "stability", OriginalValue: 1, CurrentValue: 2, Reason: "recalled"}},
			DetectedPatterns:     []string{"p"},
			SchemaAdaptations:    []string{"s"},
		},
		BackgroundDecayEnabled: true,
		BackgroundDreamEnabled: true,
		QuarantinedRecords:     1,
	}
	checkGolden(t, "full stats", full, `{
	 "total_records":6,
	 "records_by_store":{"emotional":0,"episodic":3,"procedural":1,"semantic":2,"working":0},
	 "total_associations":4,"avg_fidelity":0.75,
	 "avg_fidelity_by_store":{"episodic":0.5,"semantic":1},
	 "oldest_record":null,"newest_record":null,"total_recall_count":0,
	 "raw_journal_records":10,"raw_journal_pending_dream":7,"vector_index_records":2,
	 "vector_search_backend":"brute_force","dream_episodic_summaries":1,"dream_semantic_nodes":1,
	 "last_dream_tick_at":"2025-03-01T12:30:15.5Z",
	 "evolution_metrics":{"parameter_adjustments":[{"store":"episodic","parameter":"stability","original_value":1,
	   "current_value":2,"reason":"recalled"}],"detected_patterns":["p"],"schema_adaptations":["s"]},
	 "background_decay_enabled":true,"background_dream_enabled":true,"quarantined_records":1}`)

	// An empty Stats still lists all five stores and never writes null
	// for a map or a list.
	checkGolden(t, "empty stats", Stats{VectorSearchBackend: "brute_force", EvolutionMetrics: &EvolutionMetrics{}}, `{
	 "total_records":0,
	 "records_by_store":{"emotional":0,"episodic":0,"procedural":0,"semantic":0,"working":0},
	 "total_associations":0,"avg_fidelity":0,"avg_fidelity_by_store":{},
	 "oldest_record":null,"newest_record":null,"total_recall_count":0,
	 "raw_journal_records":0,"raw_journal_pending_dream":0,"vector_index_records":0,
	 "vector_search_backend":"brute_force","dream_episodic_summaries":0,"dream_semantic_nodes":0,
	 "last_dream_tick_at":null,
	 "evolution_metrics":{"parameter_adjustments":[],"detected_patterns":[],"schema_adaptations":[]},
	 "background_decay_enabled":false,"background_dream_enabled":false,"quarantined_records":0}`)
}

// minimalRecordJSON is the shape of the record used inside the response
// goldens below.
func minimalRecord() MemoryRecord {
	return MemoryRecord{
		ID: idA, Store: StoreEpisodic, CreatedAt: t0, UpdatedAt: t0, LastAccessedAt: t0,
		Content:  TextContent("a"),
		Fidelity: FidelityState{Score: 1, DecayRate: 0.5, EmotionalAnchor: 1, Stability: 1, LastDecayTick: t0},
		Version:  1, Meta: LegacyMeta(),
	}
}

var minimalRecordJSON = `{"id":"0196a9e2-5c1d-7f00-8a00-0000000000aa","store":"episodic",
 "created_at":"2025-03-01T12:00:00Z","updated_at":"2025-03-01T12:00:00Z","last_accessed_at":"2025-03-01T12:00:00Z",
 "access_count":0,
 "content":{"blocks":[{"modality":"text","format":"text/plain","data":[97],"embedding":null}],"summary":null},
 "fidelity":{"score":1,"noise_level":0,"decay_rate":0.5,"emotional_anchor":1,"reinforcement_count":0,"stability":1,
   "last_decay_tick":"2025-03-01T12:00:00Z"},
 "emotion":{"joy":0,"trust":0,"fear":0,"surprise":0,"sadness":0,"disgust":0,"anger":0,"anticipation":0,"intensity":0,"valence":0},
 "associations":[],"metadata":{},"version":1,"meta":` + emptyMetaJSON + `}`

func TestResponseJSONShapes(t *testing.T) {
	edge := AssocSemantic
	recalled := RecalledMemory{Record: minimalRecord(), RelevanceScore: 0.83, ActivationPath: []ID{idB}, RenderedContent: TextContent("a")}
	recalledJSON := `{"record":` + minimalRecordJSON + `,"relevance_score":0.83,
	 "activation_path":["0196a9e2-5c1d-7f00-8a00-0000000000bb"],
	 "rendered_content":{"blocks":[{"modality":"text","format":"text/plain","data":[97],"embedding":null}],"summary":null}}`
	rawMin := RawJournalRecord{ID: idA, SessionID: "s1", Source: SourceConversation, Speaker: SpeakerUser,
		Visibility: VisibilityNormal, SecrecyLevel: SecrecyPublic, CreatedAt: t0, UpdatedAt: t0,
		Content: TextContent("a"), Meta: LegacyMeta()}
	rawMinJSON := `{"id":"0196a9e2-5c1d-7f00-8a00-0000000000aa","session_id":"s1","turn_id":null,"topic_id":null,
	 "source":"conversation","speaker":"user","visibility":"normal","secrecy_level":"public",
	 "created_at":"2025-03-01T12:00:00Z","updated_at":"2025-03-01T12:00:00Z",
	 "content":{"blocks":[{"modality":"text","format":"text/plain","data":[97],"embedding":null}],"summary":null},
	 "metadata":{},"derived_memory_ids":[],"suppressed":false,"meta":` + emptyMetaJSON + `}`

	tests := []struct {
		name string
		v    any
		want string
	}{
		{"EncodeStoreResponse", EncodeStoreResponse{RecordID: idA, Store: StoreEpisodic, InitialFidelity: 1, AssociationsCreated: 0},
			`{"record_id":"0196a9e2-5c1d-7f00-8a00-0000000000aa","store":"episodic","initial_fidelity":1,"associations_created":0}`},
		{"EncodeBatchResponse", EncodeBatchResponse{Results: []EncodeStoreResponse{{RecordID: idA, Store: StoreWorking, InitialFidelity: 1}}, AssociationsInferred: 2},
			`{"results":[{"record_id":"0196a9e2-5c1d-7f00-8a00-0000000000aa","store":"working","initial_fidelity":1,"associations_created":0}],"associations_inferred":2}`},
		{"EncodeBatchResponse empty", EncodeBatchResponse{}, `{"results":[],"associations_inferred":0}`},
		{"EncodeStoreRawResponse", EncodeStoreRawResponse{RecordID: idA, SessionID: "s1", Visibility: VisibilityNormal, SecrecyLevel: SecrecyPublic},
			`{"record_id":"0196a9e2-5c1d-7f00-8a00-0000000000aa","session_id":"s1","visibility":"normal","secrecy_level":"public","duplicate":false}`},
		{"EncodeBatchStoreRawResponse empty", EncodeBatchStoreRawResponse{}, `{"results":[]}`},
		{"RecallQueryResponse", RecallQueryResponse{
			Memories: []RecalledMemory{recalled},
			ActivationTrace: &ActivationTrace{SourceID: idA, Activations: []Activation{
				{RecordID: idB, ActivationLevel: 0.5, Hop: 1, EdgeType: &edge},
				{RecordID: idC, ActivationLevel: 0.25, Hop: 2}}},
			TotalCandidates: 1,
			QueryMetadata:   &QueryMetadata{TotalRecordsScanned: 12, StoresSearched: []StoreType{StoreEpisodic, StoreSemantic}, FidelityFiltered: 3},
		}, `{"memories":[` + recalledJSON + `],
		 "activation_trace":{"source_id":"0196a9e2-5c1d-7f00-8a00-0000000000aa","activations":[
		   {"record_id":"0196a9e2-5c1d-7f00-8a00-0000000000bb","activation_level":0.5,"hop":1,"edge_type":"semantic"},
		   {"record_id":"0196a9e2-5c1d-7f00-8a00-0000000000cc","activation_level":0.25,"hop":2,"edge_type":null}]},
		 "total_candidates":1,
		 "query_metadata":{"total_records_scanned":12,"stores_searched":["episodic","semantic"],"fidelity_filtered":3}}`},
		// Content without blocks still shows [], in the record and rendered.
		{"RecallQueryResponse without blocks", RecallQueryResponse{Memories: []RecalledMemory{{Record: MemoryRecord{ID: idA, Store: StoreEpisodic, Meta: LegacyMeta()}}}},
			`{"memories":[{"record":{"id":"0196a9e2-5c1d-7f00-8a00-0000000000aa","store":"episodic",
			   "created_at":"0001-01-01T00:00:00Z","updated_at":"0001-01-01T00:00:00Z","last_accessed_at":"0001-01-01T00:00:00Z",
			   "access_count":0,"content":{"blocks":[],"summary":null},
			   "fidelity":{"score":0,"noise_level":0,"decay_rate":0,"emotional_anchor":0,"reinforcement_count":0,"stability":0,
			     "last_decay_tick":"0001-01-01T00:00:00Z"},
			   "emotion":{"joy":0,"trust":0,"fear":0,"surprise":0,"sadness":0,"disgust":0,"anger":0,"anticipation":0,"intensity":0,"valence":0},
			   "associations":[],"metadata":{},"version":0,"meta":` + emptyMetaJSON + `},
			 "relevance_score":0,"activation_path":null,"rendered_content":{"blocks":[],"summary":null}}],
			 "activation_trace":null,"total_candidates":0}`},
		// query_metadata is left out (not null) when absent.
		{"RecallQueryResponse empty", RecallQueryResponse{}, `{"memories":[],"activation_trace":null,"total_candidates":0}`},
		{"RecalledMemory without path", RecalledMemory{Record: minimalRecord(), RenderedContent: TextContent("a")},
			`{"record":` + minimalRecordJSON + `,"relevance_score":0,"activation_path":null,
			 "rendered_content":{"blocks":[{"modality":"text","format":"text/plain","data":[97],"embedding":null}],"summary":null}}`},
		{"QueryMetadata empty", QueryMetadata{}, `{"total_records_scanned":0,"stores_searched":[],"fidelity_filtered":0}`},
		{"ActivationTrace empty", ActivationTrace{SourceID: idA}, `{"source_id":"0196a9e2-5c1d-7f00-8a00-0000000000aa","activations":[]}`},
		{"RecallRawQueryResponse", RecallRawQueryResponse{Records: []RawJournalRecord{rawMin}, TotalCandidates: 4},
			`{"records":[` + rawMinJSON + `],"total_candidates":4}`},
		// limit 0 answers an empty array, never null (the recorder's probe).
		{"RecallRawQueryResponse empty", RecallRawQueryResponse{TotalCandidates: 3}, `{"records":[],"total_candidates":3}`},
		{"RecallAssociateResponse empty", RecallAssociateResponse{}, `{"memories":[],"total_candidates":0}`},
		{"RecallAssociateResponse", RecallAssociateResponse{Memories: []RecalledMemory{recalled, recalled}, TotalCandidates: 7},
			`{"memories":[` + recalledJSON + `,` + recalledJSON + `],"total_candidates":7}`},
		{"RecallTimelineResponse with memories", RecallTimelineResponse{Buckets: []TimelineBucket{
			{Start: t0, End: t1, Memories: []RecalledMemory{recalled}, Count: 1}, {Start: t1, End: t1, Count: 0}}},
			`{"buckets":[{"start":"2025-03-01T12:00:00Z","end":"2025-03-01T12:30:15.5Z","memories":[` + recalledJSON + `],"count":1},
			 {"start":"2025-03-01T12:30:15.5Z","end":"2025-03-01T12:30:15.5Z","memories":[],"count":0}]}`},
		{"RecallTimelineResponse empty", RecallTimelineResponse{}, `{"buckets":[]}`},
		{"RecallTimelineResponse truncated", RecallTimelineResponse{Truncated: true}, `{"buckets":[],"truncated":true}`},
		{"RecallTimelineResponse", RecallTimelineResponse{Buckets: []TimelineBucket{{Start: t0, End: t1, Count: 0}}},
			`{"buckets":[{"start":"2025-03-01T12:00:00Z","end":"2025-03-01T12:30:15.5Z","memories":[],"count":0}]}`},
		{"RecallGraphResponse", RecallGraphResponse{
			Nodes: []GraphNode{{ID: idA, Store: StoreSemantic, Summary: ptr("s"), Fidelity: 0.5},
				{ID: idB, Store: StoreEpisodic, Fidelity: 1, Meta: ptr(LegacyMeta())}},
			Edges:      []GraphEdge{{Source: idA, Target: idB, EdgeType: AssocUserDefined, Weight: 0.3}},
			TotalNodes: 2,
			MetaEdges:  []MetaEdge{{TargetID: idC, Relation: RelSupports}},
		}, `{"nodes":[{"id":"0196a9e2-5c1d-7f00-8a00-0000000000aa","store":"semantic","summary":"s","fidelity":0.5},
		   {"id":"0196a9e2-5c1d-7f00-8a00-0000000000bb","store":"episodic","summary":null,"fidelity":1,"meta":` + emptyMetaJSON + `}],
		  "edges":[{"source":"0196a9e2-5c1d-7f00-8a00-0000000000aa","target":"0196a9e2-5c1d-7f00-8a00-0000000000bb","edge_type":"user_defined","weight":0.3}],
		  "total_nodes":2,
		  "meta_edges":[{"source_id":null,"target_id":"0196a9e2-5c1d-7f00-8a00-0000000000cc","relation":"supports","rationale":null,
		    "evidence":[],"confidence":null,"created_at":null}]}`},
		{"RecallGraphResponse empty", RecallGraphResponse{}, `{"nodes":[],"edges":[],"total_nodes":0,"meta_edges":[]}`},
		{"ConsolidateResponse", ConsolidateResponse{RecordsProcessed: 5, RecordsMigrated: 4, RecordsCompressed: 3, RecordsPruned: 2, SemanticNodesCreated: 1},
			`{"records_processed":5,"records_migrated":4,"records_compressed":3,"records_pruned":2,"semantic_nodes_created":1}`},
		{"DreamTickResponse", DreamTickResponse{GroupsProcessed: 1, RawRecordsProcessed: 2, EpisodicSummariesCreated: 3, SemanticNodesCreated: 4},
			`{"groups_processed":1,"raw_records_processed":2,"episodic_summaries_created":3,"semantic_nodes_created":4}`},
		{"DecayTickResponse", DecayTickResponse{RecordsUpdated: 9, RecordsBelowThreshold: 8, RecordsPruned: 7},
			`{"records_updated":9,"records_below_threshold":8,"records_pruned":7}`},
		{"ForgetResponse", ForgetResponse{RecordsDeleted: 3}, `{"records_deleted":3}`},
		{"ExportResponse", ExportResponse{ArchiveID: "a1", SizeBytes: 2048, RecordCount: 3, Checksum: "ab"},
			`{"archive_id":"a1","size_bytes":2048,"record_count":3,"checksum":"ab"}`},
		{"ImportResponse", ImportResponse{RecordsImported: 2, RecordsSkipped: 3, RawConflicts: 1}, `{"records_imported":2,"records_skipped":3,"raw_conflicts":1}`},
		{"DecayForecastResponse", DecayForecastResponse{Forecasts: []DecayForecast{
			{RecordID: idA, CurrentFidelity: 1, ForecastedFidelity: 0.5, EstimatedThresholdDate: &t2},
			{RecordID: idB, CurrentFidelity: 0.5, ForecastedFidelity: 0.25}}},
			`{"forecasts":[{"record_id":"0196a9e2-5c1d-7f00-8a00-0000000000aa","current_fidelity":1,"forecasted_fidelity":0.5,
			   "estimated_threshold_date":"2025-03-02T08:00:00.123456789Z"},
			  {"record_id":"0196a9e2-5c1d-7f00-8a00-0000000000bb","current_fidelity":0.5,"forecasted_fidelity":0.25,
			   "estimated_threshold_date":null}]}`},
		{"DecayForecastResponse empty", DecayForecastResponse{}, `{"forecasts":[]}`},
		{"EvolutionMetrics empty", EvolutionMetrics{}, `{"parameter_adjustments":[],"detected_patterns":[],"schema_adaptations":[]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkGolden(t, tc.name, tc.v, tc.want) })
	}
}

// Requests are marshalled by pkg/client, so their shape matters too: a nil
// nullable field must go out as null, never as an empty value the server
// would act on.
func TestRequestJSONShapes(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		// An update that leaves metadata alone must not send {} (which
		// replaces the stored metadata wholesale).
		{"EncodeUpdateRequest content only", EncodeUpdateRequest{RecordID: idA, Content: ptr(TextContent("a"))},
			`{"header":null,"record_id":"0196a9e2-5c1d-7f00-8a00-0000000000aa",
			  "content":{"blocks":[{"modality":"text","format":"text/plain","data":[97],"embedding":null}],"summary":null},
			  "emotion":null,"metadata":null,"meta":null}`},
		{"EncodeUpdateRequest metadata", EncodeUpdateRequest{RecordID: idA, Metadata: JSON(`{"k":1}`)},
			`{"header":null,"record_id":"0196a9e2-5c1d-7f00-8a00-0000000000aa","content":null,"emotion":null,"metadata":{"k":1},"meta":null}`},
		// A cue without an image must not send an empty image (which the
		// server rejects as an empty image cue).
		{"RecallCue text", RecallCue{Text: ptr("deploy")},
			`{"text":"deploy","image":null,"audio":null,"emotion":null,"temporal":null,"spatial":null,"semantic":null,"embedding":null}`},
		{"RecallCue image", RecallCue{Image: Bytes{1, 2}, Audio: Bytes{}, Embedding: []float32{1}},
			`{"text":null,"image":[1,2],"audio":[],"emotion":null,"temporal":null,"spatial":null,"semantic":null,"embedding":[1]}`},
		{"ImportRequest without data", ImportRequest{ArchiveID: "x", Strategy: ImportReplace, ConflictResolution: KeepImported},
			`{"header":null,"archive_id":"x","strategy":"replace","conflict_resolution":"keep_imported","decryption_key":null,"archive_data":null}`},
		{"ImportRequest with data", ImportRequest{ArchiveID: "x", Strategy: ImportMerge, ConflictResolution: KeepNewer, ArchiveData: Bytes{0, 255}},
			`{"header":null,"archive_id":"x","strategy":"merge","conflict_resolution":"keep_newer","decryption_key":null,"archive_data":[0,255]}`},
		{"RecallRawQueryRequest default", DefaultRecallRawQueryRequest(),
			`{"header":null,"session_id":null,"query":null,"temporal":null,"limit":10,"include_private_scratch":false,
			  "include_sealed":false,"secrecy_levels":null}`},
		{"RecallRawQueryRequest no levels", RecallRawQueryRequest{SecrecyLevels: []SecrecyLevel{}, Temporal: &TemporalRange{Start: t0, End: t1}},
			`{"header":null,"session_id":null,"query":null,"temporal":{"start":"2025-03-01T12:00:00Z","end":"2025-03-01T12:30:15.5Z"},
			  "limit":0,"include_private_scratch":false,"include_sealed":false,"secrecy_levels":[]}`},
		{"CMPHeader", CMPHeader{Protocol: "cmp", Version: "1.0", RequestID: idA, Timestamp: t0},
			`{"protocol":"cmp","version":"1.0","request_id":"0196a9e2-5c1d-7f00-8a00-0000000000aa","timestamp":"2025-03-01T12:00:00Z"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkGolden(t, tc.name, tc.v, tc.want) })
	}
}

// The request types that pkg/client sends must come back unchanged through
// the server's decoder.
func TestRequestRoundTrip(t *testing.T) {
	upd := EncodeUpdateRequest{RecordID: idA, Content: ptr(TextContent("a"))}
	var gotUpd EncodeUpdateRequest
	if err := json.Unmarshal([]byte(marshal(t, upd)), &gotUpd); err != nil {
		t.Fatal(err)
	}
	if gotUpd.Metadata != nil || gotUpd.Emotion != nil || gotUpd.Meta != nil || gotUpd.Content == nil {
		t.Errorf("update round trip changed the nullable fields: %+v", gotUpd)
	}

	cue := RecallQueryRequest{Cue: RecallCue{Text: ptr("x")}, Limit: 3}
	var gotCue RecallQueryRequest
	if err := json.Unmarshal([]byte(marshal(t, cue)), &gotCue); err != nil {
		t.Fatal(err)
	}
	if gotCue.Cue.Image != nil || gotCue.Cue.Audio != nil || gotCue.Cue.Embedding != nil || gotCue.Limit != 3 {
		t.Errorf("recall round trip: image %v audio %v embedding %v limit %d", gotCue.Cue.Image, gotCue.Cue.Audio, gotCue.Cue.Embedding, gotCue.Limit)
	}

	for _, levels := range [][]SecrecyLevel{nil, {}, {SecrecySecret}} {
		var got RecallRawQueryRequest
		if err := json.Unmarshal([]byte(marshal(t, RecallRawQueryRequest{SecrecyLevels: levels})), &got); err != nil {
			t.Fatal(err)
		}
		if (got.SecrecyLevels == nil) != (levels == nil) || len(got.SecrecyLevels) != len(levels) {
			t.Errorf("secrecy levels %#v came back as %#v", levels, got.SecrecyLevels)
		}
	}
}

func TestEnumWireSpellings(t *testing.T) {
	tests := []struct {
		name string
		vals []interface{ MarshalText() ([]byte, error) }
		want string
	}{
		{"StoreType", []interface{ MarshalText() ([]byte, error) }{StoreEpisodic, StoreSemantic, StoreProcedural, StoreEmotional, StoreWorking},
			"episodic semantic procedural emotional working"},
		{"Modality", []interface{ MarshalText() ([]byte, error) }{ModalityText, ModalityImage, ModalityAudio, ModalityVideo, ModalityStructured, ModalitySpatial, ModalityTemporal, ModalityInteroceptive},
			"text image audio video structured spatial temporal interoceptive"},
		{"AssociationType", []interface{ MarshalText() ([]byte, error) }{AssocTemporal, AssocSpatial, AssocSemantic, AssocEmotional, AssocCausal, AssocSequential, AssocCrossModal, AssocUserDefined},
			"temporal spatial semantic emotional causal sequential cross_modal user_defined"},
		{"RecallMode", []interface{ MarshalText() ([]byte, error) }{ModeHuman, ModePerfect}, "human perfect"},
		{"TimeGranularity", []interface{ MarshalText() ([]byte, error) }{GranularityMinute, GranularityHour, GranularityDay, GranularityWeek, GranularityMonth},
			"minute hour day week month"},
		{"ConsolidationStrategy", []interface{ MarshalText() ([]byte, error) }{ConsolidateFull, ConsolidateIncremental, ConsolidateSelective}, "full incremental selective"},
		{"ImportStrategy", []interface{ MarshalText() ([]byte, error) }{ImportMerge, ImportReplace}, "merge replace"},
		{"ConflictResolution", []interface{ MarshalText() ([]byte, error) }{KeepExisting, KeepImported, KeepNewer}, "keep_existing keep_imported keep_newer"},
		{"RawSource", []interface{ MarshalText() ([]byte, error) }{SourceConversation, SourceToolIO, SourceScratchpad, SourceSummary, SourceImported},
			"conversation tool_io scratchpad summary imported"},
		{"RawSpeaker", []interface{ MarshalText() ([]byte, error) }{SpeakerUser, SpeakerAssistant, SpeakerSystem, SpeakerTool}, "user assistant system tool"},
		{"Visibility", []interface{ MarshalText() ([]byte, error) }{VisibilityNormal, VisibilityPrivateScratch, VisibilitySealed}, "normal private_scratch sealed"},
		{"SecrecyLevel", []interface{ MarshalText() ([]byte, error) }{SecrecyPublic, SecrecySensitive, SecrecySecret}, "public sensitive secret"},
		{"MetaCaptureStatus", []interface{ MarshalText() ([]byte, error) }{CaptureProvided, CaptureInferred, CaptureLegacy, CaptureUnavailable}, "provided inferred legacy unavailable"},
		{"MetaRelation", []interface{ MarshalText() ([]byte, error) }{RelMotivatedBy, RelCausedBy, RelDerivedFrom, RelSupports, RelContradicts, RelChoseOver, RelExplains, RelContextOf},
			"motivated_by caused_by derived_from supports contradicts chose_over explains context_of"},
	}
	for _, tc := range tests {
		var got []string
		for _, v := range tc.vals {
			b, err := v.MarshalText()
			if err != nil {
				t.Fatalf("%s %v: %v", tc.name, v, err)
			}
			got = append(got, string(b))
			// The JSON form is the same string, quoted.
			if j := marshal(t, v); j != `"`+string(b)+`"` {
				t.Errorf("%s JSON = %s", tc.name, j)
			}
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("%s spellings = %q, want %q", tc.name, g, tc.want)
		}
	}

	// The zero value is "unset" and cannot be written.
	if _, err := json.Marshal(EncodeStoreResponse{RecordID: idA}); err == nil {
		t.Error("marshalling an unset store succeeded")
	}
}

func TestErrorCodeSpellings(t *testing.T) {
	want := "RECORD_NOT_FOUND STORE_INVALID CONTENT_TOO_LARGE VALIDATION_ERROR MODALITY_UNSUPPORTED WORKING_MEMORY_FULL " +
		"DECAY_ENGINE_BUSY CONSOLIDATION_IN_PROGRESS EXPORT_FAILED IMPORT_CONFLICT FORGET_UNCONFIRMED VERSION_MISMATCH " +
		"UNAUTHORIZED RATE_LIMITED INTERNAL_ERROR INSUFFICIENT_STORAGE FORBIDDEN"
	var got []string
	for _, c := range Codes() {
		got = append(got, string(c))
	}
	if g := strings.Join(got, " "); g != want {
		t.Errorf("codes = %s\nwant    %s", g, want)
	}
}

func TestTimestampsAreUTC(t *testing.T) {
	// Records written by the engine and read from the store are UTC; the
	// presets that stamp the time themselves must convert.
	zone := time.FixedZone("CEST", 2*3600)
	local := time.Date(2025, 3, 1, 14, 0, 0, 0, zone)
	m := UnavailableMeta(TriggerEncodeStore, local)
	if got := marshal(t, m.CapturedAt); got != `"2025-03-01T12:00:00Z"` {
		t.Errorf("unavailable captured_at = %s", got)
	}
	n := NormalizeMeta(&MetaMemory{SchemaVersion: 1, CaptureStatus: CaptureLegacy}, TriggerEncodeStore, local)
	if got := marshal(t, n.CapturedAt); got != `"2025-03-01T12:00:00Z"` {
		t.Errorf("normalised captured_at = %s", got)
	}
	inf := InferredMeta(TriggerDreamTick, "r", nil, local)
	if got := marshal(t, inf.CapturedAt); got != `"2025-03-01T12:00:00Z"` {
		t.Errorf("inferred captured_at = %s", got)
	}
}

// pkg/client decodes what the server encodes: every response type must come
// back as it went out (ClockBase is engine state and is not on the wire).
func TestResponseJSONRoundTrip(t *testing.T) {
	rec := minimalRecord()
	rec.Content.Summary = ptr("")
	rec.Meta = fullMeta()
	rec.Associations = []Association{{TargetID: idB, AssociationType: AssocCausal, Weight: 0.5, CreatedAt: t1, LastCoActivation: t2}}
	rec.Metadata = JSON(`{"a":[1,{"b":null}]}`)
	raw := RawJournalRecord{ID: idA, SessionID: "s", TurnID: ptr(""), Source: SourceScratchpad, Speaker: SpeakerSystem,
		Visibility: VisibilityNormal, SecrecyLevel: SecrecySensitive, CreatedAt: t0, UpdatedAt: t2,
		Content:  MemoryContent{Blocks: []ContentBlock{{Modality: ModalityAudio, Format: "a", Data: Bytes{0, 255}, Embedding: []float32{0.25}}}},
		Metadata: JSON(`{"n":1}`), DerivedMemoryIDs: []ID{idC}, Meta: fullMeta()}
	edge := AssocTemporal
	tests := []struct {
		name string
		in   any
		out  any
	}{
		{"MemoryRecord", &rec, new(MemoryRecord)},
		{"RawJournalRecord", &raw, new(RawJournalRecord)},
		{"RecallQueryResponse", &RecallQueryResponse{
			Memories:        []RecalledMemory{{Record: rec, RelevanceScore: 0.5, ActivationPath: []ID{idA}, RenderedContent: rec.Content}},
			ActivationTrace: &ActivationTrace{SourceID: idA, Activations: []Activation{{RecordID: idB, ActivationLevel: 1, Hop: 1, EdgeType: &edge}}},
			TotalCandidates: 1,
			QueryMetadata:   &QueryMetadata{TotalRecordsScanned: 1, StoresSearched: []StoreType{StoreWorking}},
		}, new(RecallQueryResponse)},
		{"RecallRawQueryResponse", &RecallRawQueryResponse{Records: []RawJournalRecord{raw}, TotalCandidates: 9}, new(RecallRawQueryResponse)},
		{"Stats", &Stats{
			TotalRecords:       3,
			RecordsByStore:     map[StoreType]uint32{StoreEpisodic: 1, StoreSemantic: 2, StoreProcedural: 0, StoreEmotional: 0, StoreWorking: 0},
			AvgFidelityByStore: map[StoreType]float64{StoreSemantic: 0.5},
			LastDreamTickAt:    &t2, VectorSearchBackend: "brute_force",
			EvolutionMetrics: &EvolutionMetrics{ParameterAdjustments: []ParameterAdjustment{{Store: StoreSemantic, Parameter: "p", Reason: "r"}},
				DetectedPatterns: []string{}, SchemaAdaptations: []string{}},
		}, new(Stats)},
		{"EncodeBatchStoreRawResponse", &EncodeBatchStoreRawResponse{Results: []EncodeStoreRawResponse{{RecordID: idA, SessionID: "s",
			Visibility: VisibilitySealed, SecrecyLevel: SecrecySecret, Duplicate: true}}}, new(EncodeBatchStoreRawResponse)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			enc := marshal(t, tc.in)
			if err := json.Unmarshal([]byte(enc), tc.out); err != nil {
				t.Fatalf("decode: %v", err)
			}
			if again := marshal(t, tc.out); again != enc {
				t.Errorf("round trip changed the JSON:\n got %s\nwant %s", again, enc)
			}
		})
	}
}
