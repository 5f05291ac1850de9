package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/config"
	"memsvc.dev/memsvc/pkg/memory"
)

// TestSlowBodyCutOff: a client that sends its headers and then trickles
// its body is cut off once the body deadline passes, long before the body
// would be complete, and is told why. The server goes on serving.
func TestSlowBodyCutOff(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTP.BodyTimeoutSecs = 1
	cfg.HTTP.BodyMinBytesPerSec = 1000 // one byte every 20 ms earns 0.05 s per second
	c, s := serve(t, cfg)
	conn, err := net.Dial("tcp", s.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const size = 100000 // 2000 s at this pace
	if _, err := fmt.Fprintf(conn, "POST /v1/encode HTTP/1.1\r\nHost: memsvc\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", size); err != nil {
		t.Fatal(err)
	}
	answered := make(chan string, 1)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			answered <- "no answer: " + err.Error()
			return
		}
		body, _ := io.ReadAll(resp.Body)
		answered <- fmt.Sprintf("%d %s", resp.StatusCode, body)
	}()
	begin := time.Now()
	var answer string
	sent := 1
trickle:
	for ; sent < size; sent++ {
		select {
		case answer = <-answered:
			break trickle
		case <-time.After(20 * time.Millisecond):
		}
		if time.Since(begin) > 30*time.Second {
			t.Fatalf("still reading the body after %v and %d bytes", time.Since(begin), sent)
		}
		if _, err := conn.Write([]byte(" ")); err != nil {
			answer = <-answered // the server closed the connection
			break
		}
	}
	if sent >= size {
		t.Fatal("the whole body was accepted at a trickle")
	}
	if !strings.HasPrefix(answer, "400 ") || !strings.Contains(answer, "arrived too slowly") {
		t.Errorf("answer to a trickling body: %s", answer)
	}
	// Cut off, not waited out: the connection is closed after the answer.
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Read(make([]byte, 1)); !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !isReset(err) {
		t.Errorf("the connection stayed open after the cut-off: %v", err)
	}
	if _, err := c.Stats(context.Background()); err != nil {
		t.Fatalf("server after a slow client: %v", err)
	}
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && strings.Contains(op.Err.Error(), "reset")
}

// TestBodyDeadlineGrowsWithData: a body that keeps arriving at more than
// the minimum rate is read to the end although it takes longer than the
// base timeout.
func TestBodyDeadlineGrowsWithData(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTP.BodyTimeoutSecs = 1
	cfg.HTTP.BodyMinBytesPerSec = 100
	c, s := serve(t, cfg)
	conn, err := net.Dial("tcp", s.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"content":{"blocks":[{"modality":"text","format":"text/plain","data":[104,105]}]}}` + strings.Repeat(" ", 3000)
	if _, err := fmt.Fprintf(conn, "POST /v1/encode HTTP/1.1\r\nHost: memsvc\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body)); err != nil {
		t.Fatal(err)
	}
	// 200 bytes every 100 ms: 2000 bytes/s, twenty times the minimum;
	// the whole body takes 1.6 s, longer than the base second.
	ticker := time.NewTicker(100 * time.Millisecond)
	defer ticker.Stop()
	begin := time.Now()
	for off := 0; off < len(body); off += 200 {
		<-ticker.C
		if _, err := io.WriteString(conn, body[off:min(off+200, len(body))]); err != nil {
			t.Fatalf("write after %d bytes: %v", off, err)
		}
	}
	if took := time.Since(begin); took <= time.Second {
		t.Fatalf("the body took %v, within the base timeout: the test proves nothing", took)
	}
	if err := conn.SetReadDeadline(time.Now().Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("a body at a sane rate: %d %s", resp.StatusCode, answer)
	}
	if st, err := c.Stats(context.Background()); err != nil || st.TotalRecords != 1 {
		t.Fatalf("stats %+v %v", st, err)
	}
}

// TestConnectionCap: with http.max_connections open, a further client is
// not served until one of them closes; then it is.
func TestConnectionCap(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTP.MaxConnections = 2
	_, s := serve(t, cfg)
	get := func(conn net.Conn) error {
		if _, err := io.WriteString(conn, "GET /health HTTP/1.1\r\nHost: memsvc\r\n\r\n"); err != nil {
			return err
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	var held []net.Conn
	for range 2 {
		conn, err := net.Dial("tcp", s.HTTPAddr())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if err := get(conn); err != nil { // accepted and kept alive
			t.Fatal(err)
		}
		held = append(held, conn)
	}
	third, err := net.Dial("tcp", s.HTTPAddr()) // the kernel queues it
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	if _, err := io.WriteString(third, "GET /health HTTP/1.1\r\nHost: memsvc\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if err := third.SetReadDeadline(time.Now().Add(300 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := third.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a connection over the cap was served: %v", err)
	}
	held[0].Close()
	if err := third.SetReadDeadline(time.Now().Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(third), nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the waiting connection after one closed: %v %v", resp, err)
	}
	resp.Body.Close()
}

// TestExampleConfigLimits: the documented example configuration boots a
// server, and its timeouts and connection cap are what the server uses.
func TestExampleConfigLimits(t *testing.T) {
	path := testkit.ExampleConfig(t, "../../deploy-docs/memsvc.example.toml")
	cfg, err := config.Load(config.LoadOptions{File: path})
	if err != nil {
		t.Fatal(err)
	}
	hs := newHTTPServer(&cfg.HTTP, http.NotFoundHandler(), newTestLogger(io.Discard))
	if hs.ReadHeaderTimeout != 10*time.Second || hs.IdleTimeout != 2*time.Minute {
		t.Errorf("http server from the example: header timeout %v, idle timeout %v", hs.ReadHeaderTimeout, hs.IdleTimeout)
	}
	if cfg.HTTP.BodyTimeoutSecs != 30 || cfg.HTTP.BodyMinBytesPerSec != 16<<10 || cfg.HTTP.MaxConnections != 1024 {
		t.Errorf("example limits: %+v", cfg.HTTP)
	}
	c, _, stop := start(t, cfg)
	if _, err := c.EncodeStore(context.Background(), &memory.EncodeStoreRequest{Content: memory.TextContent("booted from the example")}); err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
