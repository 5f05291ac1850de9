package client_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/httpapi"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

// refuser answers 429 (or the given status and envelope) the first
// refusals times a path is called, then 200 with body.
type refuser struct {
	mu       sync.Mutex
	calls    map[string]int
	refusals int
}

func (r *refuser) handler(path string, refusal http.HandlerFunc, ok string) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.calls[path]++
		n := r.calls[path]
		r.mu.Unlock()
		if n <= r.refusals {
			refusal(w, req)
			return
		}
		answer(200, ok, "Content-Type", wire.ContentTypeJSON)(w, req)
	}
}

func (r *refuser) count(path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[path]
}

// sleeps records the waits a client asks for, without waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return nil
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

const limited = `{"code":"RATE_LIMITED","message":"rate limit exceeded","details":null,"retry_after":2}`

// TestRetries: a refused call that is safe to repeat waits the server's
// Retry-After plus at most a quarter, and is sent again; calls that are not
// safe to repeat are not; a refusal on every attempt gives up after the
// configured retries with a RetriesExhaustedError around the refusal.
func TestRetries(t *testing.T) {
	id := memory.MustParseID("0196a9e2-5c1d-7f00-8a00-0000000000aa")
	r := &refuser{calls: map[string]int{}, refusals: 2}
	refuse := answer(429, limited, "Retry-After", "2")
	ts, _ := canned(t, map[string]http.HandlerFunc{
		wire.PathStats:          r.handler(wire.PathStats, refuse, `{}`),
		wire.PathRecallQuery:    r.handler(wire.PathRecallQuery, refuse, `{"memories":[],"activation_trace":null,"total_candidates":0}`),
		wire.PathEncodeRaw:      r.handler(wire.PathEncodeRaw, refuse, `{"record_id":"`+id.String()+`","session_id":"s","visibility":"normal","secrecy_level":"public","duplicate":false}`),
		wire.PathEncodeRawBatch: r.handler(wire.PathEncodeRawBatch, refuse, `{"results":[]}`),
		wire.PathEncode:         r.handler(wire.PathEncode, refuse, `{}`),
		wire.PathForget:         r.handler(wire.PathForget, refuse, `{"records_deleted":0}`),
		wire.PathEvolution: r.handler(wire.PathEvolution, answer(503,
			`{"code":"DECAY_ENGINE_BUSY","message":"busy","details":null,"retry_after":2}`, "Retry-After", "2"), `{}`),
		wire.PathConsolidate: r.handler(wire.PathConsolidate, answer(503,
			`{"code":"CONSOLIDATION_IN_PROGRESS","message":"busy","details":null,"retry_after":1}`, "Retry-After", "1"), `{}`),
	})
	s := &sleeps{}
	c, err := client.New(ts.URL, client.Options{Sleep: s.sleep})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	withID := memory.DefaultEncodeStoreRawRequest()
	withID.RecordID = &id
	withoutID := memory.DefaultEncodeStoreRawRequest()
	recall := memory.DefaultRecallQueryRequest()
	consolidate := memory.DefaultConsolidateRequest()
	for _, tc := range []struct {
		name  string
		path  string
		call  func() error
		calls int // requests the server saw
		ok    bool
	}{
		{"stats", wire.PathStats, func() error { _, err := c.Stats(ctx); return err }, 3, true},
		{"recall", wire.PathRecallQuery, func() error { _, err := c.RecallQuery(ctx, &recall); return err }, 3, true},
		{"raw store with an id", wire.PathEncodeRaw, func() error { _, err := c.EncodeStoreRaw(ctx, &withID); return err }, 3, true},
		{"busy server, read", wire.PathEvolution, func() error { _, err := c.Evolution(ctx); return err }, 3, true},
		{"busy consolidate is a write", wire.PathConsolidate, func() error { _, err := c.Consolidate(ctx, &consolidate); return err }, 1, false},
		{"curated store has no client id", wire.PathEncode, func() error { _, err := c.EncodeStore(ctx, &memory.EncodeStoreRequest{}); return err }, 1, false},
		{"forget", wire.PathForget, func() error { _, err := c.Forget(ctx, &memory.ForgetRequest{}); return err }, 1, false},
		{"raw batch with one entry lacking an id", wire.PathEncodeRawBatch, func() error {
			_, err := c.EncodeBatchRaw(ctx, &memory.EncodeBatchStoreRawRequest{Records: []memory.EncodeStoreRawRequest{withID, withoutID}})
			return err
		}, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(s.all())
			err := tc.call()
			if (err == nil) != tc.ok {
				t.Fatalf("err %v, want ok=%v", err, tc.ok)
			}
			if got := r.count(tc.path); got != tc.calls {
				t.Fatalf("server saw %d requests, want %d", got, tc.calls)
			}
			waits := s.all()[before:]
			if len(waits) != tc.calls-1 {
				t.Fatalf("waits %v, want %d", waits, tc.calls-1)
			}
			for _, w := range waits {
				if w < 2*time.Second || w > 2500*time.Millisecond {
					t.Errorf("wait %v, want Retry-After 2 s plus at most a quarter", w)
				}
			}
			if !tc.ok && memory.CodeOf(err) == memory.CodeInternal {
				t.Errorf("the refusal was not passed on: %v", err)
			}
		})
	}

	// Refused on every attempt: three retries, then a RetriesExhaustedError.
	always := &refuser{calls: map[string]int{}, refusals: 1 << 30}
	ts2, _ := canned(t, map[string]http.HandlerFunc{wire.PathStats: always.handler(wire.PathStats, refuse, `{}`)})
	s2 := &sleeps{}
	c2, err := client.New(ts2.URL, client.Options{Sleep: s2.sleep})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c2.Stats(ctx)
	var ex *client.RetriesExhaustedError
	if !errors.As(err, &ex) || ex.Attempts != 4 || !errors.Is(err, memory.ErrRateLimited) || always.count(wire.PathStats) != 4 {
		t.Fatalf("exhausted: %v (%d requests)", err, always.count(wire.PathStats))
	}
	if !strings.Contains(err.Error(), "gave up after 4 attempts") {
		t.Errorf("message %q", err.Error())
	}
}

