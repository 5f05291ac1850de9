package grpcapi

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"memsvc.dev/memsvc/pkg/access"
	pb "memsvc.dev/memsvc/pkg/grpcapi/memsvcpb"
	"memsvc.dev/memsvc/pkg/memory"
)

// TestSharedLimiter: a Limiter passed in Options is the one used, in place
// of one built from RateLimit, so two servers given the same Limiter spend
// from the same buckets.
func TestSharedLimiter(t *testing.T) {
	clock := &fakeClock{now: t0}
	shared := access.NewLimiter(RateLimit{RequestsPerSecond: 1, Burst: 2}, clock.Now)
	stats := &stubService{stats: func(context.Context) (*memory.Stats, error) { return &memory.Stats{}, nil }}
	// RateLimit would allow far more; it must be ignored.
	opts := Options{AuthEnabled: true, APIKeys: []string{"k"}, Limiter: shared, RateLimit: RateLimit{RequestsPerSecond: 1000, Burst: 1000}}
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
	if n := shared.Size(); n != 1 {
		t.Fatalf("the shared limiter holds %d buckets, want the key's one", n)
	}
}
