package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

// TestExportFallsBackOnNoRoute: a server without the streaming export
// route answers 404, with an empty body (upstream, older memsvc) or with
// the no-route envelope of current servers; either way the client uses
// the JSON route.
func TestExportFallsBackOnNoRoute(t *testing.T) {
	noRoute, _ := json.Marshal(wire.NewEnvelope(wire.NoRoute(http.MethodPost, wire.PathExportStream), ""))
	jsonExport, _ := json.Marshal(wire.ExportArchiveResponse{ExportResponse: memory.ExportResponse{ArchiveID: "a1", SizeBytes: 3}, ArchiveData: []byte("abc")})
	for name, stream := range map[string]http.HandlerFunc{
		"empty 404":     answer(404, ``),
		"envelope 404":  answer(404, string(noRoute), "Content-Type", wire.ContentTypeJSON),
		"envelope 405":  answer(405, `{"code":"VALIDATION_ERROR","message":"\"POST\" is not allowed","details":null,"retry_after":null}`),
		"no route body": answer(404, string(noRoute)),
	} {
		t.Run(name, func(t *testing.T) {
			ts, _ := canned(t, map[string]http.HandlerFunc{
				wire.PathExportStream: stream,
				wire.PathExport:       answer(200, string(jsonExport), "Content-Type", wire.ContentTypeJSON),
			})
			c, err := client.New(ts.URL, client.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			req := memory.DefaultExportRequest()
			resp, err := c.Export(context.Background(), &req, &buf)
			if err != nil || resp.ArchiveID != "a1" || buf.String() != "abc" {
				t.Fatalf("export: %+v %q %v", resp, buf.String(), err)
			}
		})
	}
	// A 404 about a record is not a missing route.
	ts, _ := canned(t, map[string]http.HandlerFunc{
		wire.PathExportStream: answer(404, `{"code":"RECORD_NOT_FOUND","message":"record not found: x","details":null,"retry_after":null}`),
		wire.PathExport:       answer(200, string(jsonExport)),
	})
	c, err := client.New(ts.URL, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	req := memory.DefaultExportRequest()
	if _, err := c.Export(context.Background(), &req, &bytes.Buffer{}); memory.CodeOf(err) != memory.CodeNotFound {
		t.Fatalf("a RECORD_NOT_FOUND 404: %v", err)
	}
}
