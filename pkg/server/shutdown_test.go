package server

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/memory"
)

// TestShutdownDrainsInFlight: a request the handler is working on when
// shutdown begins still completes with 200 while the server drains, the
// record it acknowledged survives a restart, and from the moment shutdown
// begins the server accepts no new connections.
func TestShutdownDrainsInFlight(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTP.ShutdownTimeoutSecs = 30 // far beyond the test's own pace
	s := New(cfg, Options{Version: "test"})
	cancel, res := runReady(t, s)
	defer cancel()
	addr := s.HTTPAddr()

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	body := `{"content":{"blocks":[{"modality":"text","format":"text/plain","data":"` +
		base64.StdEncoding.EncodeToString([]byte("written while draining")) + `"}]}}`
	// With Expect: 100-continue the server answers "100 Continue" when the
	// handler starts reading the body: from then on the request is
	// provably in flight, blocked until the body arrives.
	if _, err := fmt.Fprintf(conn, "POST /v1/encode HTTP/1.1\r\nHost: memsvc\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", len(body)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != http.StatusContinue {
		t.Fatalf("want 100 Continue from the handler, got %v %v", resp, err)
	}

	cancel() // shutdown begins
	refused := false
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		switch {
		case err == nil:
			c.Close() // shutdown has not reached the listener yet
			continue
		case errors.Is(err, syscall.ECONNRESET):
			// Queued on the listener as it closed: not accepted either,
			// but the next dial should find no listener at all.
			continue
		case !errors.Is(err, syscall.ECONNREFUSED):
			t.Fatalf("dial during shutdown: %v, want connection refused", err)
		}
		refused = true
		break
	}
	if !refused {
		t.Fatal("the server still accepts connections 10 s after shutdown began")
	}
	select {
	case err := <-res:
		t.Fatalf("Run returned (%v) while a request was in flight", err)
	default:
	}

	if _, err := io.WriteString(conn, body); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("the in-flight request got no answer: %v", err)
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("in-flight request: status %d, %v: %s", resp.StatusCode, err, answer)
	}
	var stored memory.EncodeStoreResponse
	if err := json.Unmarshal(answer, &stored); err != nil || stored.RecordID == (memory.ID{}) {
		t.Fatalf("in-flight request answered %s (%v)", answer, err)
	}
	if err := testkit.Receive(t, res, 20*time.Second, "Run to return after the last request finished"); err != nil {
		t.Fatalf("Run after draining: %v", err)
	}

	c, _, stop := start(t, cfg)
	rec, err := c.Record(context.Background(), &memory.IntrospectRecordRequest{RecordID: stored.RecordID})
	if err != nil {
		t.Fatalf("record acknowledged during the drain is gone after a restart: %v", err)
	}
	if text, _ := rec.Content.Text(); text != "written while draining" {
		t.Fatalf("record text %q", text)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
