package client_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

func TestParseBaseURL(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" means an error is expected
		msg  string
	}{
		{"http://127.0.0.1:8420", "http://127.0.0.1:8420", ""},
		{"http://127.0.0.1:8420/", "http://127.0.0.1:8420", ""},
		{"  https://memory.example.com  ", "https://memory.example.com", ""},
		{"https://proxy.example.com/memsvc/", "https://proxy.example.com/memsvc", ""},
		{"https://proxy.example.com/a/b//", "https://proxy.example.com/a/b", ""},
		{"http://[::1]:8420", "http://[::1]:8420", ""},
		{"", "", "empty"},
		{"127.0.0.1:8420", "", "http:// or https://"},
		{"localhost:8420", "", "http:// or https://"},
		{"ftp://host", "", "http:// or https://"},
		{"http://", "", "no host"},
		{"http:///path", "", "no host"},
		{"http://user:secret@host", "", "user info"},
		{"http://host?x=1", "", "query"},
		{"http://host?", "", "query"},
		{"http://host#frag", "", "fragment"},
		{"http://host:0", "", "port"},
		{"http://host:99999", "", "port"},
		{"http://host:port", "", ""},
		{"http://ho st", "", ""},
	}
	for _, tc := range tests {
		u, err := client.ParseBaseURL(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("ParseBaseURL(%q) = %s, want an error", tc.in, u)
			} else if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("ParseBaseURL(%q): %v, want it to mention %q", tc.in, err, tc.msg)
			} else if strings.Contains(err.Error(), "secret") {
				t.Errorf("ParseBaseURL(%q): error leaks the password: %v", tc.in, err)
			}
			continue
		}
		if err != nil || u.String() != tc.want {
			t.Errorf("ParseBaseURL(%q) = %v, %v; want %s", tc.in, u, err, tc.want)
		}
	}
}

func TestNewAPIKeyTransport(t *testing.T) {
	tests := []struct {
		url string
		key string
		ok  bool
	}{
		{"http://127.0.0.1:8420", "k", true},
		{"http://127.9.9.9:8420", "k", true},
		{"http://localhost:8420", "k", true},
		{"http://LOCALHOST", "k", true},
		{"http://[::1]:8420", "k", true},
		{"https://memory.example.com", "k", true},
		{"https://10.0.0.5", "k", true},
		{"http://memory.example.com", "", true},
		{"http://memory.example.com", "k", false},
		{"http://10.0.0.5:8420", "k", false},
		{"http://0.0.0.0:8420", "k", false},
		{"http://localhost.example.com", "k", false},
	}
	for _, tc := range tests {
		_, err := client.New(tc.url, client.Options{APIKey: tc.key})
		if (err == nil) != tc.ok {
			t.Errorf("New(%s, key %q): %v, want ok=%v", tc.url, tc.key, err, tc.ok)
		}
		if err != nil && strings.Contains(err.Error(), tc.key+"\"") {
			t.Errorf("error mentions the key: %v", err)
		}
	}
	if _, err := client.New("http://127.0.0.1", client.Options{Timeout: -time.Second}); err == nil {
		t.Error("negative timeout accepted")
	}
}

