package mcpproxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// countingServer is an httptest server that counts the connections made
// to it; handler serves the requests.
func countingServer(t *testing.T, handler http.HandlerFunc) (*httptest.Server, func() int) {
	t.Helper()
	var mu sync.Mutex
	conns := 0
	ts := httptest.NewUnstartedServer(handler)
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			conns++
			mu.Unlock()
		}
	}
	ts.Start()
	t.Cleanup(ts.Close)
	return ts, func() int { mu.Lock(); defer mu.Unlock(); return conns }
}

func directClient() (*http.Client, *connTransport) {
	tr := newConnTransport((&net.Dialer{Timeout: 5 * time.Second}).DialContext, maxConcurrent, http.DefaultTransport.(*http.Transport).Clone())
	return &http.Client{Transport: tr}, tr
}

// post sends body to url and returns the answer's status and body.
func post(ctx context.Context, hc *http.Client, url, body string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestConnTransportReuse: sequential requests, with answers of a known
// length, chunked, empty or read only up to their length, all travel on
// one connection, and every request body and answer arrives whole.
func TestConnTransportReuse(t *testing.T) {
	ts, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/chunked":
			_, _ = w.Write(b)
			w.(http.Flusher).Flush()
			_, _ = w.Write([]byte("!"))
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		default:
			w.Header().Set("Content-Length", fmt.Sprint(len(b)+1))
			_, _ = w.Write(append(b, '!'))
		}
	})
	hc, tr := directClient()
	defer tr.CloseIdleConnections()
	ctx := context.Background()
	for i := range 30 {
		body := strings.Repeat(fmt.Sprint(i), 1+i*1000)
		path := []string{"/length", "/chunked", "/empty"}[i%3]
		status, got, err := post(ctx, hc, ts.URL+path, body)
		want := body + "!"
		if path == "/empty" {
			want = ""
		}
		if err != nil || got != want {
			t.Fatalf("request %d (%s): status %d, err %v, answer of %d bytes, want %d", i, path, status, err, len(got), len(want))
		}
	}
	// An answer read exactly to its length, never to io.EOF, as pkg/client
	// reads them, leaves the connection reusable too.
	for range 3 {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/length", strings.NewReader("abc"))
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, resp.ContentLength)
		if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "abc!" {
			t.Fatalf("read %q: %v", buf, err)
		}
		_ = resp.Body.Close()
		if _, err := resp.Body.Read(buf); !errors.Is(err, errBodyClosed) {
			t.Errorf("read after Close: %v", err)
		}
	}
	if n := conns(); n != 1 {
		t.Errorf("%d connections for sequential requests, want 1", n)
	}
}

// TestConnTransportNotReused: an answer that closes the connection, or
// whose body is left mostly unread, is not followed on that connection.
func TestConnTransportNotReused(t *testing.T) {
	big := strings.Repeat("x", 4*drainLimit)
	ts, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/close" {
			w.Header().Set("Connection", "close")
		}
		_, _ = io.WriteString(w, big)
	})
	hc, tr := directClient()
	defer tr.CloseIdleConnections()
	if _, got, err := post(context.Background(), hc, ts.URL+"/close", ""); err != nil || got != big {
		t.Fatalf("answer of %d bytes: %v", len(got), err)
	}
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/big", nil)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close() // unread
	if _, err := resp.Body.Read(make([]byte, 1)); err == nil {
		t.Error("read after Close succeeded")
	}
	if _, got, err := post(context.Background(), hc, ts.URL+"/big", ""); err != nil || got != big {
		t.Fatalf("answer of %d bytes: %v", len(got), err)
	}
	if n := conns(); n != 3 {
		t.Errorf("%d connections, want 3 (none reused)", n)
	}
}

// TestConnTransportServerClosedIdle: when the server has closed the kept
// connection, the next request goes out on a new one.
func TestConnTransportServerClosedIdle(t *testing.T) {
	ts, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	hc, tr := directClient()
	defer tr.CloseIdleConnections()
	for i := range 3 {
		if _, got, err := post(context.Background(), hc, ts.URL, "x"); err != nil || got != "ok" {
			t.Fatalf("request %d: %q, %v", i, got, err)
		}
		ts.CloseClientConnections()
	}
	if n := conns(); n != 3 {
		t.Errorf("%d connections, want 3", n)
	}
}

