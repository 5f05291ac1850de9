package client_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

// TestRecallQueryDecodeBrief: the brief recall is RecallQuery's request
// to the same route with ?view=brief (RecallQuery asks for the full
// answer with binary values in base64), and decode gets the answer as it
// came.
func TestRecallQueryDecodeBrief(t *testing.T) {
	const body = `{"view":"brief","memories":[],"total_candidates":2}`
	var sent string
	ts, last := canned(t, map[string]http.HandlerFunc{
		wire.PathRecallQuery: func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			sent = string(b)
			w.Header().Set("Content-Type", wire.ContentTypeJSON)
			_, _ = io.WriteString(w, body)
		},
	})
	c, err := client.New(ts.URL, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	req := memory.DefaultRecallQueryRequest()
	q := "deploy"
	req.Cue.Text = &q
	var got string
	if err := c.RecallQueryDecode(context.Background(), &req, memory.ViewBrief, func(data []byte) error { got = string(data); return nil }); err != nil {
		t.Fatal(err)
	}
	r := last.Load()
	if got != body || r.Method != http.MethodPost || r.URL.RawQuery != wire.QueryView+"="+memory.ViewBrief {
		t.Errorf("%s %s: decoded %s", r.Method, r.URL, got)
	}
	briefSent := sent
	// The canned body reads as a full answer too; only the request matters.
	_, _ = c.RecallQuery(context.Background(), &req)
	if sent != briefSent || last.Load().URL.RawQuery != wire.QueryBinary+"="+wire.BinaryBase64 {
		t.Errorf("brief request %s, RecallQuery sends %s to %s", briefSent, sent, last.Load().URL)
	}
}
