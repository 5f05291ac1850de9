package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/engine"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

const (
	// testRequestID is sent with every request of the route walk, so
	// every envelope must repeat it.
	testRequestID = "7d0c3c2e-2b7a-4a57-9f59-3f0b7c1e2a10"
	unknownID     = "0196a9e2-5c1d-7f00-8a00-0000000000aa"
	testBodyLimit = 256 << 10
)

// textRecord is an encode request body storing s.
func textRecord(s string) string {
	b, _ := json.Marshal(s)
	return fmt.Sprintf(`{"content":{"blocks":[{"modality":"text","format":"text/plain","data":%s}]}}`, bytesArray(string(b[1:len(b)-1])))
}

func bytesArray(s string) string {
	parts := make([]string, len(s))
	for i := range len(s) {
		parts[i] = fmt.Sprint(s[i])
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// seed stores two linked records in eng and returns their ids.
func seed(t *testing.T, eng *engine.Engine) (a, b memory.ID) {
	t.Helper()
	resp, err := eng.EncodeBatch(context.Background(), &memory.EncodeBatchRequest{
		Records: []memory.EncodeStoreRequest{
			{Content: memory.TextContent("the cat sat on the warm mat")},
			{Content: memory.TextContent("the dog chased the cat around the garden")},
		},
		InferAssociations: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Results[0].RecordID, resp.Results[1].RecordID
}

// foreignArchive is a CMA archive, from another engine, of one record the
// route walk's engine does not hold.
func foreignArchive(t *testing.T) []byte {
	t.Helper()
	other := newEngine(t)
	if _, err := other.EncodeStore(context.Background(), &memory.EncodeStoreRequest{Content: memory.TextContent("a note from another memsvc")}); err != nil {
		t.Fatal(err)
	}
	var archive bytes.Buffer
	req := memory.DefaultExportRequest()
	if _, err := other.Export(context.Background(), &req, &archive); err != nil {
		t.Fatal(err)
	}
	return archive.Bytes()
}

// routeCase is one request of the route walk and what must come back.
type routeCase struct {
	name string
	request
	status int
	// code and msg (a substring) of the envelope of an error answer.
	code  memory.Code
	msg   string
	check func(t *testing.T, resp *http.Response, body []byte)
}

// TestRoutes walks every route with good and bad input against a real
// engine and checks status, body shape and error codes.
func TestRoutes(t *testing.T) {
	eng := newEngine(t)
	a, b := seed(t, eng)
	f := newFixture(t, eng, Options{MaxBodyBytes: testBodyLimit, MetricsEnabled: true})
	importBody := `{"archive_id":"from-elsewhere","archive_data":` + bytesArray(string(foreignArchive(t))) + `}`

	enc := textRecord("a note about the weather")
	tooBig := `{"content":{"blocks":[{"modality":"text","format":"text/plain","data":"` + strings.Repeat("A", testBodyLimit) + `"}]}}`
	batch := func(n int) string {
		recs := make([]string, n)
		for i := range recs {
			recs[i] = textRecord(fmt.Sprintf("entry %d", i))
		}
		return `{"records":[` + strings.Join(recs, ",") + `]}`
	}
	raw := `{"session_id":"s1","source":"conversation","speaker":"user","visibility":"normal","secrecy_level":"public","content":{"blocks":[{"modality":"text","format":"text/plain","data":[104,105]}]}}`
	rng := `{"start":"2026-11-01T00:00:00Z","end":"2026-11-02T00:00:00Z"}`

	isJSONObject := func(keys ...string) func(t *testing.T, resp *http.Response, body []byte) {
		return func(t *testing.T, resp *http.Response, body []byte) {
			t.Helper()
			if ct := resp.Header.Get("Content-Type"); ct != wire.ContentTypeJSON {
				t.Errorf("Content-Type = %q", ct)
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatalf("body %q: %v", body, err)
			}
			for _, k := range keys {
				if _, ok := m[k]; !ok {
					t.Errorf("body %s lacks %q", body, k)
				}
			}
		}
	}
	emptyBody := func(t *testing.T, _ *http.Response, body []byte) {
		t.Helper()
		if len(body) != 0 {
			t.Errorf("body = %q, want empty", body)
		}
	}
	allow := func(want string) func(t *testing.T, resp *http.Response, body []byte) {
		return func(t *testing.T, resp *http.Response, body []byte) {
			t.Helper()
			if got := resp.Header.Get("Allow"); got != want {
				t.Errorf("Allow = %q, want %q", got, want)
			}
		}
	}
	listLen := func(key string, n int) func(t *testing.T, resp *http.Response, body []byte) {
		return func(t *testing.T, resp *http.Response, body []byte) {
			t.Helper()
			var m map[string]json.RawMessage
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatal(err)
			}
			var list []json.RawMessage
			if err := json.Unmarshal(m[key], &list); err != nil || list == nil {
				t.Fatalf("%s = %s, want a list", key, m[key])
			}
			if len(list) != n {
				t.Errorf("len(%s) = %d, want %d", key, len(list), n)
			}
		}
	}

	// stats reads the engine's statistics for checks that compare an
	// answer with the state it describes.
	stats := func(t *testing.T) *memory.Stats {
		t.Helper()
		st, err := eng.Stats(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	// decodeAs checks the JSON object keys of a body and decodes it into v.
	decodeAs := func(t *testing.T, resp *http.Response, body []byte, v any, keys ...string) {
		t.Helper()
		isJSONObject(keys...)(t, resp, body)
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("body %q: %v", body, err)
		}
	}

	withType := func(rq request, ct string) request {
		rq.header = map[string]string{"Content-Type": ct}
		return rq
	}
	updatePath := wire.RecordPath(wire.PathEncodeUpdate, a)
	assocPath := wire.RecordPath(wire.PathRecallAssociate, a)
	recordPath := wire.RecordPath(wire.PathRecord, a)

	cases := []routeCase{
		// Probes and metrics.
		{name: "health", request: get(wire.PathHealth), status: 200, check: func(t *testing.T, _ *http.Response, body []byte) {
			if string(body) != `{"status":"ok"}` {
				t.Errorf("body = %s", body)
			}
		}},
		{name: "health HEAD", request: request{method: http.MethodHead, path: wire.PathHealth}, status: 200, check: emptyBody},
		{name: "health POST", request: post(wire.PathHealth, `{}`), status: 405, code: memory.CodeValidation, msg: "is not allowed on", check: allow("GET, HEAD")},
		{name: "readiness", request: get(wire.PathReadiness), status: 200, check: func(t *testing.T, _ *http.Response, body []byte) {
			if string(body) != `{"status":"ready"}` {
				t.Errorf("body = %s", body)
			}
		}},
		{name: "metrics", request: get(wire.PathMetrics), status: 200, check: func(t *testing.T, resp *http.Response, body []byte) {
			if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") || !strings.Contains(string(body), "memsvc_http_requests_total") {
				t.Errorf("metrics answer %q: %.200s", resp.Header.Get("Content-Type"), body)
			}
		}},
		{name: "metrics DELETE", request: request{method: http.MethodDelete, path: wire.PathMetrics}, status: 405, code: memory.CodeValidation, msg: "is not allowed on", check: allow("GET, HEAD")},

		// POST /v1/encode and the generic decoding rules.
		{name: "encode", request: post(wire.PathEncode, enc), status: 200, check: isJSONObject("record_id", "store", "initial_fidelity", "associations_created")},
		{name: "encode unknown fields ignored", request: post(wire.PathEncode, `{"bogus":1,"content":{"blocks":[{"modality":"text","format":"t","data":[104],"extra":true}]}}`), status: 200},
		{name: "encode explicit nulls", request: post(wire.PathEncode, `{"header":null,"content":{"blocks":[{"modality":"text","format":"t","data":[104],"embedding":null}],"summary":null},"store":null,"emotion":null,"context":null,"metadata":null,"associations":null,"meta":null}`), status: 200},
		{name: "encode base64 data", request: post(wire.PathEncode, `{"content":{"blocks":[{"modality":"text","format":"t","data":"aGk="}]}}`), status: 200},
		{name: "encode charset param", request: withType(post(wire.PathEncode, enc), "application/json; charset=utf-8"), status: 200},
		{name: "encode +json type", request: withType(post(wire.PathEncode, enc), "application/vnd.cmp+json"), status: 200},
		{name: "encode wrong content type", request: withType(post(wire.PathEncode, enc), "text/plain"), status: 400, code: memory.CodeValidation, msg: `Content-Type "text/plain" is not JSON`},
		{name: "encode no content type", request: withType(post(wire.PathEncode, enc), ""), status: 400, code: memory.CodeValidation, msg: "missing Content-Type"},
		{name: "encode malformed content type", request: withType(post(wire.PathEncode, enc), "application/"), status: 400, code: memory.CodeValidation, msg: "malformed Content-Type"},
		{name: "encode empty body", request: withType(post(wire.PathEncode, ""), "application/json"), status: 400, code: memory.CodeValidation, msg: "empty"},
		{name: "encode blank body", request: post(wire.PathEncode, " \n "), status: 400, code: memory.CodeValidation, msg: "empty"},
		{name: "encode array body", request: post(wire.PathEncode, `[]`), status: 400, code: memory.CodeValidation, msg: "must be a JSON object, not an array"},
		{name: "encode null body", request: post(wire.PathEncode, `null`), status: 400, code: memory.CodeValidation, msg: "not null"},
		{name: "encode malformed JSON", request: post(wire.PathEncode, "{\n  \"content\": {\"blocks\": [}\n}"), status: 400, code: memory.CodeValidation, msg: "malformed JSON at line 2, column 27"},
		{name: "encode truncated JSON", request: post(wire.PathEncode, `{"content":{"blocks":[`), status: 400, code: memory.CodeValidation, msg: "malformed JSON"},
		{name: "encode trailing data", request: post(wire.PathEncode, enc+` {}`), status: 400, code: memory.CodeValidation, msg: "after top-level value"},
		{name: "encode wrong type", request: post(wire.PathEncode, `{"content":{"blocks":[]},"emotion":{"joy":"lots"}}`), status: 400, code: memory.CodeValidation, msg: "emotion.joy: want a number, got string"},
		{name: "encode bad enum", request: post(wire.PathEncode, `{"content":{"blocks":[{"modality":"smell","format":"t","data":[1]}]}}`), status: 400, code: memory.CodeValidation, msg: `invalid modality "smell"`},
		{name: "encode bad store", request: post(wire.PathEncode, `{"store":"attic","content":{"blocks":[{"modality":"text","format":"t","data":[1]}]}}`), status: 400, code: memory.CodeValidation, msg: `invalid store "attic"`},
		{name: "encode bad bytes", request: post(wire.PathEncode, `{"content":{"blocks":[{"modality":"text","format":"t","data":[256]}]}}`), status: 400, code: memory.CodeValidation, msg: "integers 0-255"},
		{name: "encode no blocks", request: post(wire.PathEncode, `{"content":{"blocks":[]}}`), status: 400, code: memory.CodeValidation},
		{name: "encode over-size body", request: post(wire.PathEncode, tooBig), status: 413, code: memory.CodeContentTooLarge, msg: "exceeds the limit of 262144 bytes"},
		{name: "encode over-size chunked body", request: request{method: http.MethodPost, path: wire.PathEncode, body: tooBig, header: map[string]string{"Content-Type": "application/json", "Transfer-Encoding": "chunked"}}, status: 413, code: memory.CodeContentTooLarge},
		{name: "encode GET", request: get(wire.PathEncode), status: 405, code: memory.CodeValidation, msg: "is not allowed on", check: allow("POST")},
		{name: "encode trailing slash", request: post(wire.PathEncode+"/", enc), status: 404, code: memory.CodeValidation, msg: "no route"},
		{name: "encode unclean path", request: post("/v1//encode", enc), status: 404, code: memory.CodeValidation, msg: "no route"},

		// Batches.
		{name: "batch", request: post(wire.PathEncodeBatch, batch(3)), status: 200, check: listLen("results", 3)},
		{name: "batch with inferred associations", request: post(wire.PathEncodeBatch, strings.TrimSuffix(batch(2), "}")+`,"infer_associations":true}`), status: 200, check: func(t *testing.T, _ *http.Response, body []byte) {
			if !strings.Contains(string(body), `"associations_inferred":2`) {
				t.Errorf("body = %s", body)
			}
		}},
		{name: "batch empty", request: post(wire.PathEncodeBatch, `{"records":[]}`), status: 200, check: listLen("results", 0)},
		{name: "batch over cap", request: post(wire.PathEncodeBatch, batch(memory.MaxBatchRecords+1)), status: 400, code: memory.CodeValidation, msg: "exceeds the maximum of 1000"},
		{name: "batch malformed", request: post(wire.PathEncodeBatch, `{"records":{}}`), status: 400, code: memory.CodeValidation, msg: "records: want an array"},
		{name: "batch wrong content type", request: withType(post(wire.PathEncodeBatch, batch(1)), "application/xml"), status: 400, code: memory.CodeValidation},

		// Raw journal.
		{name: "raw", request: post(wire.PathEncodeRaw, raw), status: 200, check: isJSONObject("record_id", "session_id", "visibility", "secrecy_level")},
		{name: "raw blank session", request: post(wire.PathEncodeRaw, strings.Replace(raw, `"s1"`, `"  "`, 1)), status: 400, code: memory.CodeValidation, msg: "session_id"},
		{name: "raw bad speaker", request: post(wire.PathEncodeRaw, strings.Replace(raw, `"user"`, `"narrator"`, 1)), status: 400, code: memory.CodeValidation, msg: `invalid speaker "narrator"`},
		{name: "raw batch", request: post(wire.PathEncodeRawBatch, `{"records":[`+raw+`,`+raw+`]}`), status: 200, check: listLen("results", 2)},
		{name: "raw batch malformed", request: post(wire.PathEncodeRawBatch, `{"records":[`), status: 400, code: memory.CodeValidation},
		{name: "raw batch PUT", request: request{method: http.MethodPut, path: wire.PathEncodeRawBatch, body: `{}`}, status: 405, code: memory.CodeValidation, msg: "is not allowed on", check: allow("POST")},

		// PATCH /v1/encode/{record_id}.
		{name: "update without body id", request: request{method: http.MethodPatch, path: updatePath, body: `{"metadata":{"k":"v"}}`}, status: 204, check: emptyBody},
		{name: "update with other body id", request: request{method: http.MethodPatch, path: updatePath, body: `{"record_id":"` + unknownID + `","metadata":{"k":"w"}}`}, status: 204, check: func(t *testing.T, _ *http.Response, _ []byte) {
			rec, err := eng.Record(context.Background(), &memory.IntrospectRecordRequest{RecordID: a})
			if err != nil || string(rec.Metadata) != `{"k":"w"}` {
				t.Errorf("path record after update: %v, %v", rec, err)
			}
		}},
		{name: "update simple uuid form", request: request{method: http.MethodPatch, path: "/v1/encode/" + strings.ReplaceAll(a.String(), "-", ""), body: `{"emotion":{"joy":0.5}}`}, status: 204},
		{name: "update unknown id", request: request{method: http.MethodPatch, path: "/v1/encode/" + unknownID, body: `{"metadata":{}}`}, status: 404, code: memory.CodeNotFound, msg: unknownID},
		{name: "update bad path id", request: request{method: http.MethodPatch, path: "/v1/encode/not-a-uuid", body: `{}`}, status: 400, code: memory.CodeValidation, msg: `record_id: path segment "not-a-uuid" is not a UUID`},
		{name: "update bad path id before body", request: request{method: http.MethodPatch, path: "/v1/encode/not-a-uuid", body: `{{{`, header: map[string]string{"Content-Type": "text/plain"}}, status: 400, code: memory.CodeValidation, msg: "is not a UUID"},
		{name: "update malformed body", request: request{method: http.MethodPatch, path: updatePath, body: `{"metadata":`}, status: 400, code: memory.CodeValidation},
		{name: "update bad body id", request: request{method: http.MethodPatch, path: updatePath, body: `{"record_id":"nope"}`}, status: 400, code: memory.CodeValidation, msg: `invalid UUID "nope"`},
		{name: "update GET", request: get(updatePath), status: 405, code: memory.CodeValidation, msg: "is not allowed on", check: allow("PATCH")},

		// Recall.
		{name: "recall text", request: post(wire.PathRecallQuery, `{"cue":{"text":"cat"}}`), status: 200, check: isJSONObject("memories", "activation_trace", "total_candidates")},
		{name: "recall no cue", request: post(wire.PathRecallQuery, `{"cue":{}}`), status: 200, check: isJSONObject("memories")},
		{name: "recall limit 0", request: post(wire.PathRecallQuery, `{"cue":{"text":"cat"},"limit":0}`), status: 200, check: listLen("memories", 0)},
		{name: "recall limit null", request: post(wire.PathRecallQuery, `{"cue":{},"limit":null}`), status: 200},
		{name: "recall negative limit", request: post(wire.PathRecallQuery, `{"cue":{},"limit":-1}`), status: 400, code: memory.CodeValidation, msg: "limit: want a non-negative integer"},
		{name: "recall fractional limit", request: post(wire.PathRecallQuery, `{"cue":{},"limit":1.5}`), status: 400, code: memory.CodeValidation, msg: "limit"},
		{name: "recall bad mode", request: post(wire.PathRecallQuery, `{"cue":{},"recall_mode":"dreamy"}`), status: 400, code: memory.CodeValidation, msg: "recall mode"},
		{name: "recall audio cue", request: post(wire.PathRecallQuery, `{"cue":{"audio":[1,2,3]}}`), status: 400, code: memory.CodeModalityUnsupported},
		{name: "raw recall limit 0", request: post(wire.PathRecallRaw, `{"limit":0}`), status: 200, check: listLen("records", 0)},
		{name: "raw recall", request: post(wire.PathRecallRaw, `{"session_id":"s1"}`), status: 200, check: isJSONObject("records", "total_candidates")},
		{name: "raw recall bad secrecy", request: post(wire.PathRecallRaw, `{"secrecy_levels":["top"]}`), status: 400, code: memory.CodeValidation},

		// POST /v1/recall/associate/{record_id}.
		{name: "associate without body id", request: post(assocPath, `{}`), status: 200, check: func(t *testing.T, _ *http.Response, body []byte) {
			if !strings.Contains(string(body), b.String()) {
				t.Errorf("associate from %s does not reach %s: %s", a, b, body)
			}
		}},
		{name: "associate with body id", request: post(assocPath, `{"record_id":"`+a.String()+`","depth":1}`), status: 200},
		{name: "associate unknown id", request: post("/v1/recall/associate/"+unknownID, `{}`), status: 404, code: memory.CodeNotFound},
		{name: "associate bad path id", request: post("/v1/recall/associate/xyz", `{}`), status: 400, code: memory.CodeValidation, msg: "is not a UUID"},
		{name: "associate depth over cap", request: post(assocPath, `{"depth":9}`), status: 400, code: memory.CodeValidation, msg: "depth"},
		{name: "associate empty body", request: withType(post(assocPath, ``), "application/json"), status: 400, code: memory.CodeValidation, msg: "empty"},

		{name: "timeline", request: post(wire.PathRecallTimeline, `{"range":`+rng+`,"granularity":"day"}`), status: 200, check: isJSONObject("buckets")},
		{name: "timeline bad time", request: post(wire.PathRecallTimeline, `{"range":{"start":"yesterday","end":"2026-11-02T00:00:00Z"}}`), status: 400, code: memory.CodeValidation},
		{name: "timeline bad granularity", request: post(wire.PathRecallTimeline, `{"range":`+rng+`,"granularity":"century"}`), status: 400, code: memory.CodeValidation, msg: "granularity"},
		{name: "graph", request: post(wire.PathRecallGraph, `{}`), status: 200, check: isJSONObject("nodes", "edges", "total_nodes", "meta_edges")},
		{name: "graph bad center", request: post(wire.PathRecallGraph, `{"center_id":"x"}`), status: 400, code: memory.CodeValidation},

		// Lifecycle.
		{name: "consolidate dry run", request: post(wire.PathConsolidate, `{"dry_run":true}`), status: 200, check: func(t *testing.T, resp *http.Response, body []byte) {
			var got memory.ConsolidateResponse
			decodeAs(t, resp, body, &got, "records_processed", "records_migrated", "records_compressed", "records_pruned", "semantic_nodes_created")
			// Every record so far is a fresh episodic one, so each is
			// looked at and would be copied to semantic memory; a dry run
			// copies none.
			st := stats(t)
			if episodic := st.RecordsByStore[memory.StoreEpisodic]; got.RecordsProcessed != episodic || got.RecordsMigrated == 0 {
				t.Errorf("consolidation reports %+v with %d episodic records", got, episodic)
			}
			if semantic := st.RecordsByStore[memory.StoreSemantic]; semantic != 0 {
				t.Errorf("a dry run left %d semantic records", semantic)
			}
		}},
		{name: "consolidate bad strategy", request: post(wire.PathConsolidate, `{"strategy":"random"}`), status: 400, code: memory.CodeValidation, msg: "consolidation strategy"},
		{name: "dream tick dry run", request: post(wire.PathDreamTick, `{"dry_run":true}`), status: 200, check: func(t *testing.T, resp *http.Response, body []byte) {
			var got memory.DreamTickResponse
			decodeAs(t, resp, body, &got, "groups_processed", "raw_records_processed", "episodic_summaries_created", "semantic_nodes_created")
			// The raw cases above wrote one session of entries: one group,
			// one summary it would write, and nothing written.
			st := stats(t)
			want := memory.DreamTickResponse{GroupsProcessed: 1, RawRecordsProcessed: st.RawJournalRecords, EpisodicSummariesCreated: 1}
			if got != want || st.RawJournalRecords == 0 {
				t.Errorf("dream tick %+v, want %+v", got, want)
			}
			if st.DreamEpisodicSummaries != 0 || st.RawJournalPendingDream != st.RawJournalRecords {
				t.Errorf("a dry run changed the journal: %d summaries, %d of %d entries pending", st.DreamEpisodicSummaries, st.RawJournalPendingDream, st.RawJournalRecords)
			}
		}},
		{name: "dream tick malformed", request: post(wire.PathDreamTick, `{"max_groups":"ten"}`), status: 400, code: memory.CodeValidation, msg: "max_groups"},
		{name: "decay tick", request: post(wire.PathDecayTick, `{"tick_duration_seconds":60}`), status: 200, check: isJSONObject("records_updated", "records_below_threshold", "records_pruned")},
		{name: "decay tick empty body", request: withType(post(wire.PathDecayTick, ``), "application/json"), status: 400, code: memory.CodeValidation, msg: "empty"},
		{name: "decay tick negative", request: post(wire.PathDecayTick, `{"tick_duration_seconds":-5}`), status: 400, code: memory.CodeValidation},
		{name: "set mode", request: request{method: http.MethodPut, path: wire.PathMode, body: `{"mode":"perfect","scope":null}`}, status: 204, check: emptyBody},
		{name: "set mode back", request: request{method: http.MethodPut, path: wire.PathMode, body: `{"mode":"human"}`}, status: 204},
		{name: "set mode bad", request: request{method: http.MethodPut, path: wire.PathMode, body: `{"mode":"dreamy"}`}, status: 400, code: memory.CodeValidation},
		{name: "set mode missing", request: request{method: http.MethodPut, path: wire.PathMode, body: `{}`}, status: 400, code: memory.CodeValidation, msg: "mode"},
		{name: "set mode POST", request: post(wire.PathMode, `{"mode":"human"}`), status: 405, code: memory.CodeValidation, msg: "is not allowed on", check: allow("PUT")},
		{name: "forget unknown", request: request{method: http.MethodDelete, path: wire.PathForget, body: `{"record_ids":["` + unknownID + `"],"confirm":true}`}, status: 200, check: func(t *testing.T, _ *http.Response, body []byte) {
			if string(body) != `{"records_deleted":0}` {
				t.Errorf("body = %s", body)
			}
		}},
		{name: "forget unconfirmed", request: request{method: http.MethodDelete, path: wire.PathForget, body: `{"record_ids":["` + unknownID + `"],"confirm":false}`}, status: 400, code: memory.CodeForgetUnconfirmed},
		{name: "forget confirm missing", request: request{method: http.MethodDelete, path: wire.PathForget, body: `{"record_ids":[]}`}, status: 400, code: memory.CodeValidation, msg: "confirm"},
		{name: "forget no body", request: request{method: http.MethodDelete, path: wire.PathForget}, status: 400, code: memory.CodeValidation},
		{name: "export", request: post(wire.PathExport, `{}`), status: 200, check: func(t *testing.T, resp *http.Response, body []byte) {
			var got wire.ExportArchiveResponse
			decodeAs(t, resp, body, &got, "archive_id", "size_bytes", "record_count", "checksum", "archive_data")
			if total := stats(t).TotalRecords; got.RecordCount != total || got.RecordCount == 0 {
				t.Errorf("export of %d records, the engine holds %d", got.RecordCount, total)
			}
			if got.SizeBytes != uint64(len(got.ArchiveData)) || got.ArchiveID == "" || len(got.Checksum) != 64 {
				t.Errorf("export answer %+v with %d archive bytes", got.ExportResponse, len(got.ArchiveData))
			}
		}},
		{name: "export malformed", request: post(wire.PathExport, `{"stores":"all"}`), status: 400, code: memory.CodeValidation},
		{name: "export stream malformed", request: post(wire.PathExportStream, `{"encrypt":"yes"}`), status: 400, code: memory.CodeValidation},
		{name: "import without data", request: post(wire.PathImport, `{"archive_id":"a"}`), status: 400, code: memory.CodeValidation, msg: "archive_data"},
		{name: "import bad strategy", request: post(wire.PathImport, `{"archive_id":"a","strategy":"overwrite","archive_data":[]}`), status: 400, code: memory.CodeValidation, msg: "import strategy"},
		{name: "import", request: post(wire.PathImport, importBody), status: 200, check: func(t *testing.T, _ *http.Response, body []byte) {
			if string(body) != `{"records_imported":1,"records_skipped":0,"raw_conflicts":0}` {
				t.Errorf("body = %s", body)
			}
		}},
		{name: "import not an archive", request: post(wire.PathImport, `{"archive_id":"a","archive_data":[123,125]}`), status: 409, code: memory.CodeImportConflict, msg: "not a CMA archive"},
		{name: "import stream bad strategy", request: request{method: http.MethodPost, path: wire.PathImportStream + "?strategy=overwrite", body: "x", header: map[string]string{"Content-Type": wire.ContentTypeArchive}}, status: 400, code: memory.CodeValidation, msg: "strategy"},
		{name: "import stream GET", request: get(wire.PathImportStream), status: 405, code: memory.CodeValidation, msg: "is not allowed on", check: allow("POST")},

		// Introspection.
		{name: "stats", request: get(wire.PathStats), status: 200, check: isJSONObject("total_records", "records_by_store", "avg_fidelity_by_store", "vector_search_backend")},
		{name: "stats HEAD", request: request{method: http.MethodHead, path: wire.PathStats}, status: 200, check: emptyBody},
		{name: "stats POST", request: post(wire.PathStats, `{}`), status: 405, code: memory.CodeValidation, msg: "is not allowed on", check: allow("GET, HEAD")},
		{name: "record", request: get(recordPath), status: 200, check: isJSONObject("id", "store", "content", "fidelity", "associations", "meta")},
		{name: "record include flags", request: get(recordPath + "?include_history=true&include_associations=false&include_versions=true"), status: 200},
		{name: "record bad include flag", request: get(recordPath + "?include_history=1"), status: 400, code: memory.CodeValidation, msg: `include_history: query value "1"`},
		{name: "record unknown query ignored", request: get(recordPath + "?verbose=yes"), status: 200},
		{name: "record unknown id", request: get("/v1/introspect/record/" + unknownID), status: 404, code: memory.CodeNotFound},
		{name: "record bad id", request: get("/v1/introspect/record/123"), status: 400, code: memory.CodeValidation},
		{name: "forecast", request: post(wire.PathDecayForecast, `{"record_ids":["`+a.String()+`"],"forecast_at":"2026-12-01T00:00:00Z"}`), status: 200, check: listLen("forecasts", 1)},
		{name: "forecast unknown id", request: post(wire.PathDecayForecast, `{"record_ids":["`+unknownID+`"],"forecast_at":"2026-12-01T00:00:00Z"}`), status: 404, code: memory.CodeNotFound},
		{name: "forecast missing time", request: post(wire.PathDecayForecast, `{"record_ids":[]}`), status: 400, code: memory.CodeValidation, msg: "forecast_at"},
		{name: "evolution", request: get(wire.PathEvolution), status: 200, check: isJSONObject("parameter_adjustments", "detected_patterns", "schema_adaptations")},
		{name: "stats of all namespaces", request: get(wire.PathStats + "?all_namespaces=true"), status: 200, check: isJSONObject("total_records", "records_by_store")},
		{name: "stats bad all_namespaces", request: get(wire.PathStats + "?all_namespaces=1"), status: 400, code: memory.CodeValidation, msg: `all_namespaces: query value "1"`},

		// Namespaces.
		{name: "namespaces", request: get(wire.PathNamespaces), status: 200, check: func(t *testing.T, resp *http.Response, body []byte) {
			var got memory.NamespacesResponse
			decodeAs(t, resp, body, &got, "namespaces")
			if len(got.Namespaces) == 0 || got.Namespaces[0].Name != memory.DefaultNamespace {
				t.Errorf("namespaces = %+v, want default listed", got.Namespaces)
			}
		}},
		{name: "namespaces POST", request: post(wire.PathNamespaces, `{}`), status: 405, code: memory.CodeValidation, msg: "is not allowed on", check: allow("GET, HEAD")},
		{name: "encode in a namespace", request: request{method: http.MethodPost, path: wire.PathEncode, body: enc, header: map[string]string{"Content-Type": "application/json", wire.HeaderNamespace: "team.a"}}, status: 200},
		{name: "encode bad namespace header", request: request{method: http.MethodPost, path: wire.PathEncode, body: enc, header: map[string]string{"Content-Type": "application/json", wire.HeaderNamespace: "Team A"}}, status: 400, code: memory.CodeValidation, msg: "X-Memsvc-Namespace header"},
		{name: "drop unknown namespace", request: request{method: http.MethodDelete, path: wire.NamespacePath("never-made"), body: `{"confirm":true}`}, status: 404, code: memory.CodeNotFound, msg: `"never-made"`},
		{name: "drop bad name", request: request{method: http.MethodDelete, path: "/v1/namespaces/-x", body: `{"confirm":true}`}, status: 400, code: memory.CodeValidation, msg: "path segment {namespace}"},
		{name: "drop no body", request: request{method: http.MethodDelete, path: wire.NamespacePath("never-made")}, status: 400, code: memory.CodeValidation},
		{name: "drop GET", request: get(wire.NamespacePath("never-made")), status: 405, code: memory.CodeValidation, msg: "is not allowed on", check: allow("DELETE")},

		// Unknown paths.
		{name: "unknown path", request: get("/v1/nothing"), status: 404, code: memory.CodeValidation, msg: "no route"},
		{name: "unknown root path", request: get("/"), status: 404, code: memory.CodeValidation, msg: "no route"},
	}

	covered := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rq := tc.request
			hdr := map[string]string{wire.HeaderRequestID: testRequestID}
			for k, v := range rq.header {
				hdr[k] = v
			}
			rq.header = hdr
			resp, body := f.do(t, rq)
			if got := resp.Header.Get(wire.HeaderRequestID); got != testRequestID {
				t.Errorf("x-request-id = %q, want it echoed", got)
			}
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if tc.code != "" {
				env := errorEnvelope(t, resp, body, tc.code)
				if msg := jsonString(t, env["message"]); !strings.Contains(msg, tc.msg) {
					t.Errorf("message %q does not contain %q", msg, tc.msg)
				}
				if got := jsonString(t, env["request_id"]); got != testRequestID {
					t.Errorf("request_id %q, want %q", got, testRequestID)
				}
				if string(env["retry_after"]) != "null" {
					t.Errorf("retry_after = %s, want null", env["retry_after"])
				}
			}
			if tc.check != nil {
				tc.check(t, resp, body)
			}
		})
		if tc.status < 300 {
			covered[tc.method+" "+f.srv.template(mustRequest(t, tc.method, tc.path))] = true
		}
	}

	// Every route of the table was called with good input at least once
	// (the streaming routes have their own test; the engine of this walk
	// holds no namespace it could drop, so TestBoundKeys drops one through
	// a service that does).
	for _, rt := range wire.Routes() {
		if rt.Path == wire.PathExportStream || rt.Path == wire.PathImportStream || rt.Path == wire.PathNamespace {
			continue
		}
		if !covered[rt.Method+" "+rt.Path] {
			t.Errorf("route %s %s has no successful case", rt.Method, rt.Path)
		}
	}
}

func mustRequest(t *testing.T, method, target string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(method, "http://x"+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
