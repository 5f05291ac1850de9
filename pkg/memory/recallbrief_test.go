package memory

import (
	"encoding/json"
	"testing"
	"time"
)

// TestRecallBriefShape pins the brief recall answer: the fields it keeps,
// in order, a record's text as MemoryContent.Text finds it (no block when
// there is none), [] for no memories and no query_metadata when absent.
func TestRecallBriefShape(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 5, time.UTC)
	text := "a \"quoted\" <tag> & é\n\u2028"
	rec := MemoryRecord{ID: MustParseID("0196a7f0-0000-7000-8000-000000000001"), Store: StoreSemantic, CreatedAt: at, UpdatedAt: at, LastAccessedAt: at,
		AccessCount: 4, Version: 2, Fidelity: FidelityState{Score: 0.75, Stability: 2}, Emotion: EmotionVector{Joy: 0.5, Valence: -0.25},
		Content: MemoryContent{Blocks: []ContentBlock{
			{Modality: ModalityImage, Data: []byte("png")},
			{Modality: ModalityText, Data: []byte{0xff, 'x'}},
			{Modality: ModalityText, Format: "text/plain", Data: []byte(text), Embedding: []float32{1}},
		}},
		Meta: UnavailableMeta(TriggerEncodeStore, at)}
	noText := rec
	noText.Content = MemoryContent{Blocks: []ContentBlock{{Modality: ModalityAudio, Data: []byte{1}}}}
	resp := &RecallQueryResponse{
		Memories:        []RecalledMemory{{Record: rec, RelevanceScore: 0.5, RenderedContent: rec.Content, ActivationPath: []ID{rec.ID}}, {Record: noText, RelevanceScore: 1e-7}},
		ActivationTrace: &ActivationTrace{SourceID: rec.ID},
		TotalCandidates: 12,
		QueryMetadata:   &QueryMetadata{TotalRecordsScanned: 30, StoresSearched: []StoreType{StoreSemantic}},
	}
	got, err := RecallBrief{resp}.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	emotion := `"emotion":{"joy":0.5,"trust":0,"fear":0,"surprise":0,"sadness":0,"disgust":0,"anger":0,"anticipation":0,"intensity":0,"valence":-0.25}`
	want := `{"view":"brief","memories":[` +
		`{"record":{"id":"0196a7f0-0000-7000-8000-000000000001","store":"semantic","created_at":"2026-11-22T10:00:00.000000005Z",` +
		`"content":{"blocks":[{"modality":"text","text":"a \"quoted\" \u003ctag\u003e \u0026 é\n\u2028"}]},"fidelity":{"score":0.75},` + emotion + `},"relevance_score":0.5},` +
		`{"record":{"id":"0196a7f0-0000-7000-8000-000000000001","store":"semantic","created_at":"2026-11-22T10:00:00.000000005Z",` +
		`"content":{"blocks":[]},"fidelity":{"score":0.75},` + emotion + `},"relevance_score":1e-7}],` +
		`"total_candidates":12,"query_metadata":{"total_records_scanned":30,"stores_searched":["semantic"],"fidelity_filtered":0}}`
	if string(got) != want {
		t.Errorf("brief answer\n got %s\nwant %s", got, want)
	}
	var back struct {
		Memories []struct {
			Record struct {
				Content struct {
					Blocks []struct{ Text string }
				}
			}
		}
	}
	if err := json.Unmarshal(got, &back); err != nil || back.Memories[0].Record.Content.Blocks[0].Text != text {
		t.Errorf("text does not read back (%v): %+v", err, back)
	}

	for _, r := range []*RecallQueryResponse{nil, {}} {
		got, err := RecallBrief{r}.MarshalJSON()
		if err != nil || string(got) != `{"view":"brief","memories":[],"total_candidates":0}` {
			t.Errorf("empty answer: %s (%v)", got, err)
		}
	}
	bad := *resp
	bad.Memories = []RecalledMemory{{Record: rec, RelevanceScore: 0}}
	bad.Memories[0].Record.Store = StoreType(99)
	if _, err := (RecallBrief{&bad}).MarshalJSON(); err == nil {
		t.Error("unknown store encoded without error")
	}
}
