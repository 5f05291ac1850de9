package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

// cannedTransport answers every request with the same status, headers,
// body and trailers, without a network. With cut set, reading the body
// fails after its bytes, as a connection reset does.
type cannedTransport struct {
	status  int
	header  http.Header
	trailer http.Header
	body    []byte
	cut     bool
}

var errReset = errors.New("connection reset (fuzz)")

type resetReader struct{}

func (resetReader) Read([]byte) (int, error) { return 0, errReset }

func (c *cannedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		_ = req.Body.Close()
	}
	var body io.Reader = bytes.NewReader(c.body)
	if c.cut {
		body = io.MultiReader(body, resetReader{})
	}
	return &http.Response{
		Status:     fmt.Sprintf("%d %s", c.status, http.StatusText(c.status)),
		StatusCode: c.status,
		Proto:      "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  c.header.Clone(),
		Trailer: c.trailer.Clone(),
		Body:    io.NopCloser(body),
		Request: req,
	}, nil
}

// The kinds of answer handling in the client.
const (
	kindJSON         = iota // 2xx with a JSON body decoded into the result
	kindNoBody              // 2xx whose body is ignored
	kindExportStream        // 200 with the archive as the body, metadata in trailers
	kindImportStream        // 200 with a JSON body; no fallback route
	kindExportJSON          // the JSON export route: the archive inside the answer
	kindProbe               // /health, /readiness
)

// fuzzCall is one client method and how its answer must be handled.
type fuzzCall struct {
	name      string
	kind      int
	streaming bool // uses the streaming route (the client option)
	run       func(ctx context.Context, c *client.Client, w io.Writer) (any, error)
	decode    func(body []byte) (any, bool) // kindJSON: the expected result
}

func jsonCall[R any](name string, fn func(context.Context, *client.Client) (*R, error)) fuzzCall {
	return fuzzCall{
		name: name,
		kind: kindJSON,
		run: func(ctx context.Context, c *client.Client, _ io.Writer) (any, error) {
			r, err := fn(ctx, c)
			if r == nil {
				return nil, err
			}
			return *r, err
		},
		decode: func(body []byte) (any, bool) {
			var r R
			if json.Unmarshal(body, &r) != nil {
				return nil, false
			}
			return r, true
		},
	}
}

