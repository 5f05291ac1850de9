package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

// FuzzDecode sends arbitrary bodies to every JSON body route: the answer
// is always a success with a well-formed body or a 400/413 envelope, never
// a panic or a 500.
func FuzzDecode(f *testing.F) {
	var routes []wire.Route
	for _, rt := range wire.Routes() {
		if rt.Body && rt.Path != wire.PathImportStream {
			routes = append(routes, rt)
		}
	}
	for i, body := range []string{
		`{}`, `{"content":{"blocks":[{"modality":"text","format":"t","data":[104,105]}]}}`,
		`{"records":[{"content":{"blocks":[]}}]}`, `{"cue":{"text":"x","image":"aGk="},"limit":0}`,
		`{"limit":-1}`, `{"record_id":"nope"}`, `{"range":{"start":"2026-01-01T00:00:00Z","end":"x"}}`,
		`[`, `null`, ``, "\xff\xfe", `{"archive_id":"a","archive_data":[1,2,300]}`, `{"mode":"perfect"} x`,
		`{"confirm":true,"record_ids":["0196a9e2-5c1d-7f00-8a00-0000000000aa"]}`,
	} {
		f.Add(uint8(i), []byte(body), false)
	}
	f.Add(uint8(0), bytes.Repeat([]byte(" "), 5000), true)
	srv, err := New(testkit.AcceptAll{}, Options{MaxBodyBytes: 4096})
	if err != nil {
		f.Fatal(err)
	}
	const id = "0196a9e2-5c1d-7f00-8a00-0000000000aa"
	f.Fuzz(func(t *testing.T, pick uint8, body []byte, oddType bool) {
		rt := routes[int(pick)%len(routes)]
		path := rt.Path
		if rt.Path == wire.PathNamespace {
			path = wire.NamespacePath("fuzz")
		} else if bytes.Contains([]byte(path), []byte("{")) {
			path = wire.RecordPath(path, memory.MustParseID(id))
		}
		r := httptest.NewRequest(rt.Method, path, bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		if oddType {
			r.Header.Set("Content-Type", "application/problem+json; charset=utf-8")
		}
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, r)
		res := w.Result()
		out := w.Body.Bytes()
		switch res.StatusCode {
		case http.StatusOK:
			if rt.Path == wire.PathExportStream {
				return
			}
			if !json.Valid(out) {
				t.Fatalf("%s %s: 200 with invalid JSON %q", rt.Method, path, out)
			}
		case http.StatusNoContent:
			if len(out) != 0 {
				t.Fatalf("%s %s: 204 with a body", rt.Method, path)
			}
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
			env, ok := wire.DecodeEnvelope(out)
			if !ok {
				t.Fatalf("%s %s: %d without an envelope: %q", rt.Method, path, res.StatusCode, out)
			}
			if wire.Status(env.Code) != res.StatusCode || env.Message == "" {
				t.Fatalf("%s %s: status %d with envelope %+v", rt.Method, path, res.StatusCode, env)
			}
		default:
			t.Fatalf("%s %s: status %d: %s", rt.Method, path, res.StatusCode, out)
		}
	})
}