// TestRetryBounds: a Retry-After longer than MaxRetryWait, or past the
// call's deadline, is not waited for; Retries < 0 turns retrying off.
func TestRetryBounds(t *testing.T) {
	var calls atomic.Int32
	long := answer(429, `{"code":"RATE_LIMITED","message":"slow down","details":null,"retry_after":60}`, "Retry-After", "60")
	ts, _ := canned(t, map[string]http.HandlerFunc{
		wire.PathStats: func(w http.ResponseWriter, r *http.Request) { calls.Add(1); long(w, r) },
		wire.PathEvolution: func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			answer(429, limited, "Retry-After", "2")(w, r)
		},
	})
	s := &sleeps{}
	c, err := client.New(ts.URL, client.Options{Sleep: s.sleep})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stats(context.Background()); memory.CodeOf(err) != memory.CodeRateLimited || calls.Load() != 1 || len(s.all()) != 0 {
		t.Fatalf("a 60 s Retry-After: %v, %d calls, waits %v", err, calls.Load(), s.all())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	calls.Store(0)
	if _, err := c.Evolution(ctx); memory.CodeOf(err) != memory.CodeRateLimited || calls.Load() != 1 {
		t.Fatalf("a wait past the deadline: %v, %d calls", err, calls.Load())
	}
	off, err := client.New(ts.URL, client.Options{Sleep: s.sleep, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	calls.Store(0)
	if _, err := off.Evolution(context.Background()); memory.CodeOf(err) != memory.CodeRateLimited || calls.Load() != 1 {
		t.Fatalf("retries off: %v, %d calls", err, calls.Load())
	}
}

// TestExportRetried: a streaming export refused once is sent again, and
// the archive that reaches the writer is whole, from a real server.
func TestExportRetried(t *testing.T) {
	eng := newEngine(t)
	if _, err := eng.EncodeStore(context.Background(), &memory.EncodeStoreRequest{Content: memory.TextContent("kept through a refusal")}); err != nil {
		t.Fatal(err)
	}
	srv, err := httpapi.New(eng, httpapi.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var refused atomic.Bool
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == wire.PathExportStream && refused.CompareAndSwap(false, true) {
			answer(429, limited, "Retry-After", "2")(w, r)
			return
		}
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	s := &sleeps{}
	c, err := client.New(ts.URL, client.Options{Sleep: s.sleep})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	req := memory.DefaultExportRequest()
	resp, err := c.Export(context.Background(), &req, &buf)
	if err != nil || resp.RecordCount != 1 || uint64(buf.Len()) != resp.SizeBytes || len(s.all()) != 1 {
		t.Fatalf("export: %+v, %d bytes, waits %v, %v", resp, buf.Len(), s.all(), err)
	}
}

// TestRecallQueryDecode: RecallQueryDecode sends the recall RecallQuery
// sends, retries a refusal as it does, hands the caller the answer's JSON
// once, and reports a refusal or an answer the caller cannot decode as
// RecallQuery reports them.
func TestRecallQueryDecode(t *testing.T) {
	const body = `{"memories":[],"activation_trace":null,"total_candidates":3}`
	r := &refuser{calls: map[string]int{}, refusals: 1}
	var sent atomic.Pointer[string]
	ts, _ := canned(t, map[string]http.HandlerFunc{
		wire.PathRecallQuery: func(w http.ResponseWriter, req *http.Request) {
			b, _ := io.ReadAll(req.Body)
			s := string(b)
			sent.Store(&s)
			r.handler(wire.PathRecallQuery, answer(429, limited, "Retry-After", "1"), body)(w, req)
		},
	})
	s := &sleeps{}
	c, err := client.New(ts.URL, client.Options{Sleep: s.sleep})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	req := memory.DefaultRecallQueryRequest()
	q := "deploy key"
	req.Cue.Text = &q
	var got []string
	err = c.RecallQueryDecode(ctx, &req, "", func(data []byte) error {
		got = append(got, string(data))
		return nil
	})
	if err != nil || len(got) != 1 || got[0] != body || r.count(wire.PathRecallQuery) != 2 || len(s.all()) != 1 {
		t.Fatalf("err %v, decoded %q, %d requests, waits %v", err, got, r.count(wire.PathRecallQuery), s.all())
	}
	decodeSent := *sent.Load()
	if _, err := c.RecallQuery(ctx, &req); err != nil {
		t.Fatal(err)
	}
	if *sent.Load() != decodeSent {
		t.Errorf("request %s, RecallQuery sends %s", decodeSent, *sent.Load())
	}

	err = c.RecallQueryDecode(ctx, &req, "", func([]byte) error { return errors.New("not a recall answer") })
	if memory.CodeOf(err) != memory.CodeInternal || err.Error() != "decode answer of POST /v1/recall/query: not a recall answer" {
		t.Errorf("decode failure: %v", err)
	}

	// A refusal never reaches decode and is RecallQuery's error.
	refused, _ := canned(t, map[string]http.HandlerFunc{
		wire.PathRecallQuery: answer(404, `{"code":"RECORD_NOT_FOUND","message":"gone","details":null,"retry_after":null}`, "Content-Type", wire.ContentTypeJSON),
	})
	c2, err := client.New(refused.URL, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	called := false
	err = c2.RecallQueryDecode(ctx, &req, "", func([]byte) error { called = true; return nil })
	_, want := c2.RecallQuery(ctx, &req)
	if called || err == nil || want == nil || err.Error() != want.Error() || !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("refusal: decode called %v, err %v, RecallQuery's %v", called, err, want)
	}
}
