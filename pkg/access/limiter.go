package access

import (
	"sync"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// RateLimit configures a Limiter.
type RateLimit struct {
	RequestsPerSecond float64
	// Burst < 1 selects 1.
	Burst int
	// MaxClients bounds the number of buckets kept; 0 selects
	// DefaultMaxClients. Idle buckets (full again) are dropped first;
	// beyond that an arbitrary bucket is forgotten, which at worst lets its
	// client start afresh.
	MaxClients int
	// LimitLoopback limits local calls (Caller.Local) when authentication
	// is off; by default they are not limited (Admit).
	LimitLoopback bool
}

// DefaultMaxClients is the number of client buckets a Limiter keeps unless
// told otherwise.
const DefaultMaxClients = 100_000

// Limiter is a token bucket per client key: Burst tokens, refilled at
// RequestsPerSecond, one token per call. It is safe for concurrent use.
type Limiter struct {
	cfg RateLimit // the rate of Allow and Admit; a Gate passes its own
	max int
	now func() time.Time

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastPrune time.Time
}

type bucket struct {
	tokens float64
	last   time.Time
}

// pruneEvery is how often idle buckets are dropped.
const pruneEvery = time.Minute

// NewLimiter returns a limiter reading time from now.
func NewLimiter(cfg RateLimit, now func() time.Time) *Limiter {
	l := &Limiter{cfg: cfg, max: cfg.MaxClients, now: now, buckets: map[string]*bucket{}}
	if l.max <= 0 {
		l.max = DefaultMaxClients
	}
	l.lastPrune = now()
	return l
}

// Allow takes a token from key's bucket. When there is none it reports how
// long until there is one.
func (l *Limiter) Allow(key string) (bool, time.Duration) {
	return l.allow(key, l.cfg)
}

// rate is a RateLimit's refill rate and bucket size, as a Limiter uses them.
type rate struct{ perSecond, burst float64 }

func rateOf(cfg RateLimit) rate {
	return rate{perSecond: cfg.RequestsPerSecond, burst: max(1, float64(cfg.Burst))}
}

// allow is Allow at the rate of cfg. The buckets outlive a change of
// rate: a bucket keeps its tokens (never more than the new burst) and
// refills at the new rate from then on.
func (l *Limiter) allow(key string, cfg RateLimit) (bool, time.Duration) {
	r := rateOf(cfg)
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if since := now.Sub(l.lastPrune); since >= pruneEvery || len(l.buckets) >= l.max && since >= time.Second {
		l.prune(now, r)
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
		b = &bucket{tokens: r.burst, last: now}
		l.buckets[key] = b
	case now.After(b.last):
		b.tokens = r.level(b, now)
		b.last = now
	default:
		b.tokens = min(b.tokens, r.burst)
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, r.wait(b.tokens)
}

// level is the number of tokens in b at now, refilled since b.last up to
// the burst. A clock that went back refills nothing.
func (r rate) level(b *bucket, now time.Time) float64 {
	if !now.After(b.last) {
		return min(r.burst, b.tokens)
	}
	return min(r.burst, b.tokens+now.Sub(b.last).Seconds()*r.perSecond)
}

// wait is the time until a bucket holding tokens (< 1) holds one.
func (r rate) wait(tokens float64) time.Duration {
	return time.Duration((1 - tokens) / r.perSecond * float64(time.Second))
}

// prune drops the buckets that have refilled completely: they are the same
// as no bucket at all.
func (l *Limiter) prune(now time.Time, r rate) {
	l.lastPrune = now
	for k, b := range l.buckets {
		if r.level(b, now) >= r.burst {
			delete(l.buckets, k)
		}
	}
}

// Size is the number of client buckets kept.
func (l *Limiter) Size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// RetryAfterSeconds is the whole seconds to announce for a wait: truncated,
// plus one, so never 0 and never early.
func RetryAfterSeconds(wait time.Duration) uint32 {
	s := int64(wait / time.Second)
	if s >= 1<<32-2 {
		return 1<<32 - 1
	}
	return uint32(s) + 1
}

// RateLimited is the error of a call over the limit that may be retried
// after wait.
func RateLimited(wait time.Duration) *memory.Error {
	return &memory.Error{Code: memory.CodeRateLimited, Message: "rate limit exceeded", RetryAfter: RetryAfterSeconds(wait)}
}
