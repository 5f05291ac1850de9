package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

// TestRecallQueryView: ?view=brief answers a recall with the brief form
// of the very answer the full view gives, and leaves the full answer
// (no view, or view=full) as it is; any other view is refused.
func TestRecallQueryView(t *testing.T) {
	eng := newEngine(t)
	for _, c := range []string{"the deploy key rotates on Fridays", "the staging deploy failed <again> & again"} {
		if _, err := eng.EncodeStore(context.Background(), &memory.EncodeStoreRequest{Content: memory.TextContent(c)}); err != nil {
			t.Fatal(err)
		}
	}
	f := newFixture(t, eng, Options{})
	const body = `{"cue":{"text":"deploy"},"reconsolidate":false}`
	recall := func(query string) (int, []byte) {
		resp, data := f.do(t, post("/v1/recall/query"+query, body))
		return resp.StatusCode, data
	}
	status, full := recall("")
	var decoded memory.RecallQueryResponse
	if err := memory.UnmarshalRecallQueryResponse(full, &decoded); status != http.StatusOK || err != nil || len(decoded.Memories) != 2 {
		t.Fatalf("full answer %d (%v): %s", status, err, full)
	}
	if _, again := recall("?view=full"); string(again) != string(full) {
		t.Errorf("view=full:\n%s\nno view:\n%s", again, full)
	}
	want, err := memory.RecallBrief{Response: &decoded}.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if status, brief := recall("?view=brief"); status != http.StatusOK || string(brief) != string(want) {
		t.Errorf("view=brief: %d\n%s\nwant\n%s", status, brief, want)
	}
	resp, data := f.do(t, post("/v1/recall/query?view=short", body))
	env := envelope(t, resp, data)
	var msg string
	_ = json.Unmarshal(env["message"], &msg)
	if resp.StatusCode != http.StatusBadRequest || string(env["code"]) != `"VALIDATION_ERROR"` || !strings.Contains(msg, "view") {
		t.Errorf("view=short: %d %s", resp.StatusCode, data)
	}
}
