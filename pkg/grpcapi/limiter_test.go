package grpcapi

import (
	"context"
	"memsvc.dev/memsvc/internal/testkit"
	"net"
	"net/netip"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"memsvc.dev/memsvc/pkg/access"
	pb "memsvc.dev/memsvc/pkg/grpcapi/memsvcpb"
	"memsvc.dev/memsvc/pkg/memory"
)

// TestSharedGate: a Gate passed in Options is the one used, in place of one
// built from AuthEnabled, APIKeys and RateLimit, so two servers given the
// same Gate spend from the same buckets and take the same keys.
func TestSharedGate(t *testing.T) {
	clock := testkit.NewClock(t0)
	shared := access.NewGate(access.Policy{Keys: testkit.Keyring(t, "k"), Rate: RateLimit{RequestsPerSecond: 1, Burst: 2}}, clock.Now)
	stats := &stubService{stats: func(context.Context) (*memory.Stats, error) { return &memory.Stats{}, nil }}
	// The other options would allow far more; they must be ignored.
	opts := Options{AuthEnabled: true, APIKeys: []string{"other"}, Gate: shared, RateLimit: RateLimit{RequestsPerSecond: 1000, Burst: 1000}}
	first, second := newFixture(t, stats, opts), newFixture(t, stats, opts)
	ctx := withKey(t.Context(), "Bearer k")
	steps := []struct {
		f       *fixture
		allowed bool
	}{{first, true}, {second, true}, {first, false}, {second, false}}
	for i, s := range steps {
		_, err := s.f.client.Stats(ctx, &pb.StatsRequest{})
		if s.allowed && err != nil || !s.allowed && status.Code(err) != codes.ResourceExhausted {
			t.Fatalf("step %d: %v, want allowed=%v", i, err, s.allowed)
		}
	}
	if n := shared.Clients(); n != 1 {
		t.Fatalf("the shared gate holds %d buckets, want the key's one", n)
	}
}

