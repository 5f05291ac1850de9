package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

// emb12 is base64 of the little-endian float32 values 1 and -2.
const emb12 = `"AACAPwAAAMA="`

// TestBinaryInput: every route that takes content or a cue reads data and
// embeddings as base64 strings (the embedding as little-endian float32
// values), and refuses a bad one with a 400 that names the field.
func TestBinaryInput(t *testing.T) {
	f := newFixture(t, newEngine(t), Options{})
	block := `{"modality":"text","format":"text/plain","data":"aGVsbG8gd29ybGQ=","embedding":` + emb12 + `}`
	content := `{"blocks":[` + block + `]}`
	resp, data := f.do(t, post(wire.PathEncode, `{"content":`+content+`}`))
	var stored memory.EncodeStoreResponse
	if resp.StatusCode != http.StatusOK || json.Unmarshal(data, &stored) != nil {
		t.Fatalf("store: %d %s", resp.StatusCode, data)
	}
	checkRecord := func(id memory.ID, text string) {
		t.Helper()
		resp, data := f.do(t, get(wire.RecordPath(wire.PathRecord, id)))
		var rec memory.MemoryRecord
		if resp.StatusCode != http.StatusOK || json.Unmarshal(data, &rec) != nil {
			t.Fatalf("record: %d %s", resp.StatusCode, data)
		}
		b := rec.Content.Blocks[0]
		if string(b.Data) != text || !reflect.DeepEqual(b.Embedding, []float32{1, -2}) {
			t.Errorf("record %s: data %q, embedding %v", id, b.Data, b.Embedding)
		}
	}
	checkRecord(stored.RecordID, "hello world")
	// Every answer, an error's too, says the server reads base64: what
	// lets a client send it (pkg/client).
	for _, rq := range []request{get(wire.PathHealth), post(wire.PathEncode, `{}`)} {
		if resp, _ := f.do(t, rq); resp.Header.Get(wire.HeaderBinary) != wire.BinaryBase64 {
			t.Errorf("%s %s: %s %q, want %q", rq.method, rq.path, wire.HeaderBinary, resp.Header.Get(wire.HeaderBinary), wire.BinaryBase64)
		}
	}

	resp, data = f.do(t, post(wire.PathEncodeBatch, `{"records":[{"content":`+content+`}]}`))
	var batch memory.EncodeBatchResponse
	if resp.StatusCode != http.StatusOK || json.Unmarshal(data, &batch) != nil || len(batch.Results) != 1 {
		t.Fatalf("batch: %d %s", resp.StatusCode, data)
	}
	checkRecord(batch.Results[0].RecordID, "hello world")

	upd := `{"content":{"blocks":[{"modality":"text","format":"text/plain","data":"Ynll","embedding":` + emb12 + `}]}}`
	if resp, data := f.do(t, request{method: http.MethodPatch, path: wire.RecordPath(wire.PathEncodeUpdate, stored.RecordID), body: upd}); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("update: %d %s", resp.StatusCode, data)
	}
	checkRecord(stored.RecordID, "bye")

	for _, rq := range []request{
		post(wire.PathEncodeRaw, `{"session_id":"s","content":`+content+`}`),
		post(wire.PathEncodeRawBatch, `{"records":[{"session_id":"s","content":`+content+`}]}`),
		post(wire.PathRecallQuery, `{"cue":{"embedding":`+emb12+`,"image":"aGk="},"reconsolidate":false}`),
	} {
		if resp, data := f.do(t, rq); resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d %s", rq.path, resp.StatusCode, data)
		}
	}
	resp, data = f.do(t, post(wire.PathRecallRaw, `{"query":"hello"}`))
	var raw memory.RecallRawQueryResponse
	if resp.StatusCode != http.StatusOK || json.Unmarshal(data, &raw) != nil || len(raw.Records) != 2 ||
		!reflect.DeepEqual(raw.Records[0].Content.Blocks[0].Embedding, []float32{1, -2}) {
		t.Errorf("raw entries: %d %s", resp.StatusCode, data)
	}

	for _, rq := range []request{
		post(wire.PathEncode, `{"content":{"blocks":[{"modality":"text","data":"aGk=","embedding":"AAAA!"}]}}`),
		post(wire.PathEncodeRaw, `{"session_id":"s","content":{"blocks":[{"modality":"text","data":"aGk=","embedding":"AAA="}]}}`),
		post(wire.PathRecallQuery, `{"cue":{"embedding":"AAAAAAA="}}`),
	} {
		resp, data := f.do(t, rq)
		env := envelope(t, resp, data)
		var msg string
		_ = json.Unmarshal(env["message"], &msg)
		if resp.StatusCode != http.StatusBadRequest || string(env["code"]) != `"VALIDATION_ERROR"` ||
			!strings.Contains(msg, "embedding") || !strings.Contains(msg, "float32") {
			t.Errorf("%s with a bad embedding: %d %s", rq.path, resp.StatusCode, data)
		}
	}
}