func fuzzCalls() []fuzzCall {
	id := memory.MustParseID("0196a9e2-5c1d-7f00-8a00-0000000000aa")
	noBody := func(name string, fn func(context.Context, *client.Client) error) fuzzCall {
		return fuzzCall{name: name, kind: kindNoBody, run: func(ctx context.Context, c *client.Client, _ io.Writer) (any, error) {
			return nil, fn(ctx, c)
		}}
	}
	return []fuzzCall{
		jsonCall("EncodeStore", func(ctx context.Context, c *client.Client) (*memory.EncodeStoreResponse, error) {
			return c.EncodeStore(ctx, &memory.EncodeStoreRequest{})
		}),
		jsonCall("EncodeBatchRaw", func(ctx context.Context, c *client.Client) (*memory.EncodeBatchStoreRawResponse, error) {
			r := memory.DefaultEncodeStoreRawRequest()
			return c.EncodeBatchRaw(ctx, &memory.EncodeBatchStoreRawRequest{Records: []memory.EncodeStoreRawRequest{r}})
		}),
		jsonCall("RecallQuery", func(ctx context.Context, c *client.Client) (*memory.RecallQueryResponse, error) {
			r := memory.DefaultRecallQueryRequest()
			return c.RecallQuery(ctx, &r)
		}),
		jsonCall("RecallRaw", func(ctx context.Context, c *client.Client) (*memory.RecallRawQueryResponse, error) {
			return c.RecallRaw(ctx, &memory.RecallRawQueryRequest{})
		}),
		jsonCall("RecallGraph", func(ctx context.Context, c *client.Client) (*memory.RecallGraphResponse, error) {
			return c.RecallGraph(ctx, &memory.RecallGraphRequest{})
		}),
		jsonCall("Record", func(ctx context.Context, c *client.Client) (*memory.MemoryRecord, error) {
			return c.Record(ctx, &memory.IntrospectRecordRequest{RecordID: id})
		}),
		jsonCall("Stats", func(ctx context.Context, c *client.Client) (*memory.Stats, error) { return c.Stats(ctx) }),
		jsonCall("Forget", func(ctx context.Context, c *client.Client) (*memory.ForgetResponse, error) {
			return c.Forget(ctx, &memory.ForgetRequest{RecordIDs: []memory.ID{id}})
		}),
		jsonCall("ImportJSON", func(ctx context.Context, c *client.Client) (*memory.ImportResponse, error) {
			r := memory.DefaultImportRequest()
			return c.Import(ctx, &r, strings.NewReader("archive"))
		}),
		noBody("EncodeUpdate", func(ctx context.Context, c *client.Client) error {
			return c.EncodeUpdate(ctx, &memory.EncodeUpdateRequest{RecordID: id})
		}),
		noBody("SetMode", func(ctx context.Context, c *client.Client) error {
			return c.SetMode(ctx, &memory.SetModeRequest{Mode: memory.ModePerfect})
		}),
		{name: "ExportStream", kind: kindExportStream, streaming: true, run: func(ctx context.Context, c *client.Client, w io.Writer) (any, error) {
			r, err := c.Export(ctx, &memory.ExportRequest{}, w)
			return r, err
		}},
		{name: "ExportJSON", kind: kindExportJSON, run: func(ctx context.Context, c *client.Client, w io.Writer) (any, error) {
			r, err := c.Export(ctx, &memory.ExportRequest{}, w)
			return r, err
		}},
		{name: "ImportStream", kind: kindImportStream, streaming: true, run: func(ctx context.Context, c *client.Client, _ io.Writer) (any, error) {
			r := memory.DefaultImportRequest()
			return c.Import(ctx, &r, strings.NewReader("archive"))
		}},
		{name: "Health", kind: kindProbe, run: func(ctx context.Context, c *client.Client, _ io.Writer) (any, error) {
			return nil, c.Health(ctx)
		}},
		{name: "Ready", kind: kindProbe, run: func(ctx context.Context, c *client.Client, _ io.Writer) (any, error) {
			return nil, c.Ready(ctx)
		}},
	}
}

