package recorder

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/memory"
)

// Timeouts of the recorder's HTTP client.
const (
	DefaultTimeout = 10 * time.Second // a whole call
	connectTimeout = 5 * time.Second
)

// ClientOptions configure NewClient.
type ClientOptions struct {
	// APIKey is sent as a Bearer token; "" sends none.
	APIKey string
	// Namespace is the namespace entries are recorded in; "" names none.
	Namespace string
	// Timeout bounds each call; 0 selects DefaultTimeout.
	Timeout time.Duration
	// Transport carries the requests; nil selects a clone of
	// http.DefaultTransport with a 5 s connect timeout.
	Transport http.RoundTripper
}

// NewClient returns the HTTP client the recorder uses: pkg/client with a
// transport that lets the recorder see the HTTP status of every answer
// (client errors do not carry it), which decides between spooling and
// giving up. It refuses to send an API key over plain http to a host that
// is not loopback.
func NewClient(serverURL string, opts ClientOptions) (*client.Client, error) {
	u, err := client.ParseBaseURL(serverURL)
	if err != nil {
		return nil, err
	}
	if opts.APIKey != "" && u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return nil, fmt.Errorf("refusing to send MEMSVC_SERVER_API_KEY over plain http to %s: use an https:// server URL (or a loopback one such as http://127.0.0.1:8420)", u.Host)
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	rt := opts.Transport
	if rt == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DialContext = (&net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}).DialContext
		rt = t
	}
	return client.New(serverURL, client.Options{
		APIKey:     opts.APIKey,
		Namespace:  opts.Namespace,
		Timeout:    opts.Timeout,
		HTTPClient: &http.Client{Transport: statusTransport{rt}},
		UserAgent:  RecorderName,
		// The recorder answers a refusal itself: it spools the batch and
		// holds further sends for the server's Retry-After, so a hook
		// never waits on a busy server.
		Retries: -1,
	})
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// statusKey carries a *int in a request context; statusTransport stores
// the answer's status code there.
type statusKey struct{}

type statusTransport struct{ next http.RoundTripper }

func (t statusTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if p, ok := req.Context().Value(statusKey{}).(*int); ok && resp != nil {
		*p = resp.StatusCode
	}
	return resp, err
}

// withStatus returns a context whose requests report their status code to
// the returned pointer (0 while no answer arrived).
func withStatus(ctx context.Context) (context.Context, *int) {
	p := new(int)
	return context.WithValue(ctx, statusKey{}, p), p
}

// outcome classifies a failed delivery.
type outcome uint8

const (
	// retry: the server is unreachable, busy or failing (network error,
	// timeout, 408, 429, 5xx). Spool and carry on; a later run sends it.
	retry outcome = iota + 1
	// auth: the server refused the API key (401, 403). Spool, stop
	// sending, exit non-zero.
	auth
	// rejected: the server refused the records themselves (400, 413,
	// 422). Sending them again cannot succeed: quarantine them.
	rejected
	// fatal: any other answer (404, a redirect, a body that is not the
	// expected answer): probably the wrong URL. Spool, stop sending, exit
	// non-zero.
	fatal
)

func (o outcome) String() string {
	return [...]string{"", "retryable", "unauthorized", "rejected", "unexpected answer"}[o]
}

// classify decides what a failed call means. status is the HTTP status of
// the answer, 0 if none arrived.
func classify(err error, status int) outcome {
	switch {
	case status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500:
		return retry
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return auth
	case status == http.StatusBadRequest || status == http.StatusRequestEntityTooLarge || status == http.StatusUnprocessableEntity:
		return rejected
	case status != 0:
		return fatal
	}
	// No answer, or an in-process Service.
	switch {
	case errors.Is(err, client.ErrUnavailable), errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return retry
	}
	switch memory.CodeOf(err) {
	case memory.CodeUnauthorized:
		return auth
	case memory.CodeValidation, memory.CodeContentTooLarge, memory.CodeModalityUnsupported:
		return rejected
	case memory.CodeInternal, memory.CodeRateLimited, memory.CodeDecayEngineBusy, memory.CodeConsolidationInProgress:
		return retry
	}
	return fatal
}

// retryAfter is the server's Retry-After hint carried by err, if any.
func retryAfter(err error) time.Duration {
	var me *memory.Error
	if errors.As(err, &me) && me.RetryAfter > 0 {
		return time.Duration(me.RetryAfter) * time.Second
	}
	return 0
}

// SendError is a delivery failure that stops the recorder from sending:
// the server refused the API key or answered something unexpected.
type SendError struct {
	Status int // HTTP status; 0 if none
	Err    error
	out    outcome
}

func (e *SendError) Error() string {
	switch {
	case e.out == auth:
		return fmt.Sprintf("server refused the API key (HTTP %d): check MEMSVC_SERVER_API_KEY: %v", e.Status, e.Err)
	case e.Status != 0:
		return fmt.Sprintf("send to server: HTTP %d: %v", e.Status, e.Err)
	default:
		return fmt.Sprintf("send to server: %v", e.Err)
	}
}

func (e *SendError) Unwrap() error { return e.Err }

// Unauthorized reports whether the server refused the API key.
func (e *SendError) Unauthorized() bool { return e.out == auth }
