package httpapi

import (
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// limiter is a token bucket per client key: burst tokens, refilled at rate
// tokens per second, one token per request.
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

// pruneEvery is how often idle buckets are dropped.
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
// long until there is.
func (l *limiter) allow(key string) (bool, time.Duration) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if since := now.Sub(l.lastPrune); since >= pruneEvery || len(l.buckets) >= l.max && since >= time.Second {
		l.prune(now)
	}
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= l.max {
			for k := range l.buckets { // forget an arbitrary client
				delete(l.buckets, k)
				break
			}
		}
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[key] = b
	} else if elapsed := now.Sub(b.last); elapsed > 0 {
		b.tokens = min(l.burst, b.tokens+elapsed.Seconds()*l.rate)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
}

// prune drops the buckets that have refilled completely: they are the same
// as no bucket at all.
func (l *limiter) prune(now time.Time) {
	l.lastPrune = now
	for k, b := range l.buckets {
		if b.tokens+now.Sub(b.last).Seconds()*l.rate >= l.burst {
			delete(l.buckets, k)
		}
	}
}

func (l *limiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// retryAfterSeconds is the whole seconds to announce for a wait: truncated,
// plus one, so never 0 and never early.
func retryAfterSeconds(wait time.Duration) uint32 {
	s := int64(wait / time.Second)
	if s >= 1<<32-2 {
		return 1<<32 - 1
	}
	return uint32(s) + 1
}

// rateLimit spends a token of the request's client: the API key
// (authKey, when authentication is on) or the client address.
func (s *Server) rateLimit(r *http.Request, authKey string) error {
	if s.limiter == nil {
		return nil
	}
	key := authKey
	if key == "" {
		key = "ip:" + s.clientAddr(r).String()
	}
	ok, wait := s.limiter.allow(key)
	if ok {
		return nil
	}
	return &memory.Error{Code: memory.CodeRateLimited, Message: "rate limit exceeded", RetryAfter: retryAfterSeconds(wait)}
}

// clientAddr identifies the client of r: the TCP peer, unless the peer is
// a trusted proxy, in which case the rightmost X-Forwarded-For entry that is
// an IP address outside the trusted networks, else X-Real-IP, else the
// peer.
func (s *Server) clientAddr(r *http.Request) netip.Addr {
	peer, ok := parsePeer(r.RemoteAddr)
	if !ok {
		return netip.IPv4Unspecified()
	}
	if !s.isTrusted(peer) {
		return peer
	}
	var entries []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		entries = append(entries, strings.Split(v, ",")...)
	}
	for i := len(entries) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(entries[i]))
		if err != nil {
			continue
		}
		a = a.Unmap().WithZone("")
		if s.isTrusted(a) {
			continue
		}
		return a
	}
	if a, err := netip.ParseAddr(strings.TrimSpace(r.Header.Get("X-Real-IP"))); err == nil {
		return a.Unmap().WithZone("")
	}
	return peer
}

func parsePeer(remote string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(remote); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	if a, err := netip.ParseAddr(remote); err == nil {
		return a.Unmap().WithZone(""), true
	}
	return netip.Addr{}, false
}

func (s *Server) isTrusted(a netip.Addr) bool {
	for _, p := range s.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
