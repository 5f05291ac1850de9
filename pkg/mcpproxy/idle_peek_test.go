//go:build linux || darwin || freebsd || netbsd || openbsd

package mcpproxy

import (
	"net"
	"testing"
	"time"
)

// TestIdleClosed: idleClosed tells an open idle connection from one the
// other side has closed.
func TestIdleClosed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	peer := <-accepted
	if idleClosed(c) {
		t.Fatal("open connection reported closed")
	}
	_ = peer.Close()
	deadline := time.Now().Add(10 * time.Second)
	for !idleClosed(c) {
		if time.Now().After(deadline) {
			t.Fatal("closed connection not reported within 10s")
		}
		time.Sleep(time.Millisecond)
	}
}