// canned serves fixed answers per path and records the last request.
func canned(t *testing.T, routes map[string]http.HandlerFunc) (*httptest.Server, *atomic.Pointer[http.Request]) {
	t.Helper()
	var last atomic.Pointer[http.Request]
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		last.Store(r.Clone(context.Background()))
		h, ok := routes[r.URL.Path]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		h(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, &last
}

func answer(status int, body string, hdr ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		for i := 0; i+1 < len(hdr); i += 2 {
			w.Header().Set(hdr[i], hdr[i+1])
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func TestErrorDecoding(t *testing.T) {
	id := memory.MustParseID("0196a9e2-5c1d-7f00-8a00-0000000000aa")
	var redirected atomic.Int32
	ts, last := canned(t, map[string]http.HandlerFunc{
		wire.RecordPath(wire.PathRecord, id): answer(404, `{"code":"RECORD_NOT_FOUND","message":"record not found: x","details":null,"retry_after":null}`, "Content-Type", "application/json"),
		wire.PathStats:                       answer(429, `{"code":"RATE_LIMITED","message":"rate limit exceeded","details":null,"retry_after":3}`, "Retry-After", "3"),
		wire.PathEvolution:                   answer(502, `<html><body>Bad Gateway</body></html>`, "Content-Type", "text/html"),
		wire.PathEncode:                      answer(401, ``),
		wire.PathEncodeBatch:                 answer(429, `slow down`, "Retry-After", "7"),
		wire.PathEncodeRaw:                   answer(413, `<html>413 Request Entity Too Large</html>`),
		wire.PathDecayTick:                   answer(302, ``, "Location", "https://elsewhere.example/v1/lifecycle/decay-tick"),
		wire.PathRecallGraph:                 answer(200, `{"nodes":[`),
		wire.PathForget:                      answer(400, `{"code":"FORGET_UNCONFIRMED","message":"set confirm","details":null,"retry_after":null}`),
		wire.PathConsolidate:                 answer(503, `{"code":"CONSOLIDATION_IN_PROGRESS","message":"busy","details":null,"retry_after":null}`, "Retry-After", "9"),
		"/elsewhere": func(w http.ResponseWriter, r *http.Request) {
			redirected.Add(1)
		},
	})
	// Refusals are decoded as they come: no retries here (TestRetries).
	c, err := client.New(ts.URL, client.Options{APIKey: "secret-key", Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tests := []struct {
		name       string
		call       func() error
		is         error
		code       memory.Code
		msg        string
		retryAfter uint32
	}{
		{"envelope 404", func() error { _, err := c.Record(ctx, &memory.IntrospectRecordRequest{RecordID: id}); return err },
			memory.ErrNotFound, memory.CodeNotFound, "record not found: x", 0},
		{"envelope 429", func() error { _, err := c.Stats(ctx); return err },
			memory.ErrRateLimited, memory.CodeRateLimited, "rate limit exceeded", 3},
		{"html 502", func() error { _, err := c.Evolution(ctx); return err },
			memory.ErrInternal, memory.CodeInternal, "502 Bad Gateway", 0},
		{"bare 401", func() error { _, err := c.EncodeStore(ctx, &memory.EncodeStoreRequest{}); return err },
			memory.ErrUnauthorized, memory.CodeUnauthorized, "401", 0},
		{"bare 429", func() error { _, err := c.EncodeBatch(ctx, &memory.EncodeBatchRequest{}); return err },
			memory.ErrRateLimited, memory.CodeRateLimited, "429", 7},
		{"proxy 413", func() error {
			r := memory.DefaultEncodeStoreRawRequest()
			_, err := c.EncodeStoreRaw(ctx, &r)
			return err
		},
			memory.ErrContentTooLarge, memory.CodeContentTooLarge, "413", 0},
		{"redirect not followed", func() error { _, err := c.DecayTick(ctx, &memory.DecayTickRequest{}); return err },
			memory.ErrInternal, memory.CodeInternal, "https://elsewhere.example", 0},
		{"bad success body", func() error { _, err := c.RecallGraph(ctx, &memory.RecallGraphRequest{}); return err },
			memory.ErrInternal, memory.CodeInternal, "decode answer", 0},
		{"envelope 400", func() error { _, err := c.Forget(ctx, &memory.ForgetRequest{}); return err },
			memory.ErrForgetUnconfirmed, memory.CodeForgetUnconfirmed, "set confirm", 0},
		{"envelope 503 with header", func() error { r := memory.DefaultConsolidateRequest(); _, err := c.Consolidate(ctx, &r); return err },
			nil, memory.CodeConsolidationInProgress, "busy", 9},
		{"no route", func() error { _, err := c.RecallRaw(ctx, &memory.RecallRawQueryRequest{}); return err },
			memory.ErrInternal, memory.CodeInternal, "is this a memsvc server", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			var me *memory.Error
			if !errors.As(err, &me) {
				t.Fatalf("error %v (%T) is not a *memory.Error", err, err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("errors.Is(%v, %v) = false", err, tc.is)
			}
			if errors.Is(err, client.ErrUnavailable) {
				t.Error("an answer from the server is not 'unavailable'")
			}
			if me.Code != tc.code || !strings.Contains(me.Message, tc.msg) || me.RetryAfter != tc.retryAfter {
				t.Errorf("got %s %q retry %d; want %s %q retry %d", me.Code, me.Message, me.RetryAfter, tc.code, tc.msg, tc.retryAfter)
			}
		})
	}
	if redirected.Load() != 0 {
		t.Error("the client followed a redirect")
	}
	if r := last.Load(); r.Header.Get("Authorization") != "Bearer secret-key" || r.Header.Get("Accept") != "application/json" {
		t.Errorf("request headers %v", r.Header)
	}
}

func TestRequests(t *testing.T) {
	id := memory.MustParseID("0196a9e2-5c1d-7f00-8a00-0000000000aa")
	var mu sync.Mutex
	bodies := map[string]string{}
	methods := map[string]string{}
	rec := func(status int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			bodies[r.URL.Path], methods[r.URL.Path] = string(b), r.Method
			mu.Unlock()
			if r.Header.Get("Content-Type") != "application/json" && len(b) > 0 {
				t.Errorf("%s: Content-Type %q", r.URL.Path, r.Header.Get("Content-Type"))
			}
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
		}
	}
	ts, _ := canned(t, map[string]http.HandlerFunc{
		wire.RecordPath(wire.PathEncodeUpdate, id):    rec(204, ""),
		wire.RecordPath(wire.PathRecallAssociate, id): rec(200, `{"memories":[],"total_candidates":0}`),
		wire.PathMode:      rec(204, ""),
		wire.PathForget:    rec(200, `{"records_deleted":2}`),
		wire.PathRecallRaw: rec(200, `{"records":[],"total_candidates":0}`),
	})
	c, err := client.New(ts.URL+"/", client.Options{UserAgent: "test/1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.EncodeUpdate(ctx, &memory.EncodeUpdateRequest{RecordID: id}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RecallAssociate(ctx, &memory.RecallAssociateRequest{RecordID: id, Depth: 1}); err != nil {
		t.Fatal(err)
	}
	if err := c.SetMode(ctx, &memory.SetModeRequest{Mode: memory.ModePerfect}); err != nil {
		t.Fatal(err)
	}
	confirm := true
	if out, err := c.Forget(ctx, &memory.ForgetRequest{RecordIDs: []memory.ID{id}, Confirm: &confirm}); err != nil || out.RecordsDeleted != 2 {
		t.Fatalf("forget: %v, %v", out, err)
	}
	if _, err := c.RecallRaw(ctx, &memory.RecallRawQueryRequest{Limit: 0}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for path, want := range map[string]string{
		wire.RecordPath(wire.PathEncodeUpdate, id): http.MethodPatch,
		wire.PathMode:   http.MethodPut,
		wire.PathForget: http.MethodDelete,
	} {
		if methods[path] != want {
			t.Errorf("%s sent as %s, want %s", path, methods[path], want)
		}
	}
	if b := bodies[wire.PathRecallRaw]; !strings.Contains(b, `"limit":0`) {
		t.Errorf("limit 0 not sent: %s", b)
	}
	if b := bodies[wire.PathMode]; !strings.Contains(b, `"mode":"perfect"`) {
		t.Errorf("set mode body %s", b)
	}
	if b := bodies[wire.RecordPath(wire.PathEncodeUpdate, id)]; !strings.Contains(b, `"metadata":null`) {
		t.Errorf("update sends metadata it was not given: %s", b)
	}
}

func TestUnavailable(t *testing.T) {
	// A port nothing listens on: take one and close it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	c, err := client.New("http://"+addr, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"stats":  func() error { _, err := c.Stats(ctx); return err },
		"health": func() error { return c.Health(ctx) },
		"export": func() error { _, err := c.Export(ctx, &memory.ExportRequest{}, io.Discard); return err },
		"import": func() error {
			_, err := c.Import(ctx, &memory.ImportRequest{}, strings.NewReader("x"))
			return err
		},
	} {
		err := call()
		var ue *client.UnavailableError
		if !errors.Is(err, client.ErrUnavailable) || !errors.As(err, &ue) {
			t.Errorf("%s: %v (%T), want ErrUnavailable", name, err, err)
		}
		if errors.Is(err, memory.ErrInternal) {
			t.Errorf("%s: unavailable is also internal", name)
		}
	}
}

func TestTimeoutsAndCancel(t *testing.T) {
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release); ts.Close() })

	c, err := client.New(ts.URL, client.Options{Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stats(context.Background()); !errors.Is(err, client.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("own timeout: %v, want unavailable (deadline exceeded)", err)
	}

	c, err = client.New(ts.URL, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := c.Stats(ctx); done <- err }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || errors.Is(err, client.ErrUnavailable) {
		t.Errorf("caller cancel: %v, want context.Canceled and not unavailable", err)
	}
}

func TestProbes(t *testing.T) {
	ts, last := canned(t, map[string]http.HandlerFunc{
		wire.PathHealth:    answer(200, `{"status":"ok"}`),
		wire.PathReadiness: answer(503, `{"status":"not_ready","reason":"decay engine busy"}`, "Retry-After", "5"),
	})
	c, err := client.New(ts.URL, client.Options{APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Health(context.Background()); err != nil {
		t.Errorf("health: %v", err)
	}
	if h := last.Load().Header.Get("Authorization"); h != "" {
		t.Errorf("probe sent the key: %q", h)
	}
	err = c.Ready(context.Background())
	var nr *client.NotReadyError
	if !errors.As(err, &nr) || nr.Reason != "decay engine busy" || nr.RetryAfter != 5*time.Second {
		t.Errorf("ready: %v", err)
	}
}

func TestExportFallbacks(t *testing.T) {
	archive := "header\nentry\nfooter\n"
	jsonAnswer := `{"archive_id":"a1","size_bytes":20,"record_count":1,"checksum":"c","archive_data":` + bytesJSON(archive) + `}`
	t.Run("no stream route", func(t *testing.T) {
		ts, _ := canned(t, map[string]http.HandlerFunc{wire.PathExport: answer(200, jsonAnswer)})
		c, _ := client.New(ts.URL, client.Options{})
		var buf bytes.Buffer
		out, err := c.Export(context.Background(), &memory.ExportRequest{}, &buf)
		if err != nil || buf.String() != archive || out.ArchiveID != "a1" || out.RecordCount != 1 {
			t.Errorf("export: %+v, %v, %q", out, err, buf.String())
		}
	})
	t.Run("no streaming option", func(t *testing.T) {
		ts, last := canned(t, map[string]http.HandlerFunc{
			wire.PathExport: answer(200, jsonAnswer),
			wire.PathImport: answer(200, `{"records_imported":4}`),
		})
		c, _ := client.New(ts.URL, client.Options{NoStreaming: true})
		var buf bytes.Buffer
		if _, err := c.Export(context.Background(), &memory.ExportRequest{}, &buf); err != nil || buf.String() != archive {
			t.Errorf("export: %v %q", err, buf.String())
		}
		req := memory.DefaultImportRequest()
		out, err := c.Import(context.Background(), &req, strings.NewReader("ab"))
		if err != nil || out.RecordsImported != 4 || last.Load().URL.Path != wire.PathImport {
			t.Errorf("import: %v, %v", out, err)
		}
	})
	t.Run("trailers dropped", func(t *testing.T) {
		ts, _ := canned(t, map[string]http.HandlerFunc{wire.PathExportStream: answer(200, archive, "Content-Type", wire.ContentTypeArchive)})
		c, _ := client.New(ts.URL, client.Options{})
		_, err := c.Export(context.Background(), &memory.ExportRequest{}, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "trailers") {
			t.Errorf("export without trailers: %v", err)
		}
	})
	t.Run("writer fails", func(t *testing.T) {
		ts, _ := canned(t, map[string]http.HandlerFunc{wire.PathExportStream: answer(200, archive)})
		c, _ := client.New(ts.URL, client.Options{})
		_, err := c.Export(context.Background(), &memory.ExportRequest{}, failingWriter{})
		if err == nil || !strings.Contains(err.Error(), "write archive") || errors.Is(err, client.ErrUnavailable) {
			t.Errorf("export into a failing writer: %v", err)
		}
	})
	t.Run("import read fails", func(t *testing.T) {
		ts, _ := canned(t, map[string]http.HandlerFunc{wire.PathImportStream: answer(200, `{"records_imported":1}`)})
		c, _ := client.New(ts.URL, client.Options{})
		_, err := c.Import(context.Background(), &memory.ImportRequest{}, io.MultiReader(strings.NewReader("abc"), failingReader{}))
		if err == nil || !strings.Contains(err.Error(), "read archive") || errors.Is(err, client.ErrUnavailable) {
			t.Errorf("import from a failing reader: %v", err)
		}
	})
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("bad sector") }

func bytesJSON(s string) string {
	b, _ := memory.Bytes(s).MarshalJSON()
	return string(b)
}

func TestUnencodableRequest(t *testing.T) {
	ts, last := canned(t, nil)
	c, err := client.New(ts.URL, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A zero enumeration has no wire spelling: the caller's mistake, a
	// validation error, and nothing is sent.
	_, err = c.Consolidate(context.Background(), &memory.ConsolidateRequest{})
	if !errors.Is(err, memory.ErrValidation) {
		t.Errorf("zero strategy: %v, want a validation error", err)
	}
	if last.Load() != nil {
		t.Error("an unencodable request was sent")
	}
}
