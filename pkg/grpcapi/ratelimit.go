package grpcapi

import (
	"sync"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// limiter is a token bucket per client key: burst tokens, refilled at rate
// tokens per second, one token per call. It is the algorithm and the
// semantics of pkg/httpapi's limiter, so both transports limit alike.
type limiter struct {
	rate  float64
	burst float64
	max   int
	now   func() time.Time

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastPrune time.Time
}

type bucket struct {
	tokens float64
	last   time.Time
}

// pruneEvery is how often full (idle) buckets are dropped.
const pruneEvery = time.Minute

func newLimiter(cfg RateLimit, now func() time.Time) *limiter {
	l := &limiter{rate: cfg.RequestsPerSecond, burst: float64(cfg.Burst), max: cfg.MaxClients, now: now, buckets: map[string]*bucket{}}
	if l.burst < 1 {
		l.burst = 1
	}
	if l.max <= 0 {
		l.max = DefaultMaxClients
	}
	l.lastPrune = now()
	return l
}

// allow takes a token from key's bucket. When there is none it reports how
// long until there is one.
func (l *limiter) allow(key string) (bool, time.Duration) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if since := now.Sub(l.lastPrune); since >= pruneEvery || len(l.buckets) >= l.max && since >= time.Second {
		l.prune(now)
	}
	b, ok := l.buckets[key]
	switch {
	case !ok:
		if len(l.buckets) >= l.max {
			for k := range l.buckets { // forget an arbitrary client
				delete(l.buckets, k)
				break
			}
		}
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[key] = b
	case now.After(b.last):
		b.tokens = min(l.burst, b.tokens+now.Sub(b.last).Seconds()*l.rate)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
}

// prune drops the buckets that have refilled completely: they are the same
// as no bucket.
func (l *limiter) prune(now time.Time) {
	l.lastPrune = now
	for k, b := range l.buckets {
		if b.tokens+now.Sub(b.last).Seconds()*l.rate >= l.burst {
			delete(l.buckets, k)
		}
	}
}

// rateLimited is the error of a call over the limit. RetryAfter is the
// wait in whole seconds, truncated plus one (never 0, never early), as the
// HTTP API announces it.
func rateLimited(wait time.Duration) error {
	s := int64(wait / time.Second)
	after := uint32(1<<32 - 1)
	if s < 1<<32-2 {
		after = uint32(s) + 1
	}
	return &memory.Error{Code: memory.CodeRateLimited, Message: "rate limit exceeded", RetryAfter: after}
}
