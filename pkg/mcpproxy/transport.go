package mcpproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"syscall"
	"time"
)

// connTransport is the HTTP transport of the proxy's client: plain HTTP/1.1
// over kept-alive TCP connections, each exchange written and read in the
// calling goroutine. net/http's Transport hands every request to a writer
// goroutine and every answer back from a reader goroutine; on a loaded
// machine those hand-offs are a visible part of a search through the
// proxy. Run uses connTransport for http URLs reached without a proxy.
//
// A request with a body over directBodyBytes, or of unknown length, goes
// through big, net/http's transport, which reads an answer while it
// writes: a server refusing a huge body answers (413) before it has read
// it all, and then closes the connection under the writer.
//
// A connection is reused once its answer has been read to the end and
// neither side asked to close it. Before reuse it is checked for a close
// by the server (idleClosed); should the server close it anyway before
// answering a byte, the request is sent once more on a new connection
// when its body can be sent again.
type connTransport struct {
	dial    func(ctx context.Context, network, addr string) (net.Conn, error)
	maxIdle int
	big     interface {
		http.RoundTripper
		CloseIdleConnections()
	}

	mu   sync.Mutex
	idle []*persistConn
}

// directBodyBytes bounds the request bodies connTransport writes itself.
const directBodyBytes = 1 << 20

// newConnTransport returns a transport that dials with dial, keeps up to
// maxIdle connections and sends big bodies through big.
func newConnTransport(dial func(ctx context.Context, network, addr string) (net.Conn, error), maxIdle int, big *http.Transport) *connTransport {
	return &connTransport{dial: dial, maxIdle: maxIdle, big: big}
}

// persistConn is one connection to the server.
type persistConn struct {
	conn     net.Conn
	br       *bufio.Reader
	bw       *bufio.Writer
	reused   bool // it has carried an exchange before
	deadline bool // a deadline is set on conn
}

// RoundTrip implements http.RoundTripper.
func (t *connTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "http" {
		closeBody(req)
		return nil, fmt.Errorf("connTransport serves http only, not %q", req.URL.Scheme)
	}
	unknown := req.ContentLength < 0 || (req.ContentLength == 0 && req.Body != nil && req.Body != http.NoBody)
	if unknown || req.ContentLength > directBodyBytes {
		return t.big.RoundTrip(req)
	}
	for attempt := 0; ; attempt++ {
		pc, err := t.get(req.Context(), hostPort(req.URL))
		if err != nil {
			closeBody(req)
			return nil, err
		}
		resp, err := t.exchange(pc, req)
		if err == nil {
			return resp, nil
		}
		_ = pc.conn.Close()
		if cerr := contextErr(req.Context()); cerr != nil {
			return nil, cerr
		}
		if attempt > 0 || !pc.reused || !errors.Is(err, errClosedBeforeAnswer) || (req.Body != nil && req.Body != http.NoBody && req.GetBody == nil) {
			return nil, err
		}
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			req = req.Clone(req.Context())
			req.Body = body
		}
	}
}

// contextErr is ctx's error, or context.DeadlineExceeded once its
// deadline has passed: the connection's deadline, set to the same time,
// may fire before ctx is marked done.
func contextErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}

// errClosedBeforeAnswer reports a connection the server closed before a
// byte of its answer: a kept-alive connection it had just given up on.
var errClosedBeforeAnswer = errors.New("server closed the connection before answering")

