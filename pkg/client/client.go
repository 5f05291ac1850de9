// Package client implements memory.Service over the HTTP API of a running
// memsvc server, so commands, the MCP proxy and the recorder work the same
// against a server as against an embedded engine.
//
// Errors keep their meaning across the wire: an error envelope becomes the
// *memory.Error it describes (errors.Is(err, memory.ErrNotFound) works as
// in process; RetryAfter survives), a 401 is memory.ErrUnauthorized, and a
// server that cannot be reached is an *UnavailableError matching
// ErrUnavailable. Answers that are not envelopes (a proxy's error page) are
// mapped by status: 401 unauthorized, 413 content too large, 429 rate
// limited, everything else INTERNAL_ERROR naming the status.
//
// A call refused as rate limited (429), or by a busy server that names a
// Retry-After, is sent again after the wait the server asks for, with a
// little jitter, a few times (Options.Retries, Options.MaxRetryWait) —
// but only calls that are safe to repeat: reads, set-mode, exports, and
// raw stores whose every entry carries a client-generated record_id (the
// server drops ids it already holds). Other writes fail at once with the
// refusal. When every retry was refused the error is a
// *RetriesExhaustedError around the last refusal.
//
// Export and Import stream archives through the routes memsvc adds for
// that (pkg/wire). Against a server without the streaming export route the
// client falls back to the JSON route by itself; Options.NoStreaming selects
// the JSON routes for both directions (servers that are not memsvc,
// reverse proxies that drop HTTP trailers).
//
// Bytes and embeddings travel in base64 (memory.BinaryBase64): calls whose
// answers carry content or an archive ask for it with ?binary=base64 (a
// server that ignores the parameter answers in the CMP arrays, which
// decode to the same values); RecallQueryDecode, whose caller reads the
// answer itself, leaves it in arrays. Requests send content data, cues
// and embeddings in base64 once the server has said it reads them
// (wire.HeaderBinary, on every answer of a memsvc server since the
// parameter exists); before that, and to any other server, they carry
// the CMP arrays.
//
// The package depends on the standard library, pkg/wire and pkg/memory
// only; it never links the storage engine.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

