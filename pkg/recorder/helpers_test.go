package recorder

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/spool"
	"memsvc.dev/memsvc/pkg/wire"
)

// fakeServer speaks the raw batch route of the wire contract: it stores
// records by id (a known id is acknowledged as a duplicate), and fails the
// calls its fail function picks with the status it returns (a negative
// status: store the records, then fail with the status anyway).
type fakeServer struct {
	srv *httptest.Server

	mu      sync.Mutex
	stored  []memory.EncodeStoreRawRequest
	ids     map[memory.ID]bool
	calls   int
	batches []int // sizes of the calls that succeeded
	fail    func(call int, req *memory.EncodeBatchStoreRawRequest) int
	got     chan int // receives the size of every successful batch
}

func newFakeServer(t *testing.T) *fakeServer {
	f := &fakeServer{ids: map[memory.ID]bool{}, got: make(chan int, 1000)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+wire.PathEncodeRawBatch, f.batch)
	mux.HandleFunc("GET "+wire.PathHealth, func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{"status":"ok"}`) })
	mux.HandleFunc("GET "+wire.PathReadiness, func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{"status":"ready"}`) })
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// failCall is a fail function for fakeServer.setFail: the call-th call
// fails with status (negative: stored, then failed), every other succeeds.
func failCall(call, status int) func(int, *memory.EncodeBatchStoreRawRequest) int {
	return func(c int, _ *memory.EncodeBatchStoreRawRequest) int {
		if c == call {
			return status
		}
		return 0
	}
}

func (f *fakeServer) setFail(fn func(call int, req *memory.EncodeBatchStoreRawRequest) int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = fn
}

// spoolOffline records a user message with text through a recorder that
// has no server, so that it waits in dir.
func spoolOffline(t *testing.T, dir *spool.Dir, text string) {
	t.Helper()
	offline, _, _ := newRecorder(t, nil, dir)
	if err := offline.Record(t.Context(), []Event{TextEvent("s", UserMessage, text)}); err != nil {
		t.Fatal(err)
	}
}

// failOnText is a setFail function that answers status to every batch
// holding a record whose text is text.
func failOnText(text string, status int) func(int, *memory.EncodeBatchStoreRawRequest) int {
	return func(_ int, req *memory.EncodeBatchStoreRawRequest) int {
		for _, r := range req.Records {
			if s, _ := r.Content.Text(); s == text {
				return status
			}
		}
		return 0
	}
}

func (f *fakeServer) batch(w http.ResponseWriter, r *http.Request) {
	var req memory.EncodeBatchStoreRawRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeEnvelope(w, http.StatusBadRequest, "VALIDATION_ERROR", err.Error())
		return
	}
	f.mu.Lock()
	f.calls++
	status := 0
	if f.fail != nil {
		status = f.fail(f.calls, &req)
	}
	if status < 0 {
		// Commit, then lose the answer: the client sees a failure for
		// records that are stored.
		for _, rec := range req.Records {
			if !f.ids[*rec.RecordID] {
				f.stored = append(f.stored, rec)
				f.ids[*rec.RecordID] = true
			}
		}
		status = -status
	}
	if status != 0 {
		f.mu.Unlock()
		code := map[int]memory.Code{400: memory.CodeValidation, 401: memory.CodeUnauthorized, 429: memory.CodeRateLimited}[status]
		if code == "" {
			code = memory.CodeInternal
		}
		writeEnvelope(w, status, code, fmt.Sprintf("injected %d", status))
		return
	}
	resp := memory.EncodeBatchStoreRawResponse{}
	for _, rec := range req.Records {
		dup := rec.RecordID != nil && f.ids[*rec.RecordID]
		if !dup {
			f.stored = append(f.stored, rec)
			if rec.RecordID != nil {
				f.ids[*rec.RecordID] = true
			}
		}
		resp.Results = append(resp.Results, memory.EncodeStoreRawResponse{SessionID: rec.SessionID, Visibility: rec.Visibility, SecrecyLevel: rec.SecrecyLevel, Duplicate: dup})
	}
	f.batches = append(f.batches, len(req.Records))
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
	f.got <- len(req.Records)
}

func writeEnvelope(w http.ResponseWriter, status int, code memory.Code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	if status == 429 {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(wire.NewEnvelope(&memory.Error{Code: code, Message: msg}, ""))
}

// texts returns the content of the stored records, in order.
func (f *fakeServer) texts() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return testkit.RawTexts(f.stored)
}

// records returns a copy of the stored records, in order.
func (f *fakeServer) records() []memory.EncodeStoreRawRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]memory.EncodeStoreRawRequest(nil), f.stored...)
}

func (f *fakeServer) client(t *testing.T) *client.Client {
	t.Helper()
	c, err := NewClient(f.srv.URL, ClientOptions{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newClock() *testkit.Clock {
	return testkit.NewClock(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
}

func newSpool(t *testing.T) *spool.Dir {
	t.Helper()
	d, err := spool.Open(filepath.Join(t.TempDir(), "spool"), spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// newRecorder returns a recorder on dir sending to sender (nil: none), a
// clock and the log.
func newRecorder(t *testing.T, sender Sender, dir *spool.Dir, opts ...func(*Config)) (*Recorder, *testkit.Clock, *testkit.SyncBuffer) {
	t.Helper()
	clk := newClock()
	logs := &testkit.SyncBuffer{}
	cfg := Config{
		Sender: sender,
		Spool:  dir,
		Logger: slog.New(slog.NewTextHandler(logs, nil)),
		Now:    clk.Now,
		Ticks:  make(chan time.Time), // never ticks unless a test sends
	}
	for _, o := range opts {
		o(&cfg)
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r, clk, logs
}

// lines renders events as JSONL input.
func lines(events ...string) io.Reader {
	return strings.NewReader(strings.Join(events, "\n") + "\n")
}

func ev(session, typ, content string, extra ...string) string {
	s := fmt.Sprintf(`{"session_id":%q,"event_type":%q,"content":%q`, session, typ, content)
	for i := 0; i+1 < len(extra); i += 2 {
		s += fmt.Sprintf(",%q:%q", extra[i], extra[i+1])
	}
	return s + "}"
}

// pendingRecords reads every pending spool file of d.
func pendingRecords(t *testing.T, d *spool.Dir) []memory.EncodeStoreRawRequest {
	t.Helper()
	names, err := d.Pending()
	if err != nil {
		t.Fatal(err)
	}
	var out []memory.EncodeStoreRawRequest
	for _, n := range names {
		recs, err := d.Read(n)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			var req memory.EncodeStoreRawRequest
			if err := json.Unmarshal(r, &req); err != nil {
				t.Fatal(err)
			}
			out = append(out, req)
		}
	}
	return out
}