// TestFailedAuthIsRateLimited: failed calls spend from the peer address's
// bucket, so bad keys are RESOURCE_EXHAUSTED once the burst is spent; a
// valid key from that address is still served, from its own bucket (see
// access.Limiter.Admit for why).
func TestFailedAuthIsRateLimited(t *testing.T) {
	clock := testkit.NewClock(t0)
	f := newFixture(t, &stubService{}, Options{
		AuthEnabled: true, APIKeys: []string{"good"},
		RateLimit: RateLimit{RequestsPerSecond: 1, Burst: 3},
		Now:       clock.Now,
	})
	const (
		goodKey  = "Bearer good"
		wrongKey = "Bearer guess"
	)
	stats := func(auth string) error {
		ctx := t.Context()
		if auth != "" {
			ctx = withKey(ctx, auth)
		}
		_, err := f.client.Stats(ctx, &pb.StatsRequest{})
		return err
	}
	limited := func(err error, retry time.Duration) bool {
		return status.Code(err) == codes.ResourceExhausted &&
			errorInfo(err).GetReason() == string(memory.CodeRateLimited) &&
			retryInfo(err).GetRetryDelay().AsDuration() == retry
	}
	steps := []struct {
		name    string
		advance time.Duration
		auth    string
		code    codes.Code
	}{
		{"failure 1", 0, wrongKey, codes.Unauthenticated},
		{"failure 2, no metadata", 0, "", codes.Unauthenticated},
		{"failure 3 empties the address bucket", 0, wrongKey, codes.Unauthenticated},
		{"the next bad key is limited", 0, wrongKey, codes.ResourceExhausted},
		{"no metadata: limited too", 0, "", codes.ResourceExhausted},
		{"the valid key from that address is served", 0, goodKey, codes.OK},
		{"and again", 0, goodKey, codes.OK},
		{"its last token", 0, goodKey, codes.OK},
		{"the valid key's bucket is empty", 0, goodKey, codes.ResourceExhausted},
		{"one token back in each bucket", time.Second, wrongKey, codes.Unauthenticated},
		{"and then the address is limited again", 0, wrongKey, codes.ResourceExhausted},
		{"the key has its token", 0, goodKey, codes.OK},
	}
	for i, s := range steps {
		clock.Advance(s.advance)
		err := stats(s.auth)
		if status.Code(err) != s.code {
			t.Fatalf("step %d (%s): %v, want %v", i, s.name, err, s.code)
		}
		// A bucket emptied at a frozen time has its next token 1 s away:
		// truncated plus one, as over HTTP.
		if s.code == codes.ResourceExhausted && !limited(err, 2*time.Second) {
			t.Fatalf("step %d (%s): %v with %v and %v, want RATE_LIMITED with a 2 s retry", i, s.name, err, errorInfo(err), retryInfo(err))
		}
	}
	// Streams are admitted the same way, and health checks are exempt.
	if _, err := importAll(withKey(t.Context(), wrongKey), f.client, &pb.ImportRequest{Options: &pb.ImportOptions{}}); !limited(err, 2*time.Second) {
		t.Errorf("import stream with a wrong key from the limited address: %v", err)
	}
	if _, err := f.health.Check(t.Context(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Errorf("health check from the limited address: %v", err)
	}
}

// TestPeerAddr: the transport names a peer's address as the HTTP
// transport does, so a shared Gate gives a client one address bucket.
func TestPeerAddr(t *testing.T) {
	tcp := func(ip string) net.Addr { return &net.TCPAddr{IP: net.ParseIP(ip), Port: 4242} }
	tests := []struct {
		name string
		addr net.Addr // nil: no peer in the context
		want string
	}{
		{"IPv4", tcp("192.0.2.1"), "192.0.2.1"},
		{"IPv4 in IPv6", tcp("::ffff:192.0.2.1"), "192.0.2.1"},
		{"IPv6", tcp("2001:db8::1"), "2001:db8::1"},
		{"IPv6 with a zone", &net.TCPAddr{IP: net.ParseIP("fe80::1"), Zone: "eth0", Port: 1}, "fe80::1"},
		{"other network with an address", &net.UDPAddr{IP: net.ParseIP("192.0.2.9"), Port: 53}, "192.0.2.9"},
		{"no IP address", &net.UnixAddr{Name: "/run/memsvc.sock", Net: "unix"}, "0.0.0.0"},
		{"no peer", nil, "0.0.0.0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			if tc.addr != nil {
				ctx = peer.NewContext(ctx, &peer.Peer{Addr: tc.addr})
			}
			if got, want := access.AddressKey(peerAddr(ctx)), access.AddressKey(netip.MustParseAddr(tc.want)); got != want {
				t.Errorf("peer %v: key %q, want %q", tc.addr, got, want)
			}
		})
	}
}

// TestAddressBucketShared: over a real loopback connection, the bucket a
// failed call spends is access.AddressKey(127.0.0.1), the one HTTP spends
// for the same client: once it is empty in a shared Gate (here emptied
// directly, as HTTP failures would), gRPC refuses the client too.
func TestAddressBucketShared(t *testing.T) {
	clock := testkit.NewClock(t0)
	shared := access.NewGate(access.Policy{Keys: testkit.Keyring(t, "good"), Rate: RateLimit{RequestsPerSecond: 1, Burst: 2}}, clock.Now)
	srv, err := NewServer(&stubService{}, Options{Gate: shared})
	if err != nil {
		t.Fatal(err)
	}
	addr := serveTCP(t, srv)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	client := pb.NewMemsvcServiceClient(conn)
	call := func(auth string) error {
		callCtx, cancelCall := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancelCall()
		_, err := client.Stats(withKey(callCtx, auth), &pb.StatsRequest{})
		return err
	}

	if err := call("Bearer guess"); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("first failure: %v", err)
	}
	loopback := access.AddressKey(netip.MustParseAddr("127.0.0.1"))
	if ok, _ := shared.Allow(loopback); !ok {
		t.Fatal("the address bucket is empty after one failure of a burst of two")
	}
	if ok, _ := shared.Allow(loopback); ok {
		t.Fatal("the gRPC failure did not spend from the bucket of 127.0.0.1")
	}
	if err := call("Bearer guess"); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("a bad key from an address emptied by failures: %v, want RESOURCE_EXHAUSTED", err)
	}
	if err := call("Bearer good"); err != nil {
		t.Errorf("the valid key from an address emptied by failures: %v, want it served", err)
	}
}
