package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

// okService accepts everything and answers empty results, so that a fuzzed
// request can fail only in the transport.
type okService struct{}

func (okService) EncodeStore(context.Context, *memory.EncodeStoreRequest) (*memory.EncodeStoreResponse, error) {
	return &memory.EncodeStoreResponse{Store: memory.StoreEpisodic}, nil
}
func (okService) EncodeBatch(context.Context, *memory.EncodeBatchRequest) (*memory.EncodeBatchResponse, error) {
	return &memory.EncodeBatchResponse{}, nil
}
func (okService) EncodeUpdate(context.Context, *memory.EncodeUpdateRequest) error { return nil }
func (okService) EncodeStoreRaw(context.Context, *memory.EncodeStoreRawRequest) (*memory.EncodeStoreRawResponse, error) {
	return &memory.EncodeStoreRawResponse{Visibility: memory.VisibilityNormal, SecrecyLevel: memory.SecrecyPublic}, nil
}
func (okService) EncodeBatchRaw(context.Context, *memory.EncodeBatchStoreRawRequest) (*memory.EncodeBatchStoreRawResponse, error) {
	return &memory.EncodeBatchStoreRawResponse{}, nil
}
func (okService) RecallQuery(context.Context, *memory.RecallQueryRequest) (*memory.RecallQueryResponse, error) {
	return &memory.RecallQueryResponse{}, nil
}
func (okService) RecallRaw(context.Context, *memory.RecallRawQueryRequest) (*memory.RecallRawQueryResponse, error) {
	return &memory.RecallRawQueryResponse{}, nil
}
func (okService) RecallAssociate(context.Context, *memory.RecallAssociateRequest) (*memory.RecallAssociateResponse, error) {
	return &memory.RecallAssociateResponse{}, nil
}
func (okService) RecallTimeline(context.Context, *memory.RecallTimelineRequest) (*memory.RecallTimelineResponse, error) {
	return &memory.RecallTimelineResponse{}, nil
}
func (okService) RecallGraph(context.Context, *memory.RecallGraphRequest) (*memory.RecallGraphResponse, error) {
	return &memory.RecallGraphResponse{}, nil
}
func (okService) Consolidate(context.Context, *memory.ConsolidateRequest) (*memory.ConsolidateResponse, error) {
	return &memory.ConsolidateResponse{}, nil
}
func (okService) DreamTick(context.Context, *memory.DreamTickRequest) (*memory.DreamTickResponse, error) {
	return &memory.DreamTickResponse{}, nil
}
func (okService) DecayTick(context.Context, *memory.DecayTickRequest) (*memory.DecayTickResponse, error) {
	return &memory.DecayTickResponse{}, nil
}
func (okService) SetMode(context.Context, *memory.SetModeRequest) error { return nil }
func (okService) Forget(context.Context, *memory.ForgetRequest) (*memory.ForgetResponse, error) {
	return &memory.ForgetResponse{}, nil
}
func (okService) Export(_ context.Context, _ *memory.ExportRequest, w io.Writer) (*memory.ExportResponse, error) {
	_, err := w.Write([]byte("archive\n"))
	return &memory.ExportResponse{ArchiveID: "a"}, err
}
func (okService) Import(_ context.Context, _ *memory.ImportRequest, r io.Reader) (*memory.ImportResponse, error) {
	_, err := io.Copy(io.Discard, r)
	return &memory.ImportResponse{}, err
}
func (okService) Stats(context.Context) (*memory.Stats, error)    { return &memory.Stats{}, nil }
func (okService) StatsAll(context.Context) (*memory.Stats, error) { return &memory.Stats{}, nil }
func (okService) Record(_ context.Context, req *memory.IntrospectRecordRequest) (*memory.MemoryRecord, error) {
	return &memory.MemoryRecord{ID: req.RecordID, Store: memory.StoreEpisodic, Meta: memory.LegacyMeta()}, nil
}
func (okService) DecayForecast(context.Context, *memory.DecayForecastRequest) (*memory.DecayForecastResponse, error) {
	return &memory.DecayForecastResponse{}, nil
}
func (okService) Evolution(context.Context) (*memory.EvolutionMetrics, error) {
	return &memory.EvolutionMetrics{}, nil
}
func (okService) Namespaces(context.Context) (*memory.NamespacesResponse, error) {
	return &memory.NamespacesResponse{Namespaces: []memory.NamespaceInfo{}}, nil
}
func (okService) DropNamespace(_ context.Context, req *memory.DropNamespaceRequest) (*memory.DropNamespaceResponse, error) {
	return &memory.DropNamespaceResponse{Name: req.Name}, nil
}

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
	srv, err := New(okService{}, Options{MaxBodyBytes: 4096})
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