// TestBinaryQueryParameter: ?binary=base64 changes the shape of every
// answer that carries content or an archive (bytes and embeddings become
// strings) and not its values; without it the answer is what it was
// (arrays); any other value is refused with a 400 naming the parameter
// and its value.
func TestBinaryQueryParameter(t *testing.T) {
	f := newFixture(t, newEngine(t), Options{})
	var ids []memory.ID
	for _, text := range []string{"deploy notes for friday", "the deploy key rotates"} {
		body := `{"content":{"blocks":[{"modality":"text","format":"text/plain","data":"` + b64(text) + `","embedding":` + emb12 + `}]}}`
		resp, data := f.do(t, post(wire.PathEncode, body))
		var out memory.EncodeStoreResponse
		if resp.StatusCode != http.StatusOK || json.Unmarshal(data, &out) != nil {
			t.Fatalf("store: %d %s", resp.StatusCode, data)
		}
		ids = append(ids, out.RecordID)
		if resp, data := f.do(t, post(wire.PathEncodeRaw, `{"session_id":"s","content":{"blocks":[{"modality":"text","data":"`+b64(text)+`"}]}}`)); resp.StatusCode != http.StatusOK {
			t.Fatalf("raw store: %d %s", resp.StatusCode, data)
		}
	}
	link := `{"content":{"blocks":[{"modality":"text","data":"` + b64("deploy linked") + `"}]},"associations":[{"target_id":"` + ids[0].String() + `","association_type":"causal","weight":0.9}]}`
	resp, data := f.do(t, post(wire.PathEncode, link))
	var linked memory.EncodeStoreResponse
	if resp.StatusCode != http.StatusOK || json.Unmarshal(data, &linked) != nil {
		t.Fatalf("linked store: %d %s", resp.StatusCode, data)
	}
	type route struct {
		rq     request
		decode func([]byte) (any, error)
	}
	into := func(v any) func([]byte) (any, error) {
		return func(b []byte) (any, error) {
			p := reflect.New(reflect.TypeOf(v))
			err := json.Unmarshal(b, p.Interface())
			return p.Elem().Interface(), err
		}
	}
	routes := []route{
		{post(wire.PathRecallQuery, `{"cue":{"text":"deploy"},"reconsolidate":false}`), into(memory.RecallQueryResponse{})},
		{post(wire.PathRecallQuery, `{"cue":{"text":"deploy","embedding":[1,-2]},"reconsolidate":false}`), into(memory.RecallQueryResponse{})},
		{post(wire.PathRecallRaw, `{"query":"deploy"}`), into(memory.RecallRawQueryResponse{})},
		{post(wire.RecordPath(wire.PathRecallAssociate, linked.RecordID), `{"min_weight":0}`), into(memory.RecallAssociateResponse{})},
		{post(wire.PathRecallTimeline, `{"range":{"start":"2026-10-01T00:00:00Z","end":"2026-12-01T00:00:00Z"},"granularity":"day"}`), into(memory.RecallTimelineResponse{})},
		{get(wire.RecordPath(wire.PathRecord, ids[1])), into(memory.MemoryRecord{})},
		{post(wire.PathExport, `{}`), into(wire.ExportArchiveResponse{})},
	}
	for _, rt := range routes {
		resp, arrays := f.do(t, rt.rq)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", rt.rq.path, resp.StatusCode, arrays)
		}
		compactRq := rt.rq
		compactRq.path += "?" + wire.QueryBinary + "=" + wire.BinaryBase64
		resp, compact := f.do(t, compactRq)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", compactRq.path, resp.StatusCode, compact)
		}
		// The default: integer arrays, and nothing else changes.
		for _, key := range []string{`"data":[`, `"archive_data":[`, `"embedding":[`} {
			if bytes.Contains(compact, []byte(key)) {
				t.Errorf("%s: %s in the base64 answer:\n%.300s", compactRq.path, key, compact)
			}
		}
		if !bytes.Contains(arrays, []byte(`"data":[`)) && !bytes.Contains(arrays, []byte(`"archive_data":[`)) {
			t.Errorf("%s: no integer array in the default answer:\n%.300s", rt.rq.path, arrays)
		}
		if !bytes.Contains(compact, []byte(`"data":"`)) && !bytes.Contains(compact, []byte(`"archive_data":"`)) {
			t.Errorf("%s: no base64 string in the base64 answer:\n%.300s", compactRq.path, compact)
		}
		if rt.rq.path != wire.PathExport && rt.rq.path != wire.PathRecallRaw && !bytes.Contains(compact, []byte(`"embedding":`+emb12)) {
			t.Errorf("%s: the embedding is not %s:\n%.300s", compactRq.path, emb12, compact)
		}
		if len(compact) >= len(arrays) {
			t.Errorf("%s: base64 answer %d bytes, default %d", rt.rq.path, len(compact), len(arrays))
		}
		want, err1 := rt.decode(arrays)
		got, err2 := rt.decode(compact)
		if rt.rq.path == wire.PathExport {
			// Each export is a new archive (its id and time differ):
			// compare the forms of one answer.
			var ex wire.ExportArchiveResponse
			_ = json.Unmarshal(arrays, &ex)
			b, err := ex.AppendJSONForm(nil, memory.BinaryBase64)
			if err != nil {
				t.Fatal(err)
			}
			got, err2 = rt.decode(b)
		}
		if err1 != nil || err2 != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the forms decode differently (%v, %v)", rt.rq.path, err1, err2)
		}
	}

	for _, bad := range []string{"hex", "BASE64", ""} {
		for _, rq := range []request{post(wire.PathRecallQuery, `{"cue":{"text":"deploy"}}`), get(wire.RecordPath(wire.PathRecord, ids[0]))} {
			rq.path += "?" + wire.QueryBinary + "=" + bad
			resp, data := f.do(t, rq)
			env := envelope(t, resp, data)
			var msg string
			_ = json.Unmarshal(env["message"], &msg)
			if resp.StatusCode != http.StatusBadRequest || string(env["code"]) != `"VALIDATION_ERROR"` ||
				!strings.HasPrefix(msg, wire.QueryBinary+": ") || !strings.Contains(msg, "want "+wire.BinaryBase64) {
				t.Errorf("%s: %d %s", rq.path, resp.StatusCode, data)
			}
		}
	}
}

func b64(s string) string {
	b, _ := json.Marshal([]byte(s))
	return strings.Trim(string(b), `"`)
}