// FuzzAnswers sends one call of the client to a server that answers with
// an arbitrary status, body, Retry-After header and export trailers, the
// body possibly cut off. The client never panics and decodes what the
// server said: a success body that decodes becomes the result exactly
// (the streamed archive is written out byte for byte, its metadata taken
// from the trailers or refused when they are missing or malformed), a
// success body that does not decode is an INTERNAL_ERROR, an error
// envelope becomes its code, message and retry hint, another failure maps
// by status, and only a broken connection reads as unavailable.
func FuzzAnswers(f *testing.F) {
	calls := fuzzCalls()
	env := `{"code":"RATE_LIMITED","message":"slow down","details":null,"retry_after":3}`
	for i, c := range calls {
		f.Add(uint8(i), uint16(200), []byte(`{}`), "", "", false)
		f.Add(uint8(i), uint16(429), []byte(env), " 7 ", "", false)
		if c.kind == kindExportStream {
			f.Add(uint8(i), uint16(200), []byte("header\nentry\n"), "", "Memsvc-Archive-Id: a1\nMemsvc-Size-Bytes: 13\nMemsvc-Record-Count: 1\nMemsvc-Checksum: c", false)
			f.Add(uint8(i), uint16(200), []byte("header\n"), "", "Memsvc-Archive-Id: a1\nMemsvc-Size-Bytes: -1", true)
		}
	}
	f.Add(uint8(6), uint16(200), []byte(`{"total_records":3,"records_by_store":{"episodic":3}}`), "", "", false)
	f.Add(uint8(5), uint16(404), []byte(`{"code":"RECORD_NOT_FOUND","message":"no such record"}`), "", "", false)
	f.Add(uint8(2), uint16(502), []byte(`<html>Bad Gateway</html>`), "", "", true)
	f.Add(uint8(15), uint16(503), []byte(`{"status":"not_ready","reason":"starting"}`), "2", "", false)
	f.Add(uint8(12), uint16(200), []byte(`{"archive_id":"a","size_bytes":2,"record_count":1,"checksum":"c","archive_data":"aGk="}`), "", "", false)
	f.Add(uint8(0), uint16(302), []byte(``), "", "", false)
	f.Add(uint8(13), uint16(405), []byte(`method not allowed`), "", "", false)
	f.Fuzz(func(t *testing.T, pick uint8, status uint16, body []byte, retryAfter, trailers string, cut bool) {
		if len(body) > 64<<10 || len(trailers) > 4<<10 {
			return
		}
		call := calls[int(pick)%len(calls)]
		rt := &cannedTransport{
			status:  100 + int(status%500),
			header:  http.Header{"Retry-After": {retryAfter}},
			trailer: parseTrailers(trailers),
			body:    body,
			cut:     cut,
		}
		c, err := client.New("http://127.0.0.1:1", client.Options{HTTPClient: &http.Client{Transport: rt}, NoStreaming: !call.streaming})
		if err != nil {
			t.Fatal(err)
		}
		// A deadline under a second: a client that would wait out a
		// Retry-After (at least a second) gives up at once instead.
		ctx, cancel := context.WithTimeout(t.Context(), 900*time.Millisecond)
		defer cancel()
		var w bytes.Buffer
		got, err := call.run(ctx, c, &w)
		checkAnswer(t, call, rt, got, w.Bytes(), err)
	})
}

// parseTrailers reads "Name: value" lines.
func parseTrailers(s string) http.Header {
	h := http.Header{}
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			h.Add(k, strings.TrimSpace(v))
		}
	}
	return h
}

func checkAnswer(t *testing.T, call fuzzCall, rt *cannedTransport, got any, written []byte, err error) {
	t.Helper()
	ok := rt.status >= 200 && rt.status <= 299
	if call.kind == kindExportStream || call.kind == kindImportStream || call.kind == kindProbe {
		ok = rt.status == http.StatusOK
	}
	if rt.cut && (!ok || call.kind != kindNoBody) {
		if !errors.Is(err, client.ErrUnavailable) {
			t.Fatalf("%s: %d answer cut short: error %v, want unavailable", call.name, rt.status, err)
		}
		return
	}
	if errors.Is(err, client.ErrUnavailable) {
		t.Fatalf("%s: an answer read whole is not 'unavailable': %v", call.name, err)
	}
	if !ok {
		checkFailure(t, call, rt, err)
		return
	}
	switch call.kind {
	case kindNoBody, kindProbe:
		if err != nil {
			t.Fatalf("%s: %d answer: %v", call.name, rt.status, err)
		}
	case kindJSON:
		want, decodes := call.decode(rt.body)
		if !decodes {
			wantCode(t, call, err, memory.CodeInternal)
			return
		}
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: got %+v, %v; the body decodes to %+v", call.name, got, err, want)
		}
	case kindExportJSON:
		var want wire.ExportArchiveResponse
		if json.Unmarshal(rt.body, &want) != nil {
			wantCode(t, call, err, memory.CodeInternal)
			return
		}
		if r, _ := got.(*memory.ExportResponse); err != nil || r == nil || *r != want.ExportResponse || !bytes.Equal(written, want.ArchiveData) {
			t.Fatalf("%s: got %+v, %v, %d bytes; the body decodes to %+v with %d bytes", call.name, got, err, len(written), want.ExportResponse, len(want.ArchiveData))
		}
	case kindImportStream:
		var want memory.ImportResponse
		if json.Unmarshal(rt.body, &want) != nil {
			wantCode(t, call, err, memory.CodeInternal)
			return
		}
		if r, _ := got.(*memory.ImportResponse); err != nil || r == nil || !reflect.DeepEqual(*r, want) {
			t.Fatalf("%s: got %+v, %v; the body decodes to %+v", call.name, got, err, want)
		}
	case kindExportStream:
		checkExportStream(t, rt, got, written, err)
	}
}

