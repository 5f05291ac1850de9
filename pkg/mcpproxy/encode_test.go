package mcpproxy

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
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
