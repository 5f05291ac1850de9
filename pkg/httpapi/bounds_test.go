package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

// TestRequestBounds: every list-returning route refuses a limit over its
// documented maximum, and the other unbounded inputs of the hardening
// findings (huge cue text, decay ticks, emotions, archive ids) are refused
// with the status and code that tell the client what to change.
func TestRequestBounds(t *testing.T) {
	eng := newEngine(t)
	a, _ := seed(t, eng)
	f := newFixture(t, eng, Options{})
	bigText, _ := json.Marshal(strings.Repeat("word ", memory.MaxCueTextBytes/5+1))
	manyWords, _ := json.Marshal(strings.Repeat("w ", memory.MaxQueryWords+1))
	for _, tc := range []struct {
		name   string
		rq     request
		status int
		code   memory.Code
		msg    string
	}{
		{"recall limit", post(wire.PathRecallQuery, `{"cue":{},"limit":4294967295}`), 400, memory.CodeValidation, "limit: 4294967295 exceeds the maximum of 1000"},
		{"recall raw limit", post(wire.PathRecallRaw, `{"limit":4294967295}`), 400, memory.CodeValidation, "limit: 4294967295 exceeds the maximum of 1000"},
		{"associate limit", post("/v1/recall/associate/"+a.String(), `{"limit":257}`), 400, memory.CodeValidation, "limit: 257 exceeds the maximum of 256"},
		{"timeline limit", post(wire.PathRecallTimeline, `{"range":{"start":"2026-01-01T00:00:00Z","end":"2027-01-01T00:00:00Z"},"limit":1001}`), 400, memory.CodeValidation, "limit: 1001 exceeds the maximum of 1000"},
		{"graph limit", post(wire.PathRecallGraph, `{"limit_nodes":4294967295}`), 400, memory.CodeValidation, "limit_nodes: 4294967295 exceeds the maximum of 1000"},
		{"cue text over 1 MiB", post(wire.PathRecallQuery, `{"cue":{"text":`+string(bigText)+`}}`), 413, memory.CodeContentTooLarge, "cue.text:"},
		{"cue with too many words", post(wire.PathRecallQuery, `{"cue":{"text":`+string(manyWords)+`}}`), 400, memory.CodeValidation, "cue.text: more than 4096 words"},
		{"raw query over 1 MiB", post(wire.PathRecallRaw, `{"query":`+string(bigText)+`}`), 413, memory.CodeContentTooLarge, "query:"},
		{"decay tick of 136 years", post(wire.PathDecayTick, `{"tick_duration_seconds":4294967295}`), 400, memory.CodeValidation, "allow_long"},
		{"emotion 1e308", post(wire.PathEncode, `{"content":{"blocks":[{"modality":"text","format":"text/plain","data":[104,105]}]},"emotion":{"intensity":1e308}}`), 400, memory.CodeValidation, "emotion.intensity: must be between 0 and 1"},
		{"emotion on update", request{method: http.MethodPatch, path: "/v1/encode/" + a.String(), body: `{"emotion":{"valence":-3}}`}, 400, memory.CodeValidation, "emotion.valence"},
		{"archive id of 129 bytes", post(wire.PathImport, `{"archive_id":"`+strings.Repeat("x", 129)+`","archive_data":[]}`), 400, memory.CodeValidation, "archive_id: 129 bytes exceeds the limit of 128"},
		{"archive id of 129 bytes, streaming", request{method: http.MethodPost, path: wire.PathImportStream + "?" + url.Values{wire.QueryArchiveID: {strings.Repeat("x", 129)}}.Encode(), body: "{}", header: map[string]string{"Content-Type": wire.ContentTypeArchive}}, 400, memory.CodeValidation, "archive_id:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := f.do(t, tc.rq)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %.300s", resp.StatusCode, tc.status, body)
			}
			env := errorEnvelope(t, resp, body, tc.code)
			if msg := jsonString(t, env["message"]); !strings.Contains(msg, tc.msg) {
				t.Errorf("message %q does not contain %q", msg, tc.msg)
			}
		})
	}

	// Within the bounds: a long tick asked for explicitly, and the
	// largest limits.
	for _, rq := range []request{
		post(wire.PathDecayTick, `{"tick_duration_seconds":4294967295,"allow_long":true}`),
		post(wire.PathDecayTick, fmt.Sprintf(`{"tick_duration_seconds":%d}`, memory.MaxDecayTickSeconds)),
		post(wire.PathRecallRaw, `{"limit":1000}`),
		post(wire.PathRecallQuery, `{"cue":{"text":"cat"},"limit":1000}`),
		post(wire.PathRecallGraph, `{"limit_nodes":1000}`),
	} {
		if resp, body := f.do(t, rq); resp.StatusCode != 200 {
			t.Errorf("%s %s: %d %.300s", rq.method, rq.path, resp.StatusCode, body)
		}
	}
}