// Options configure a Client.
type Options struct {
	// APIKey is sent as "Authorization: Bearer <key>" on every API call.
	// New refuses a key for a plain-http URL whose host is not loopback.
	APIKey string
	// Namespace is sent as the X-Memsvc-Namespace header of every call
	// whose context names none (memory.WithNamespace); empty sends the
	// header only for contexts that name one. New checks the name.
	Namespace string
	// Timeout bounds each call, streaming included; 0 means no bound
	// beyond the caller's context.
	Timeout time.Duration
	// HTTPClient sends the requests; nil selects a client with a clone of
	// http.DefaultTransport. The Client uses a copy of it that never
	// follows redirects, so the key is sent only to the configured URL.
	HTTPClient *http.Client
	// UserAgent is sent when set.
	UserAgent string
	// NoStreaming uses the JSON export and import routes (archives as
	// integer arrays in memory) instead of the streaming ones.
	NoStreaming bool
	// Retries bounds how often a refused call that is safe to repeat is
	// sent again; 0 selects DefaultRetries, a negative value never
	// retries.
	Retries int
	// MaxRetryWait is the longest wait before a retry; a server asking
	// for longer gets the refusal returned at once. 0 selects
	// DefaultMaxRetryWait. Waits also end with the call's context.
	MaxRetryWait time.Duration
	// Sleep waits between retries; nil waits on a timer. Tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Client talks to one server. It is safe for concurrent use.
type Client struct {
	base         *url.URL
	opts         Options
	http         *http.Client
	retries      int
	maxRetryWait time.Duration
	sleep        func(ctx context.Context, d time.Duration) error
	answers      sync.Pool // *[]byte: read buffers of recall answers, see readAnswer
	// binary is set once the server has said it reads base64 binary
	// values in requests (wire.HeaderBinary); until then requests carry
	// the CMP arrays, which every server reads.
	binary atomic.Bool
}

var _ memory.Service = (*Client)(nil)

// ErrUnavailable matches (errors.Is) every *UnavailableError.
var ErrUnavailable = errors.New("memsvc server unavailable")

// UnavailableError reports that the server could not be reached or stopped
// answering: connection refused, DNS failure, TLS failure, timeout, a
// connection cut in the middle of an answer.
type UnavailableError struct {
	URL string
	Err error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("memsvc server at %s unreachable: %v", e.URL, e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrUnavailable) true.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// NotReadyError is the answer of Ready when the server is up but not
// ready.
type NotReadyError struct {
	Reason     string
	RetryAfter time.Duration
}

func (e *NotReadyError) Error() string {
	if e.Reason == "" {
		return "memsvc server not ready"
	}
	return "memsvc server not ready: " + e.Reason
}

// New returns a client for the server at baseURL, an absolute http or
// https URL without user info, query or fragment; a path prefix is kept
// (for servers behind a reverse proxy under a sub-path).
func New(baseURL string, opts Options) (*Client, error) {
	u, err := ParseBaseURL(baseURL)
	if err != nil {
		return nil, err
	}
	if opts.APIKey != "" && u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return nil, fmt.Errorf("server URL %s: refusing to send the API key over plain http to a non-loopback host; use https", u.Redacted())
	}
	if opts.Timeout < 0 {
		return nil, fmt.Errorf("timeout %v: must not be negative", opts.Timeout)
	}
	if opts.Namespace != "" {
		if err := memory.ValidateNamespace(opts.Namespace); err != nil {
			return nil, err
		}
	}
	var hc http.Client
	if opts.HTTPClient != nil {
		hc = *opts.HTTPClient
	} else {
		hc.Transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c := &Client{base: u, opts: opts, http: &hc, retries: opts.Retries, maxRetryWait: opts.MaxRetryWait, sleep: opts.Sleep}
	switch {
	case c.retries == 0:
		c.retries = DefaultRetries
	case c.retries < 0:
		c.retries = 0
	}
	if c.maxRetryWait <= 0 {
		c.maxRetryWait = DefaultMaxRetryWait
	}
	if c.sleep == nil {
		c.sleep = sleepCtx
	}
	return c, nil
}

// ParseBaseURL validates a server URL the way New does and returns it
// without a trailing slash.
func ParseBaseURL(raw string) (*url.URL, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return nil, errors.New("server URL is empty; want e.g. http://127.0.0.1:8420")
	}
	if !strings.Contains(s, "://") {
		return nil, fmt.Errorf("server URL %q: want an http:// or https:// URL such as http://127.0.0.1:8420", raw)
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("server URL: %w", err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("server URL %q: want an http:// or https:// URL", raw)
	case u.Host == "" || u.Hostname() == "":
		return nil, fmt.Errorf("server URL %q: no host", raw)
	case u.User != nil:
		return nil, fmt.Errorf("server URL %s: user info is not allowed; pass the API key separately", u.Redacted())
	case u.RawQuery != "" || u.ForceQuery:
		return nil, fmt.Errorf("server URL %q: a query is not allowed", raw)
	case u.Fragment != "" || strings.Contains(s, "#"):
		return nil, fmt.Errorf("server URL %q: a fragment is not allowed", raw)
	case u.Opaque != "":
		return nil, fmt.Errorf("server URL %q: want an http:// or https:// URL", raw)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("server URL %q: port %q out of range", raw, p)
		}
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// isLoopback reports whether host is "localhost" or a loopback IP.
// Other names are not resolved: what they resolve to can change.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// URL returns the server's base URL.
func (c *Client) URL() string { return c.base.String() }

// endpoint is the URL of path below the base URL.
func (c *Client) endpoint(path string, query url.Values) string {
	u := *c.base
	u.Path = c.base.Path + path
	u.RawQuery = query.Encode()
	return u.String()
}

// context applies the per-call timeout.
func (c *Client) context(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.opts.Timeout > 0 {
		return context.WithTimeout(ctx, c.opts.Timeout)
	}
	return context.WithCancel(ctx)
}

// namespace is the namespace a call made with ctx names: the context's,
// else Options.Namespace ("" for none: the server's default).
func (c *Client) namespace(ctx context.Context) (string, error) {
	if !memory.NamespaceSet(ctx) {
		return c.opts.Namespace, nil
	}
	ns := memory.NamespaceFrom(ctx)
	if err := memory.ValidateNamespace(ns); err != nil {
		return "", err
	}
	return ns, nil
}

// newRequest builds a request with the headers every call carries.
func (c *Client) newRequest(ctx context.Context, method, path string, query url.Values, body io.Reader, contentType string, auth bool) (*http.Request, error) {
	ns, err := c.namespace(ctx)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, method, c.endpoint(path, query), body)
	if err != nil {
		return nil, fmt.Errorf("build %s %s: %w", method, path, err)
	}
	if ns != "" && auth {
		req.Header.Set(wire.HeaderNamespace, ns)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", wire.ContentTypeJSON)
	if c.opts.UserAgent != "" {
		req.Header.Set("User-Agent", c.opts.UserAgent)
	}
	if auth && c.opts.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.opts.APIKey)
	}
	return req, nil
}

// do builds a request with newRequest in ctx2 and performs it with send,
// whose errors speak of ctx.
func (c *Client) do(ctx, ctx2 context.Context, method, path string, query url.Values, body io.Reader, contentType string, auth bool) (*http.Request, *http.Response, error) {
	req, err := c.newRequest(ctx2, method, path, query, body, contentType, auth)
	if err != nil {
		return nil, nil, err
	}
	resp, err := c.send(ctx, req)
	return req, resp, err
}

// send performs req, turning transport failures into *UnavailableError (or
// the caller's own context error).
func (c *Client) send(parent context.Context, req *http.Request) (*http.Response, error) {
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.transportError(parent, err)
	}
	if !c.binary.Load() && resp.Header.Get(wire.HeaderBinary) == wire.BinaryBase64 {
		c.binary.Store(true)
	}
	return resp, nil
}