// checkExportStream: the archive is written as sent, and the result is the
// trailers' metadata, or an error when they are missing or malformed.
func checkExportStream(t *testing.T, rt *cannedTransport, got any, written []byte, err error) {
	t.Helper()
	if !bytes.Equal(written, rt.body) {
		t.Fatalf("export wrote %d bytes of a %d-byte archive", len(written), len(rt.body))
	}
	id := rt.trailer.Get(wire.TrailerArchiveID)
	size, err1 := strconv.ParseUint(rt.trailer.Get(wire.TrailerSizeBytes), 10, 64)
	count, err2 := strconv.ParseUint(rt.trailer.Get(wire.TrailerRecordCount), 10, 32)
	if id == "" || err1 != nil || err2 != nil {
		if err == nil {
			t.Fatalf("export accepted trailers %v", rt.trailer)
		}
		return
	}
	want := memory.ExportResponse{ArchiveID: id, SizeBytes: size, RecordCount: uint32(count), Checksum: rt.trailer.Get(wire.TrailerChecksum)}
	if r, _ := got.(*memory.ExportResponse); err != nil || r == nil || *r != want {
		t.Fatalf("export: got %+v, %v; trailers say %+v", got, err, want)
	}
}

// checkFailure: a failure answer becomes the *memory.Error it describes.
func checkFailure(t *testing.T, call fuzzCall, rt *cannedTransport, err error) {
	t.Helper()
	if call.kind == kindProbe && rt.status == http.StatusServiceUnavailable {
		if _, ok := errors.AsType[*client.NotReadyError](err); !ok {
			t.Fatalf("%s: 503: %v, want a *NotReadyError", call.name, err)
		}
		return
	}
	me, ok := errors.AsType[*memory.Error](err)
	if !ok {
		t.Fatalf("%s: %d answer: error %v (%T) is not a *memory.Error", call.name, rt.status, err, err)
	}
	header := uint32(0)
	if v, err := strconv.ParseUint(strings.TrimSpace(rt.header.Get("Retry-After")), 10, 32); err == nil {
		header = uint32(v)
	}
	if env, isEnv := wire.DecodeEnvelope(rt.body); isEnv {
		want := env.Err()
		if want.RetryAfter == 0 {
			want.RetryAfter = header
		}
		if me.Code != want.Code || me.Message != want.Message || me.RetryAfter != want.RetryAfter {
			t.Fatalf("%s: envelope %s %q retry %d became %s %q retry %d", call.name, want.Code, want.Message, want.RetryAfter, me.Code, me.Message, me.RetryAfter)
		}
		return
	}
	switch rt.status {
	case http.StatusUnauthorized, http.StatusForbidden:
		wantCode(t, call, err, memory.CodeUnauthorized)
	case http.StatusRequestEntityTooLarge:
		wantCode(t, call, err, memory.CodeContentTooLarge)
	case http.StatusTooManyRequests:
		wantCode(t, call, err, memory.CodeRateLimited)
		if me.RetryAfter != max(header, 1) {
			t.Fatalf("%s: 429 with Retry-After %q: retry %d", call.name, rt.header.Get("Retry-After"), me.RetryAfter)
		}
	default:
		wantCode(t, call, err, memory.CodeInternal)
	}
}

func wantCode(t *testing.T, call fuzzCall, err error, code memory.Code) {
	t.Helper()
	if me, ok := errors.AsType[*memory.Error](err); !ok || me.Code != code {
		t.Fatalf("%s: error %v, want %s", call.name, err, code)
	}
}