// TestTimelineLimit: timeline returns at most limit memories, oldest first,
// and says when the range holds more.
func TestTimelineLimit(t *testing.T) {
	eng := newEngine(t)
	seed(t, eng)
	f := newFixture(t, eng, Options{})
	rng := `"range":{"start":"2026-01-01T00:00:00Z","end":"2027-01-01T00:00:00Z"}`
	for _, tc := range []struct {
		limit     string
		memories  int
		truncated bool
	}{
		{`,"limit":1`, 1, true},
		{`,"limit":2`, 2, false},
		{``, 2, false},
		{`,"limit":0`, 0, true},
	} {
		resp, body := f.do(t, post(wire.PathRecallTimeline, `{`+rng+tc.limit+`}`))
		if resp.StatusCode != 200 {
			t.Fatalf("limit %q: %d %s", tc.limit, resp.StatusCode, body)
		}
		var got struct {
			Buckets []struct {
				Memories []json.RawMessage `json:"memories"`
			} `json:"buckets"`
			Truncated *bool `json:"truncated"`
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, b := range got.Buckets {
			n += len(b.Memories)
		}
		if n != tc.memories || (got.Truncated != nil && *got.Truncated) != tc.truncated {
			t.Errorf("limit %q: %d memories, truncated %v; want %d, %v", tc.limit, n, got.Truncated, tc.memories, tc.truncated)
		}
		if !tc.truncated && got.Truncated != nil {
			t.Errorf("limit %q: a complete answer carries truncated (upstream's shape has no such field)", tc.limit)
		}
	}
}

// TestAnswerLimit: an answer over MaxResponseBytes is refused with 413
// and a message that says to ask for less, before the records are all
// gathered; a smaller page of the same query is served.
func TestAnswerLimit(t *testing.T) {
	eng := newEngine(t)
	const entry = 32 << 10
	text := strings.Repeat("x", entry)
	for i := range 40 {
		req := memory.DefaultEncodeStoreRawRequest()
		req.SessionID = "s"
		req.Content = memory.TextContent(fmt.Sprintf("entry %d common %s", i, text))
		if _, err := eng.EncodeStoreRaw(context.Background(), &req); err != nil {
			t.Fatal(err)
		}
		if _, err := eng.EncodeStore(context.Background(), &memory.EncodeStoreRequest{Content: memory.TextContent(fmt.Sprintf("note %d %s", i, text))}); err != nil {
			t.Fatal(err)
		}
	}
	// 40 entries of 32 KiB are about 5 MiB as JSON integer arrays.
	f := newFixture(t, eng, Options{MaxResponseBytes: 1 << 20})
	for _, tc := range []struct {
		name string
		rq   request
	}{
		{"raw", post(wire.PathRecallRaw, `{"limit":1000}`)},
		{"raw with a query", post(wire.PathRecallRaw, `{"query":"common","limit":1000}`)},
		{"recall", post(wire.PathRecallQuery, `{"cue":{},"limit":1000,"reconsolidate":false}`)},
		{"timeline", post(wire.PathRecallTimeline, `{"range":{"start":"2026-01-01T00:00:00Z","end":"2027-01-01T00:00:00Z"}}`)},
		{"export as JSON", post(wire.PathExport, `{"include_raw_journal":true}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := f.do(t, tc.rq)
			if resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d, want 413 (%d bytes)", resp.StatusCode, len(body))
			}
			env := envelope(t, resp, body)
			msg := jsonString(t, env["message"])
			if jsonString(t, env["code"]) != string(memory.CodeContentTooLarge) || !strings.HasPrefix(msg, memory.AnswerTooLarge) {
				t.Errorf("envelope %s", body)
			}
			if !strings.Contains(msg, "1048576") {
				t.Errorf("message %q does not name the limit", msg)
			}
		})
	}
	// The export's message names the form the archive would have had.
	for form, want := range map[string]string{"": "as a JSON integer array", "?" + wire.QueryBinary + "=" + wire.BinaryBase64: "in base64"} {
		resp, body := f.do(t, post(wire.PathExport+form, `{"include_raw_journal":true}`))
		msg := jsonString(t, envelope(t, resp, body)["message"])
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(msg, want) {
			t.Errorf("export%s: %d, message %q, want one saying %q", form, resp.StatusCode, msg, want)
		}
	}
	if resp, body := f.do(t, post(wire.PathRecallRaw, `{"limit":5}`)); resp.StatusCode != 200 || len(body) > 1<<20 {
		t.Errorf("a page of 5: %d, %d bytes", resp.StatusCode, len(body))
	}
	// The streaming export is not an answer in this sense.
	if resp, body := f.do(t, post(wire.PathExportStream, `{"include_raw_journal":true}`)); resp.StatusCode != 200 || len(body) < 40*entry {
		t.Errorf("streaming export: %d, %d bytes", resp.StatusCode, len(body))
	}
}

// TestErrorsQuoteAPrefix: a 100 KB input never comes back whole, whether
// it is a path segment, a route, an enum value in a JSON body or a header.
func TestErrorsQuoteAPrefix(t *testing.T) {
	f := newFixture(t, newEngine(t), Options{})
	big := strings.Repeat("A", 100_000)
	for _, tc := range []struct {
		name   string
		rq     request
		status int
	}{
		{"record path segment", get("/v1/introspect/record/" + big), 400},
		{"associate path segment", post("/v1/recall/associate/"+big, `{}`), 400},
		{"unknown route", get("/v1/" + big), 404},
		{"enum in the body", post(wire.PathEncode, `{"content":{"blocks":[{"modality":"text","format":"t","data":[1]}]},"store":"`+big+`"}`), 400},
		{"huge number in the body", post(wire.PathRecallQuery, `{"cue":{},"limit":`+strings.Repeat("9", 100_000)+`}`), 400},
		{"uuid in the body", post(wire.PathDecayForecast, `{"record_ids":["`+big+`"],"forecast_at":"2026-12-01T00:00:00Z"}`), 400},
		{"content type", request{method: http.MethodPost, path: wire.PathEncode, body: "{}", header: map[string]string{"Content-Type": "application/" + big[:60000]}}, 400},
		{"query value", get("/v1/introspect/record/" + unknownID + "?include_history=" + big), 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := f.do(t, tc.rq)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if len(body) > 1024 {
				t.Errorf("error body of %d bytes: %.200s…", len(body), body)
			}
			envelope(t, resp, body)
		})
	}
}

func post(path, body string) request { return request{method: http.MethodPost, path: path, body: body} }
func get(path string) request        { return request{method: http.MethodGet, path: path} }