// transportError classifies a failure to talk to the server. When the
// caller's context ended, that is the error; a timeout of our own or any
// network failure means the server is unavailable.
func (c *Client) transportError(parent context.Context, err error) error {
	if perr := parent.Err(); perr != nil {
		return fmt.Errorf("memsvc request: %w", perr)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return &UnavailableError{URL: c.base.Redacted(), Err: err}
}

// invalidRequest reports a request that cannot be encoded, such as one
// with an unset enumeration: the caller's mistake, as it is in process.
func invalidRequest(err error) error {
	var me *memory.Error
	if errors.As(err, &me) {
		return me
	}
	return memory.Invalid("", "encode request: %v", err)
}

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 1 << 20

// call sends a JSON request (in may be nil for none) to path with query
// (nil for none) and decodes a JSON answer into out (nil to expect none),
// retrying a refusal when r allows. The per-call timeout covers the
// retries and their waits.
func (c *Client) call(ctx context.Context, r retryable, method, path string, query url.Values, in, out any) error {
	ctx2, cancel := c.context(ctx)
	defer cancel()
	var b []byte
	ct := ""
	if in != nil {
		var err error
		// Binary values in base64 to a server that reads them (a
		// third the size of integer arrays, half that of number
		// arrays), the CMP arrays otherwise.
		body := in
		if c.binary.Load() {
			body = memory.Base64Request(in)
		}
		if b, err = json.Marshal(body); err != nil {
			return invalidRequest(err)
		}
		ct = wire.ContentTypeJSON
	}
	return c.withRetries(ctx2, r, func() error { return c.callOnce(ctx, ctx2, method, path, query, b, ct, out) })
}

// callOnce is one attempt of call; body is nil for none.
func (c *Client) callOnce(ctx, ctx2 context.Context, method, path string, query url.Values, b []byte, ct string, out any) error {
	var body io.Reader
	if b != nil {
		body = bytes.NewReader(b)
	}
	req, resp, err := c.do(ctx, ctx2, method, path, query, body, ct, true)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return c.statusError(ctx, req, resp)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		return nil
	}
	// A recall answer's decoder copies what it keeps, so its buffer can
	// serve the next answer.
	_, reuse := out.(*memory.RecallQueryResponse)
	var buf []byte
	if reuse {
		buf = c.answerBuffer()
	}
	data, err := readAnswer(resp, buf)
	if err != nil {
		return c.transportError(ctx, err)
	}
	err = decodeAnswer(data, out)
	if reuse {
		c.keepBuffer(data)
	}
	if err != nil {
		return &memory.Error{Code: memory.CodeInternal, Message: fmt.Sprintf("decode answer of %s %s: %v", method, path, err)}
	}
	return nil
}

// maxKeptAnswer bounds the read buffers kept for reuse: a rare huge answer
// is not worth holding on to.
const maxKeptAnswer = 1 << 20

// answerBuffer returns an empty buffer for an answer, with room from an
// earlier one when one is free. Recall answers are tens of kilobytes, and
// a new buffer for each made the garbage collector a visible part of a
// recall's cost.
func (c *Client) answerBuffer() []byte {
	if b, ok := c.answers.Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return nil
}

// keepBuffer gives back a buffer answerBuffer lent, once nothing refers
// to its contents.
func (c *Client) keepBuffer(b []byte) {
	if cap(b) == 0 || cap(b) > maxKeptAnswer {
		return
	}
	b = b[:0]
	c.answers.Put(&b)
}

// maxPresize bounds the buffer allocated up front for an answer from its
// Content-Length, so that a wrong header cannot make the client allocate
// much before a byte has arrived.
const maxPresize = 16 << 20

