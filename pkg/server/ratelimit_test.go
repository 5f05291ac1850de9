package server

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"memsvc.dev/memsvc/internal/testtls"
	"memsvc.dev/memsvc/pkg/config"
	pb "memsvc.dev/memsvc/pkg/grpcapi/memsvcpb"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

// transportCall is one call of the rate limit scenario: over which
// transport, with which API key ("" for none), and whether it must be let
// through (false: refused as rate limited).
type transportCall struct {
	grpc    bool
	key     string
	allowed bool
}

// TestRateLimitSharedAcrossTransports: HTTP and gRPC spend tokens from one
// bucket per client, so a client that uses both gets the configured rate
// once, not once per transport. The clock is frozen, so no token comes back
// while the test runs and every count is exact.
func TestRateLimitSharedAcrossTransports(t *testing.T) {
	const burst = 3
	frozen := func() time.Time { return time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC) }

	t.Run("per API key", func(t *testing.T) {
		cfg := rateLimitedConfig(t, burst)
		cfg.Auth.Enabled, cfg.Auth.APIKeys = true, []string{"key-one", "key-two"}
		certFile, keyFile, pool := testtls.SelfSigned(t, t.TempDir())
		cfg.GRPC.TLSCertPath, cfg.GRPC.TLSKeyPath = &certFile, &keyFile
		_, s, stop := startWith(t, cfg, Options{Version: "test", Now: frozen})
		creds := credentials.NewTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
		runCalls(t, s, creds, []transportCall{
			// key-one spends its burst mostly over HTTP; gRPC then finds
			// the bucket empty, and so does HTTP.
			{grpc: false, key: "key-one", allowed: true},
			{grpc: true, key: "key-one", allowed: true},
			{grpc: false, key: "key-one", allowed: true},
			{grpc: true, key: "key-one", allowed: false},
			{grpc: false, key: "key-one", allowed: false},
			// The other way round with a key of its own: gRPC spends the
			// burst, HTTP is refused.
			{grpc: true, key: "key-two", allowed: true},
			{grpc: true, key: "key-two", allowed: true},
			{grpc: true, key: "key-two", allowed: true},
			{grpc: false, key: "key-two", allowed: false},
			{grpc: true, key: "key-two", allowed: false},
		})
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	})

	// Without authentication both transports key the bucket on the client
	// address, and must name 127.0.0.1 the same way. Loopback clients are
	// limited only when rate_limit.limit_loopback asks for it.
	t.Run("per address", func(t *testing.T) {
		cfg := rateLimitedConfig(t, burst)
		cfg.RateLimit.LimitLoopback = true
		_, s, stop := startWith(t, cfg, Options{Version: "test", Now: frozen})
		runCalls(t, s, insecure.NewCredentials(), []transportCall{
			{grpc: true, allowed: true},
			{grpc: true, allowed: true},
			{grpc: false, allowed: true},
			{grpc: false, allowed: false},
			{grpc: true, allowed: false},
		})
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	})

	// By default, with authentication off, the agents and tools of the
	// server's own host are not limited, over either transport.
	t.Run("loopback by default", func(t *testing.T) {
		cfg := rateLimitedConfig(t, burst)
		_, s, stop := startWith(t, cfg, Options{Version: "test", Now: frozen})
		var calls []transportCall
		for i := range 4 * burst {
			calls = append(calls, transportCall{grpc: i%2 == 0, allowed: true})
		}
		runCalls(t, s, insecure.NewCredentials(), calls)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	})
}

// rateLimitedConfig is testConfig with gRPC on a free port and a bucket of
// burst tokens refilled at the lowest rate the configuration allows.
func rateLimitedConfig(t *testing.T, burst uint32) *config.Config {
	t.Helper()
	cfg := testConfig(t)
	cfg.RateLimit.RequestsPerSecond, cfg.RateLimit.Burst = 1, burst
	port := uint16(0)
	cfg.GRPC.Port = &port
	return cfg
}

// runCalls makes the calls in order against s and checks each outcome.
func runCalls(t *testing.T, s *Server, creds credentials.TransportCredentials, calls []transportCall) {
	t.Helper()
	conn, err := grpc.NewClient(s.GRPCAddr(), grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	g := pb.NewMemsvcServiceClient(conn)
	for i, c := range calls {
		var refused bool
		var outcome string
		if c.grpc {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			if c.key != "" {
				ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+c.key)
			}
			_, err := g.Stats(ctx, &pb.StatsRequest{})
			cancel()
			refused, outcome = status.Code(err) == codes.ResourceExhausted, fmt.Sprint(err)
			if err != nil && !refused {
				t.Fatalf("call %d over gRPC: %v", i, err)
			}
		} else {
			code, errCode := httpStats(t, s.HTTPAddr(), c.key)
			refused, outcome = code == http.StatusTooManyRequests, fmt.Sprint(code, " ", errCode)
			if refused && errCode != memory.CodeRateLimited || !refused && code != http.StatusOK {
				t.Fatalf("call %d over HTTP: status %d, code %q", i, code, errCode)
			}
		}
		if refused == c.allowed {
			transport := "HTTP"
			if c.grpc {
				transport = "gRPC"
			}
			t.Fatalf("call %d over %s with key %q: allowed=%v, want %v (%s)", i, transport, c.key, !refused, c.allowed, outcome)
		}
	}
}

// httpStats calls GET /v1/introspect/stats and returns the status and, for
// an error, the code of the envelope.
func httpStats(t *testing.T, addr, key string) (int, memory.Code) {
	t.Helper()
	return httpStatsIn(t, addr, key, "")
}

// httpStatsIn is httpStats in namespace ns ("" names none).
func httpStatsIn(t *testing.T, addr, key, ns string) (int, memory.Code) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+wire.PathStats, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if ns != "" {
		req.Header.Set(wire.HeaderNamespace, ns)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode == http.StatusOK {
		return resp.StatusCode, ""
	}
	var env struct{ Code memory.Code }
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatalf("status %d with a body that is not an envelope: %q", resp.StatusCode, body)
	}
	return resp.StatusCode, env.Code
}