// TestConnTransportResend: a kept connection the server closes after
// reading a request, without answering (this server does so with the
// second request on every connection), gets the request sent once more
// on a new connection, body and all; a request whose body cannot be sent
// again fails instead.
func TestConnTransportResend(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	bodies := make(chan string, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				br := bufio.NewReader(c)
				for k := 0; ; k++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					b, _ := io.ReadAll(req.Body)
					if k == 1 {
						return // gives up on the kept connection unanswered
					}
					bodies <- string(b)
					_, _ = fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(b), b)
				}
			}(c)
		}
	}()
	hc, tr := directClient()
	defer tr.CloseIdleConnections()
	url := "http://" + ln.Addr().String()
	for _, body := range []string{"one", "two"} {
		if _, got, err := post(context.Background(), hc, url, body); err != nil || got != body {
			t.Fatalf("%s: answer %q, %v", body, got, err)
		}
	}
	if got := []string{<-bodies, <-bodies}; got[0] != "one" || got[1] != "two" {
		t.Errorf("server read %q", got)
	}
	// A body without GetBody cannot be sent twice.
	if _, got, err := post(context.Background(), hc, url, "three"); err != nil || got != "three" {
		t.Fatalf("three: answer %q, %v", got, err)
	}
	<-bodies
	req, _ := http.NewRequest(http.MethodPost, url, io.NopCloser(strings.NewReader("four")))
	req.ContentLength = 4
	if resp, err := hc.Do(req); err == nil || !errors.Is(err, errClosedBeforeAnswer) {
		if resp != nil {
			_ = resp.Body.Close()
		}
		t.Errorf("one-shot body on a dropped connection: err %v", err)
	}
}

// TestConnTransportCancel: cancelling a request, or its deadline passing,
// ends it at once with the context's error, and the transport goes on
// serving.
func TestConnTransportCancel(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 4)
	ts, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			arrived <- struct{}{}
			select {
			case <-release:
			case <-time.After(30 * time.Second):
			}
		}
		_, _ = io.WriteString(w, "ok")
	})
	defer close(release)
	hc, tr := directClient()
	defer tr.CloseIdleConnections()

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	start := time.Now()
	if _, _, err := post(ctx, hc, ts.URL+"/slow", "x"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err %v", err)
	}
	tctx, tcancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer tcancel()
	if _, _, err := post(tctx, hc, ts.URL+"/slow", "x"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("past its deadline: err %v", err)
	}
	<-arrived
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("cancelled requests took %v", took)
	}
	if _, got, err := post(context.Background(), hc, ts.URL, "x"); err != nil || got != "ok" {
		t.Errorf("after cancelling: %q, %v", got, err)
	}
}

// TestServerTransport: Run talks plain http directly through
// connTransport, and https or through a proxy (as the proxy function
// says) with net/http's transport.
func TestServerTransport(t *testing.T) {
	proxy := func(r *http.Request) (*url.URL, error) {
		if r.URL.Hostname() == "memsvc.invalid" {
			return url.Parse("http://proxy.invalid:3128")
		}
		return nil, nil
	}
	for u, direct := range map[string]bool{
		"http://127.0.0.1:8420":     true,
		"http://localhost:8420/sub": true,
		"https://127.0.0.1:8420":    false,
		"http://memsvc.invalid":     false, // through HTTP_PROXY
	} {
		_, ok := serverTransport(u, proxy).(*connTransport)
		if ok != direct {
			t.Errorf("%s: connTransport %v, want %v", u, ok, direct)
		}
	}
	_, tr := directClient()
	req, _ := http.NewRequest(http.MethodGet, "https://127.0.0.1:1/", bytes.NewReader(nil))
	if _, err := tr.RoundTrip(req); err == nil {
		t.Error("https through connTransport: no error")
	}
}

// TestConnTransportBigBody: a request body too big to write in one go,
// or of unknown length, goes through net/http's transport, so that a
// server refusing it before reading it all is heard; the refusal comes
// back as the answer, not as a broken connection.
func TestConnTransportBigBody(t *testing.T) {
	ts, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > directBodyBytes || r.ContentLength < 0 {
			_, _ = io.CopyN(io.Discard, r.Body, 1024)
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			_, _ = io.WriteString(w, "too large")
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, "ok")
	})
	hc, tr := directClient()
	defer tr.CloseIdleConnections()
	big := strings.Repeat("x", 32*directBodyBytes)
	for range 3 {
		status, got, err := post(context.Background(), hc, ts.URL, big)
		if err != nil || status != http.StatusRequestEntityTooLarge || got != "too large" {
			t.Fatalf("big body: %d %q, %v", status, got, err)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, ts.URL, io.NopCloser(strings.NewReader("unknown length")))
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("body of unknown length: %d", resp.StatusCode)
	}
	if status, got, err := post(context.Background(), hc, ts.URL, "small"); err != nil || got != "ok" {
		t.Fatalf("small body: %d %q, %v", status, got, err)
	}
	if n := conns(); n != 5 {
		t.Errorf("%d connections, want 5 (one per refusal, one for the small body)", n)
	}
}
