package server

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"golang.org/x/net/netutil"

	"memsvc.dev/memsvc/pkg/config"
)

// The HTTP server bounds every request and the number of connections, so
// slow or idle clients cannot hold the server's resources:
//
//   - the headers must arrive within http.read_header_timeout_secs;
//   - the body within http.body_timeout_secs plus one second for every
//     http.body_min_bytes_per_sec bytes received (the way Apache's
//     mod_reqtimeout does it), enforced with a read deadline on the
//     connection that is moved on as the body arrives;
//   - a kept-alive connection idle for http.idle_timeout_secs is closed;
//   - at most http.max_connections connections are open; the listener
//     accepts the next one only when one closes, so further clients wait
//     in the kernel's listen queue.
//
// The gRPC server has the same protection from the grpc.* keys: a
// handshake timeout, an idle timeout, keepalive pings that close a
// vanished peer's connection (grpcapi.Limits), and the same capped
// listener.

// newHTTPServer returns the HTTP server for handler h with the limits of
// cfg applied; listen wraps its listener.
func newHTTPServer(cfg *config.HTTP, h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           bodyDeadline(h, time.Duration(cfg.BodyTimeoutSecs)*time.Second, cfg.BodyMinBytesPerSec, time.Now),
		ReadHeaderTimeout: time.Duration(cfg.ReadHeaderTimeoutSecs) * time.Second,
		IdleTimeout:       time.Duration(cfg.IdleTimeoutSecs) * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
}

// limitListener caps the connections ln hands out at max.
func limitListener(ln net.Listener, max uint32) net.Listener {
	return netutil.LimitListener(ln, int(max))
}

// bodyTimeoutError is what reading a body past its deadline returns; the
// handler quotes it in its 400 answer, and the connection is then closed.
type bodyTimeoutError struct {
	timeout time.Duration
	rate    uint64
	got     int64
}

func (e *bodyTimeoutError) Error() string {
	if e.rate == 0 {
		return fmt.Sprintf("the request body did not arrive within %v (http.body_timeout_secs)", e.timeout)
	}
	return fmt.Sprintf("the request body arrived too slowly: %d bytes in the time allowed "+
		"(%v plus 1 s per %d bytes; http.body_timeout_secs, http.body_min_bytes_per_sec)", e.got, e.timeout, e.rate)
}

// Timeout reports true, as net errors for deadlines do.
func (e *bodyTimeoutError) Timeout() bool { return true }

// bodyDeadline gives each request body a read deadline: timeout from the
// start of the handler, plus one second for every rate bytes read (rate 0
// keeps it fixed).
func bodyDeadline(next http.Handler, timeout time.Duration, rate uint64, now func() time.Time) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		b := &deadlineBody{
			ReadCloser: r.Body, rc: http.NewResponseController(w),
			start: now(), timeout: timeout, rate: rate,
		}
		if err := b.rc.SetReadDeadline(b.deadline()); err != nil {
			// The connection cannot take deadlines (not the case for
			// HTTP/1 over TCP); serve the request as it is.
			next.ServeHTTP(w, r)
			return
		}
		r.Body = b
		next.ServeHTTP(w, r)
	})
}

// deadlineBody moves the connection's read deadline on as bytes arrive.
type deadlineBody struct {
	io.ReadCloser
	rc      *http.ResponseController
	start   time.Time
	timeout time.Duration
	rate    uint64
	got     int64
}

func (b *deadlineBody) deadline() time.Time {
	d := b.start.Add(b.timeout)
	if b.rate > 0 {
		d = d.Add(time.Duration(float64(b.got) / float64(b.rate) * float64(time.Second)))
	}
	return d
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.got += int64(n)
	if n > 0 && b.rate > 0 && err == nil {
		_ = b.rc.SetReadDeadline(b.deadline())
	}
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		err = &bodyTimeoutError{timeout: b.timeout, rate: b.rate, got: b.got}
	}
	return n, err
}