// exchange writes req on pc and reads the answer's head; the body is read
// by the caller, which returns pc to t once it reaches the end.
func (t *connTransport) exchange(pc *persistConn, req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if d, ok := ctx.Deadline(); ok {
		if err := pc.conn.SetDeadline(d); err != nil {
			closeBody(req)
			return nil, err
		}
		pc.deadline = true
	} else if pc.deadline {
		if err := pc.conn.SetDeadline(time.Time{}); err != nil {
			closeBody(req)
			return nil, err
		}
		pc.deadline = false
	}
	stop := func() bool { return true }
	if ctx.Done() != nil {
		// A cancelled request unblocks its reads and writes at once.
		stop = context.AfterFunc(ctx, func() { _ = pc.conn.SetDeadline(time.Unix(1, 0)) })
	}
	if err := req.Write(pc.bw); err != nil {
		stop()
		return nil, closedBeforeAnswer(err)
	}
	if err := pc.bw.Flush(); err != nil {
		stop()
		return nil, closedBeforeAnswer(err)
	}
	if _, err := pc.br.Peek(1); err != nil {
		stop()
		return nil, closedBeforeAnswer(err)
	}
	resp, err := http.ReadResponse(pc.br, req)
	if err != nil {
		stop()
		return nil, err
	}
	keep := !resp.Close && !req.Close
	resp.Body = &connBody{rc: resp.Body, t: t, pc: pc, keep: keep, stop: stop}
	return resp, nil
}

// closedBeforeAnswer marks err, from writing a request or waiting for the
// first byte of its answer, as errClosedBeforeAnswer when it says the
// server closed the connection.
func closedBeforeAnswer(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return fmt.Errorf("%w: %w", errClosedBeforeAnswer, err)
	}
	return err
}

// get returns an idle connection to addr, or a new one.
func (t *connTransport) get(ctx context.Context, addr string) (*persistConn, error) {
	for {
		t.mu.Lock()
		n := len(t.idle)
		if n == 0 {
			t.mu.Unlock()
			break
		}
		pc := t.idle[n-1]
		t.idle[n-1] = nil
		t.idle = t.idle[:n-1]
		t.mu.Unlock()
		if !idleClosed(pc.conn) {
			pc.reused = true
			return pc, nil
		}
		_ = pc.conn.Close()
	}
	conn, err := t.dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return &persistConn{conn: conn, br: bufio.NewReaderSize(conn, 32<<10), bw: bufio.NewWriterSize(conn, 4<<10)}, nil
}

// put keeps pc for the next request, or closes it when enough are kept.
func (t *connTransport) put(pc *persistConn) {
	t.mu.Lock()
	if len(t.idle) < t.maxIdle {
		t.idle = append(t.idle, pc)
		pc = nil
	}
	t.mu.Unlock()
	if pc != nil {
		_ = pc.conn.Close()
	}
}

// CloseIdleConnections closes the connections kept for reuse.
func (t *connTransport) CloseIdleConnections() {
	t.big.CloseIdleConnections()
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, pc := range idle {
		_ = pc.conn.Close()
	}
}

// connBody is an answer's body; at its end the connection goes back to
// the transport.
type connBody struct {
	rc   io.ReadCloser
	t    *connTransport
	pc   *persistConn // nil once released or closed
	keep bool         // the connection may carry another exchange
	stop func() bool  // ends the request's cancellation watch
	err  error        // what reads return once pc is released
}

// errBodyClosed is what reads of an answer body return after Close.
var errBodyClosed = errors.New("read on a closed answer body")

// drainLimit bounds what Close reads of an unread rest to keep the
// connection.
const drainLimit = 4 << 10

func (b *connBody) Read(p []byte) (int, error) {
	if b.pc == nil {
		return 0, b.err
	}
	n, err := b.rc.Read(p)
	if err != nil {
		b.err = err
		b.finish(err == io.EOF)
	}
	return n, err
}

func (b *connBody) Close() error {
	b.err = errBodyClosed
	if b.pc == nil {
		return nil
	}
	// A body read up to its length has not seen io.EOF yet; reading on
	// finds it at once.
	_, err := io.CopyN(io.Discard, b.rc, drainLimit)
	b.finish(err == io.EOF)
	return nil
}

// finish releases the connection: back to the transport when the body
// ended cleanly and it may be kept, closed otherwise.
func (b *connBody) finish(clean bool) {
	pc := b.pc
	b.pc = nil
	watched := b.stop()
	if clean && b.keep && watched {
		b.t.put(pc)
		return
	}
	_ = pc.conn.Close()
}

// hostPort is the address to dial for u, with HTTP's default port when u
// names none.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}
