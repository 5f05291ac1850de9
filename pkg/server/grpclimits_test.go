package server

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"memsvc.dev/memsvc/pkg/config"
)

// grpcConfig is testConfig with gRPC on a free port.
func grpcConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg := testConfig(t)
	port := uint16(0)
	cfg.GRPC.Port = &port
	return cfg
}

// startGRPC starts a server with cfg and stops it when the test ends.
func startGRPC(t *testing.T, cfg *config.Config) *Server {
	t.Helper()
	_, s, stop := start(t, cfg)
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// healthCheck calls the gRPC health service on conn within d.
func healthCheck(t *testing.T, conn *grpc.ClientConn, d time.Duration) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	_, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	return err
}

func dialGRPC(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// servedConn dials s over gRPC and waits for its first health check to be
// answered.
func servedConn(t *testing.T, s *Server) *grpc.ClientConn {
	t.Helper()
	conn := dialGRPC(t, s.GRPCAddr())
	if err := healthCheck(t, conn, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	return conn
}

// TestGRPCConnectionCap: with grpc.max_connections open, a further client
// is not served until one of them closes; then it is.
func TestGRPCConnectionCap(t *testing.T) {
	cfg := grpcConfig(t)
	cfg.GRPC.MaxConnections = 1
	s := startGRPC(t, cfg)
	first := servedConn(t, s)
	second := dialGRPC(t, s.GRPCAddr())
	if err := healthCheck(t, second, 300*time.Millisecond); status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("a connection over the cap was served: %v", err)
	}
	first.Close()
	if err := healthCheck(t, second, 20*time.Second); err != nil {
		t.Fatalf("the waiting connection after one closed: %v", err)
	}
}

// TestGRPCIdleConnectionClosed: a connection without a call for
// grpc.idle_timeout_secs is closed by the server (the client's channel
// goes idle, and reconnects for its next call).
func TestGRPCIdleConnectionClosed(t *testing.T) {
	cfg := grpcConfig(t)
	cfg.GRPC.IdleTimeoutSecs = 1
	s := startGRPC(t, cfg)
	conn := servedConn(t, s)
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	for st := conn.GetState(); st != connectivity.Idle; st = conn.GetState() {
		if !conn.WaitForStateChange(ctx, st) {
			t.Fatalf("the connection was still %v 15 s after its last call", st)
		}
	}
	if err := healthCheck(t, conn, 10*time.Second); err != nil {
		t.Fatalf("a call after the idle close: %v", err)
	}
}

// TestGRPCSilentConnectionsClosed: a client that opens a connection and
// never completes the handshake is cut off after
// grpc.handshake_timeout_secs, and one that stops answering keepalive
// pings after grpc.keepalive_timeout_secs.
func TestGRPCSilentConnectionsClosed(t *testing.T) {
	cfg := grpcConfig(t)
	cfg.GRPC.HandshakeTimeoutSecs = 1
	cfg.GRPC.KeepaliveSecs, cfg.GRPC.KeepaliveTimeoutSecs = 1, 1
	s := startGRPC(t, cfg)

	mute, err := net.Dial("tcp", s.GRPCAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	if err := mute.SetReadDeadline(time.Now().Add(15 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(mute); err != nil {
		t.Fatalf("a connection without a handshake was not closed: %v", err)
	}

	// An HTTP/2 client that completes the handshake, then never answers a
	// ping.
	conn, err := net.Dial("tcp", s.GRPCAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	if err := conn.SetReadDeadline(time.Now().Add(15 * time.Second)); err != nil {
		t.Fatal(err)
	}
	pinged := false
	for range 100 {
		f, err := fr.ReadFrame()
		if err != nil {
			if !pinged || !errors.Is(err, io.EOF) {
				t.Fatalf("connection ended by %v (pinged: %v), want a ping and then the close", err, pinged)
			}
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				if err := fr.WriteSettingsAck(); err != nil {
					t.Fatal(err)
				}
			}
		case *http2.PingFrame:
			pinged = pinged || !f.IsAck()
		}
	}
	t.Fatal("the server kept the connection through 100 frames")
}
