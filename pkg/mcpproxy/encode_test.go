package mcpproxy

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"memsvc.dev/memsvc/pkg/memory"
)

// sameEncoding fails the test unless encodeMessage writes v as
// json.Marshal does.
func sameEncoding(t testing.TB, v any) {
	t.Helper()
	want, wantErr := json.Marshal(v)
	got, err := encodeMessage(v)
	if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
		t.Fatalf("encodeMessage:\n%s (%v)\njson.Marshal:\n%s (%v)", got, err, want, wantErr)
	}
}

// TestEncodeMessage: tool results, written without encoding/json's
// second and third pass, come out byte for byte as json.Marshal writes
// them, whatever the id, the text and the flags; results of other shapes
// and other messages go through json.Marshal.
func TestEncodeMessage(t *testing.T) {
	texts := []string{"", "plain", `quote " backslash \ slash /`, "<b>&amp;</b>", "line\nfeed\ttab\x01", "é 中文 \u2028\u2029 🙂", "bad \xff utf-8"}
	ids := []mcp.RequestId{mcp.NewRequestId(int64(7)), mcp.NewRequestId("s-1"), mcp.NewRequestId(1.5), mcp.NewRequestId(nil), mcp.NewRequestId("<&>")}
	var results []*mcp.CallToolResult
	for _, text := range texts {
		r, err := structured(map[string]any{"text": text, "n": 1.5e-9})
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, r, mcp.NewToolResultError(text), mcp.NewToolResultText(text))
	}
	typed := mcp.NewToolResultText("typed")
	typed.ResultType = mcp.ResultTypeComplete
	twice := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("a"), mcp.NewTextContent("b")}}
	results = append(results, typed, twice, &mcp.CallToolResult{})
	// Shapes appendToolResponse leaves to json.Marshal.
	annotated := mcp.NewTextContent("annotated")
	annotated.Annotations = &mcp.Annotations{Priority: new(0.5)}
	results = append(results,
		&mcp.CallToolResult{Content: []mcp.Content{annotated}},
		&mcp.CallToolResult{Content: []mcp.Content{mcp.NewImageContent("AAAA", "image/png")}},
		&mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("x")}, StructuredContent: map[string]any{"a": "<"}},
		&mcp.CallToolResult{Result: mcp.Result{Meta: mcp.NewMetaFromMap(map[string]any{"k": "v"})}},
		&mcp.CallToolResult{MultiRoundTripResult: mcp.MultiRoundTripResult{RequestState: "state"}},
	)
	for _, id := range ids {
		for _, r := range results {
			sameEncoding(t, mcp.NewJSONRPCResultResponse(id, r))
		}
		sameEncoding(t, mcp.NewJSONRPCResultResponse(id, map[string]any{"tools": []string{"a"}}))
		sameEncoding(t, mcp.NewJSONRPCError(id, mcp.INVALID_PARAMS, "bad <arg>", nil))
	}
	if !plainResult(results[0]) || plainResult(results[len(results)-1]) {
		t.Error("plainResult does not tell the shapes apart")
	}
}

// FuzzEncodeMessage: for any text and string id a tool result is written
// as json.Marshal writes it.
func FuzzEncodeMessage(f *testing.F) {
	f.Add("plain", "id", false)
	f.Add("<\u2028\xff\"\\", "", true)
	f.Fuzz(func(t *testing.T, text, id string, isError bool) {
		r, err := structured(map[string]string{"text": text})
		if err != nil {
			t.Fatal(err)
		}
		r.IsError = isError
		sameEncoding(t, mcp.NewJSONRPCResultResponse(mcp.NewRequestId(id), r))
	})
}

// TestRecallResultJSON: the recall tool's result, written by hand, comes
// out byte for byte as json.Marshal writes it, and fails where it fails.
func TestRecallResultJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 4))
	texts := []string{"", "plain", `quote " backslash \`, "<b>&amp;</b>", "line\nfeed\x01", "é 中文 \u2028🙂", "bad \xff utf-8"}
	floats := []float64{0, math.Copysign(0, -1), 1, 0.5, 1.0923388230261548, 1e-7, 3e21, -2.5}
	stores := []memory.StoreType{memory.StoreEpisodic, memory.StoreSemantic, memory.StoreProcedural, memory.StoreEmotional, memory.StoreWorking}
	pick := func(n int) int { return rng.IntN(n) }
	for range 500 {
		r := &recallResult{TotalCandidates: rng.Uint32()}
		if pick(8) > 0 {
			r.Memories = []recallItem{}
		}
		for range pick(4) {
			it := recallItem{Store: stores[pick(len(stores))], Text: texts[pick(len(texts))],
				RelevanceScore: floats[pick(len(floats))], Fidelity: floats[pick(len(floats))],
				CreatedAt: offsetTime(time.Unix(rng.Int64N(1<<34), rng.Int64N(1e9)))}
			for i := range it.RecordID {
				it.RecordID[i] = byte(rng.Uint32())
			}
			if pick(2) == 0 {
				e := emotionName(memory.EmotionLabelNames()[pick(len(memory.EmotionLabelNames()))])
				it.Emotion = &e
			}
			r.Memories = append(r.Memories, it)
		}
		if pick(3) > 0 {
			r.QueryMetadata = &memory.QueryMetadata{TotalRecordsScanned: rng.Uint32(), FidelityFiltered: rng.Uint32()}
			switch pick(3) {
			case 1:
				r.QueryMetadata.StoresSearched = []memory.StoreType{}
			case 2:
				r.QueryMetadata.StoresSearched = stores[:1+pick(len(stores))]
			}
		}
		sameResultJSON(t, r)
	}
	bad := &recallResult{Memories: []recallItem{{Store: memory.StoreSemantic, RelevanceScore: math.NaN()}}}
	sameResultJSON(t, bad)
	bad = &recallResult{Memories: []recallItem{{Store: memory.StoreType(250)}}}
	sameResultJSON(t, bad)
}

func sameResultJSON(t *testing.T, r *recallResult) {
	t.Helper()
	want, wantErr := json.Marshal(r)
	got, err := r.appendJSON([]byte("x"))
	if err == nil {
		got = got[1:]
	}
	if (err != nil) != (wantErr != nil) || (err == nil && !bytes.Equal(got, want)) {
		t.Fatalf("appendJSON:\n%s (%v)\njson.Marshal:\n%s (%v)", got, err, want, wantErr)
	}
}
