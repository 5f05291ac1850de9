package client_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/memory"
)

// TestRecallAnswersOutliveTheirBuffer: recall answers are read into
// buffers the client reuses, so nothing decoded may point into one. Each
// answer, the ones the strict parser reads and the ones it hands to
// json.Unmarshal (base64 data, a key in capitals), must still hold what
// it held after later answers were read into the same buffers.
func TestRecallAnswersOutliveTheirBuffer(t *testing.T) {
	base, err := json.Marshal(testkit.RecallAnswer(8))
	if err != nil {
		t.Fatal(err)
	}
	bodies := []string{
		string(base),
		strings.ReplaceAll(string(base), `"format":"text/plain"`, `"format":"text/markdown"`),
		strings.Replace(string(base), `"data":[`, `"data":"aGVsbG8gd29ybGQ=","x":[`, 1),
		strings.Replace(string(base), `"summary":null`, `"Summary":"a summary"`, 1),
		strings.ReplaceAll(string(base), `"metadata":{}`, `"metadata":{"note":"keep me"}`),
	}
	var n atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := bodies[int(n.Add(1)-1)%len(bodies)]
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body))) // as memsvc sends it
		_, _ = w.Write([]byte(body))
	}))
	defer ts.Close()
	c, err := client.New(ts.URL, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	req := memory.DefaultRecallQueryRequest()
	q := "deploy"
	req.Cue.Text = &q
	var got []*memory.RecallQueryResponse
	for range 3 * len(bodies) {
		resp, err := c.RecallQuery(context.Background(), &req)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, resp)
	}
	for i, resp := range got {
		var want memory.RecallQueryResponse
		if err := json.Unmarshal([]byte(bodies[i%len(bodies)]), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(*resp, want) {
			t.Fatalf("answer %d changed after later answers were read:\n got %+v\nwant %+v", i, *resp, want)
		}
	}
}