// readAnswer reads the whole body of resp into one buffer sized from its
// Content-Length when the server sent one: a recall answer is tens to
// hundreds of kilobytes, and growing a buffer to that size copies it
// about ten times.
//
// buf, when it has room, holds the answer instead of a new buffer.
func readAnswer(resp *http.Response, buf []byte) ([]byte, error) {
	n := resp.ContentLength
	if n <= 0 || n > maxPresize {
		return io.ReadAll(resp.Body)
	}
	// net/http ends such a body after exactly n bytes, and reports a
	// shorter one as io.ErrUnexpectedEOF.
	if int64(cap(buf)) >= n {
		buf = buf[:n]
	} else {
		buf = make([]byte, n)
	}
	_, err := io.ReadFull(resp.Body, buf)
	return buf, err
}

// answerDecoder, as the out of a call, decodes the answer itself.
type answerDecoder func(data []byte) error

// decodeAnswer decodes a JSON answer into out; recall answers, the
// largest and most frequent, with their own parser.
func decodeAnswer(data []byte, out any) error {
	switch out := out.(type) {
	case *memory.RecallQueryResponse:
		return memory.UnmarshalRecallQueryResponse(data, out)
	case answerDecoder:
		return out(data)
	}
	return json.Unmarshal(data, out)
}

// statusError turns a non-2xx answer into an error.
func (c *Client) statusError(ctx context.Context, req *http.Request, resp *http.Response) error {
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil {
		return c.transportError(ctx, err)
	}
	return answerError(req, resp, data)
}

// answerError describes a non-2xx answer whose body is data.
func answerError(req *http.Request, resp *http.Response, data []byte) error {
	if env, ok := wire.DecodeEnvelope(data); ok {
		e := env.Err()
		if e.RetryAfter == 0 {
			e.RetryAfter = headerRetryAfter(resp)
		}
		return e
	}
	status := resp.StatusCode
	what := fmt.Sprintf("%s %s answered %s", req.Method, req.URL.Path, resp.Status)
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return &memory.Error{Code: memory.CodeUnauthorized, Message: what + "; check the API key"}
	case status == http.StatusRequestEntityTooLarge:
		return &memory.Error{Code: memory.CodeContentTooLarge, Message: what}
	case status == http.StatusTooManyRequests:
		return &memory.Error{Code: memory.CodeRateLimited, Message: what, RetryAfter: max(headerRetryAfter(resp), 1)}
	case status >= 300 && status < 400:
		return &memory.Error{Code: memory.CodeInternal, Message: fmt.Sprintf("%s, redirecting to %q; use that address as the server URL", what, resp.Header.Get("Location"))}
	case status == http.StatusNotFound || status == http.StatusMethodNotAllowed:
		return &memory.Error{Code: memory.CodeInternal, Message: what + "; is this a memsvc server, and the right URL?"}
	default:
		return &memory.Error{Code: memory.CodeInternal, Message: what}
	}
}

// noRoute reports an answer saying the route does not exist
// (wire.IsNoRoute).
func noRoute(resp *http.Response, data []byte) bool {
	env, ok := wire.DecodeEnvelope(data)
	if !ok {
		env = nil
	}
	return wire.IsNoRoute(resp.StatusCode, env)
}

func headerRetryAfter(resp *http.Response) uint32 {
	v, err := strconv.ParseUint(strings.TrimSpace(resp.Header.Get(wire.HeaderRetryAfter)), 10, 32)
	if err != nil {
		return 0
	}
	return uint32(v)
}

// Health checks GET /health: the server process is up.
func (c *Client) Health(ctx context.Context) error {
	return c.probe(ctx, wire.PathHealth)
}

// Ready checks GET /readiness: the server can answer. A server that is up
// but not ready gives a *NotReadyError.
func (c *Client) Ready(ctx context.Context) error {
	return c.probe(ctx, wire.PathReadiness)
}

func (c *Client) probe(ctx context.Context, path string) error {
	ctx2, cancel := c.context(ctx)
	defer cancel()
	req, resp, err := c.do(ctx, ctx2, http.MethodGet, path, nil, nil, "", false)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil {
		return c.transportError(ctx, err)
	}
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	if resp.StatusCode == http.StatusServiceUnavailable {
		var h wire.Health
		_ = json.Unmarshal(data, &h)
		return &NotReadyError{Reason: h.Reason, RetryAfter: time.Duration(headerRetryAfter(resp)) * time.Second}
	}
	return answerError(req, resp, data)
}
