package access

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time          { return c.now }
func (c *fakeClock) Advance(d time.Duration) { c.now = c.now.Add(d) }

func TestKeyring(t *testing.T) {
	if _, err := NewKeyring(nil); err == nil {
		t.Error("no keys: want an error")
	}
	if _, err := NewKeyring([]string{"ok", " "}); err == nil || !strings.Contains(err.Error(), "API key 2 is blank") {
		t.Errorf("blank key: %v", err)
	}
	k, err := NewKeyring([]string{"alpha", "a-much-longer-second-key-0123456789", "ü-ключ"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		token string
		ok    bool
	}{
		{"alpha", true},
		{"a-much-longer-second-key-0123456789", true},
		{"ü-ключ", true},
		{"", false},
		{"alph", false},
		{"alphaa", false},
		{"Alpha", false},
		{"a-much-longer-second-key-012345678", false},
		{strings.Repeat("x", 10000), false},
	} {
		d, ok := k.Match(tc.token)
		if ok != tc.ok {
			t.Errorf("match(%q) = %v, want %v", tc.token, ok, tc.ok)
		}
		if d != sha256.Sum256([]byte(tc.token)) {
			t.Errorf("match(%q) digest is not the token's", tc.token)
		}
	}
	// The raw keys are not kept.
	if s := fmt.Sprintf("%+v", *k); strings.Contains(s, "alpha") {
		t.Errorf("keyring holds a raw key: %s", s)
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	for _, tc := range []struct {
		wait time.Duration
		want uint32
	}{
		{0, 1},
		{time.Nanosecond, 1},
		{999 * time.Millisecond, 1},
		{time.Second, 2},
		{1500 * time.Millisecond, 2},
		{59 * time.Second, 60},
		{1 << 62, 1<<32 - 1},
	} {
		if got := RetryAfterSeconds(tc.wait); got != tc.want {
			t.Errorf("RetryAfterSeconds(%v) = %d, want %d", tc.wait, got, tc.want)
		}
	}
}

func TestLimiter(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	l := NewLimiter(RateLimit{RequestsPerSecond: 2, Burst: 3}, clock.Now)
	type step struct {
		advance time.Duration
		key     string
		ok      bool
		wait    time.Duration
	}
	steps := []step{
		{0, "a", true, 0},
		{0, "a", true, 0},
		{0, "a", true, 0},
		{0, "a", false, 500 * time.Millisecond},
		{0, "b", true, 0}, // another client has its own bucket
		{250 * time.Millisecond, "a", false, 250 * time.Millisecond},
		{250 * time.Millisecond, "a", true, 0},
		{0, "a", false, 500 * time.Millisecond},
		{time.Hour, "a", true, 0}, // refilled, but only to the burst
		{0, "a", true, 0},
		{0, "a", true, 0},
		{0, "a", false, 500 * time.Millisecond},
		{-time.Hour, "a", false, 500 * time.Millisecond}, // a clock going back refills nothing
	}
	for i, s := range steps {
		clock.Advance(s.advance)
		ok, wait := l.Allow(s.key)
		if ok != s.ok || wait != s.wait {
			t.Fatalf("step %d (%s): allow = %v, %v; want %v, %v", i, s.key, ok, wait, s.ok, s.wait)
		}
	}
}

func TestLimiterBoundedMemory(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	l := NewLimiter(RateLimit{RequestsPerSecond: 1, Burst: 2, MaxClients: 10}, clock.Now)
	for i := range 100 {
		l.Allow(fmt.Sprint("client-", i))
		if n := l.Size(); n > 10 {
			t.Fatalf("after %d clients: %d buckets, want at most 10", i+1, n)
		}
	}
	// Idle buckets go at the next prune.
	clock.Advance(pruneEvery)
	l.Allow("fresh")
	if n := l.Size(); n != 1 {
		t.Errorf("after a minute idle: %d buckets, want 1", n)
	}
	// A bucket still refilling is kept.
	l.Allow("busy")
	l.Allow("busy")
	clock.Advance(pruneEvery)
	l.Allow("other")
	if ok, _ := l.Allow("busy"); !ok {
		t.Error("busy client refused after a minute")
	}
}

func TestRateLimited(t *testing.T) {
	err := RateLimited(1500 * time.Millisecond)
	if err.Code != memory.CodeRateLimited || err.RetryAfter != 2 {
		t.Fatalf("RateLimited = %+v", err)
	}
}
