package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

// TestClientBinaryForm: the client asks for base64 on every call whose
// answer holds content or an archive, and on no other; it sends data and
// embeddings in base64 once the server has said it reads them, in arrays
// before; and it reads answers in either form (a server that ignores the
// parameter answers in arrays) as the same values.
func TestClientBinaryForm(t *testing.T) {
	rec := memory.MemoryRecord{ID: memory.MustParseID("0196a9e2-5c1d-7f00-8a00-0000000000aa"), Store: memory.StoreSemantic,
		Content: memory.MemoryContent{Blocks: []memory.ContentBlock{{Modality: memory.ModalityText, Format: "text/plain",
			Data: memory.Bytes("hi"), Embedding: []float32{1, -2, float32(0x1p-149)}}}}}
	recall := memory.RecallQueryResponse{Memories: []memory.RecalledMemory{{Record: rec, RenderedContent: rec.Content}}}
	var mu sync.Mutex
	var query, body string
	compact := true
	ts, _ := canned(t, map[string]http.HandlerFunc{
		wire.PathRecallQuery: func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			query, body = r.URL.RawQuery, string(b)
			form := memory.BinaryArrays
			if compact && r.URL.Query().Get(wire.QueryBinary) == wire.BinaryBase64 {
				form = memory.BinaryBase64
			}
			mu.Unlock()
			out, _ := recall.AppendJSONForm(nil, form)
			w.Header().Set("Content-Type", wire.ContentTypeJSON)
			_, _ = w.Write(out)
		},
		wire.RecordPath(wire.PathRecord, rec.ID): func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			query = r.URL.RawQuery
			mu.Unlock()
			out, _ := rec.AppendJSONForm(nil, memory.BinaryBase64)
			_, _ = w.Write(out)
		},
		wire.PathHealth: answer(http.StatusOK, `{"status":"ok"}`, wire.HeaderBinary, wire.BinaryBase64),
		wire.PathEncode: func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			query, body = r.URL.RawQuery, string(b)
			mu.Unlock()
			_, _ = io.WriteString(w, `{"record_id":"0196a9e2-5c1d-7f00-8a00-0000000000bb","store":"semantic","initial_fidelity":1,"associations_created":0}`)
		},
	})
	c, err := client.New(ts.URL, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	want := decodeJSON[memory.RecallQueryResponse](t, recall)

	// Until the server says it reads base64 (wire.HeaderBinary, on the
	// health answer here), requests carry the CMP arrays.
	if _, err := c.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: rec.Content}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if !bytes.Contains([]byte(body), []byte(`"data":[104,105]`)) || !bytes.Contains([]byte(body), []byte(`"embedding":[1,-2,1e-45]`)) {
		t.Errorf("store before the server said it reads base64 sent %s", body)
	}
	mu.Unlock()
	if err := c.Health(ctx); err != nil {
		t.Fatal(err)
	}

	req := memory.DefaultRecallQueryRequest()
	req.Cue.Embedding = []float32{1, -2}
	for _, c2 := range []bool{true, false} {
		mu.Lock()
		compact = c2
		mu.Unlock()
		got, err := c.RecallQuery(ctx, &req)
		if err != nil || !reflect.DeepEqual(*got, want) {
			t.Fatalf("recall (server form base64 %v): %v\n%+v\nwant %+v", c2, err, got, want)
		}
		mu.Lock()
		if query != "binary=base64" || !bytes.Contains([]byte(body), []byte(`"embedding":"AACAPwAAAMA="`)) {
			t.Errorf("recall sent ?%s %s", query, body)
		}
		mu.Unlock()
	}

	got, err := c.Record(ctx, &memory.IntrospectRecordRequest{RecordID: rec.ID})
	if wantRec := decodeJSON[memory.MemoryRecord](t, rec); err != nil || !reflect.DeepEqual(*got, wantRec) {
		t.Errorf("record: %v\n%+v", err, got)
	}
	mu.Lock()
	if query != "binary=base64" {
		t.Errorf("record asked ?%s", query)
	}
	mu.Unlock()

	if _, err := c.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: rec.Content}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if query != "" || !bytes.Contains([]byte(body), []byte(`"data":"aGk=","embedding":"AACAPwAAAMABAAAA"`)) {
		t.Errorf("store sent ?%s %s", query, body)
	}
}

// decodeJSON is v through json.Marshal and json.Unmarshal: the values a
// client of the default form gets.
func decodeJSON[T any](t *testing.T, v T) T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestClientBinaryGateOnErrors: an error answer that carries
// wire.HeaderBinary opens the gate as a success does (a memsvc server
// sets it on every answer), and error answers without it, as any other
// server sends, leave requests in the CMP arrays.
func TestClientBinaryGateOnErrors(t *testing.T) {
	content := memory.MemoryContent{Blocks: []memory.ContentBlock{{Modality: memory.ModalityText, Data: memory.Bytes("hi"), Embedding: []float32{1, -2}}}}
	refusal := `{"code":"VALIDATION_ERROR","message":"no","details":null,"retry_after":null}`
	for _, says := range []bool{false, true} {
		var mu sync.Mutex
		var bodies []string
		ts, _ := canned(t, map[string]http.HandlerFunc{
			wire.PathEncode: func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				mu.Lock()
				bodies = append(bodies, string(b))
				mu.Unlock()
				if says {
					w.Header().Set(wire.HeaderBinary, wire.BinaryBase64)
				}
				w.Header().Set("Content-Type", wire.ContentTypeJSON)
				w.WriteHeader(http.StatusBadRequest)
				_, _ = io.WriteString(w, refusal)
			},
		})
		c, err := client.New(ts.URL, client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := c.EncodeStore(context.Background(), &memory.EncodeStoreRequest{Content: content}); err == nil {
				t.Fatal("a 400 answer gave no error")
			}
		}
		mu.Lock()
		if len(bodies) != 2 || !strings.Contains(bodies[0], `"data":[104,105]`) {
			t.Fatalf("header %v: first requests %q, want 2 in arrays", says, bodies)
		}
		wantSecond := `"data":[104,105],"embedding":[1,-2]`
		if says {
			wantSecond = `"data":"aGk=","embedding":"AACAPwAAAMA="`
		}
		if !strings.Contains(bodies[1], wantSecond) {
			t.Errorf("header %v on the refusal: second request %s, want %s in it", says, bodies[1], wantSecond)
		}
		mu.Unlock()
	}
}
