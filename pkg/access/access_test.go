package access

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"net/netip"
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

func TestAddressKey(t *testing.T) {
	v4 := AddressKey(netip.MustParseAddr("192.0.2.1"))
	if got := AddressKey(netip.MustParseAddr("::ffff:192.0.2.1")); got != v4 {
		t.Errorf("an IPv4-mapped address has key %q, want %q as for 192.0.2.1", got, v4)
	}
	v6 := AddressKey(netip.MustParseAddr("fe80::1"))
	if got := AddressKey(netip.MustParseAddr("fe80::1%eth0")); got != v6 {
		t.Errorf("a zone changes the key: %q, want %q", got, v6)
	}
	if v4 == v6 || v4 == AddressKey(netip.MustParseAddr("192.0.2.2")) {
		t.Error("different addresses share a key")
	}
	// IPv6 counts by /64.
	host := AddressKey(netip.MustParseAddr("2001:db8:1:2:aaaa::1"))
	if got := AddressKey(netip.MustParseAddr("2001:db8:1:2:ffff:ffff:ffff:ffff")); got != host {
		t.Errorf("two addresses of one /64 have keys %q and %q", host, got)
	}
	if got := AddressKey(netip.MustParseAddr("2001:db8:1:3::1")); got == host {
		t.Errorf("the next /64 shares the key %q", got)
	}
}

// TestAdmit walks the admission order: failures spend from the address
// bucket and are limited once it is empty, authenticated calls spend from
// their key's bucket whatever their address's state.
func TestAdmit(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	l := NewLimiter(RateLimit{RequestsPerSecond: 1, Burst: 3}, clock.Now)
	denied := memory.Errorf(memory.CodeUnauthorized, "invalid API key")
	good := ClientKey(sha256.Sum256([]byte("good")))
	guesser, neighbour := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2")

	type outcome int
	const (
		admitted outcome = iota
		unauthorized
		limited
	)
	steps := []struct {
		name    string
		advance time.Duration
		addr    netip.Addr
		key     string // the caller's key; "" fails authentication
		want    outcome
	}{
		{"failure 1", 0, guesser, "", unauthorized},
		{"failure 2", 0, guesser, "", unauthorized},
		{"failure 3 empties the address bucket", 0, guesser, "", unauthorized},
		{"the next failure is limited", 0, guesser, "", limited},
		{"a valid key from that address is served", 0, guesser, good, admitted},
		{"other addresses are not held back", 0, neighbour, "", unauthorized},
		{"the valid key from elsewhere spends the same key bucket", 0, neighbour, good, admitted},
		{"the key's last token", 0, guesser, good, admitted},
		{"the key bucket is now empty", 0, neighbour, good, limited},
		{"one token back in every bucket", time.Second, guesser, "", unauthorized},
		{"and the address is limited again", 0, guesser, "", limited},
		{"the key has its token back too", 0, guesser, good, admitted},
	}
	for i, s := range steps {
		clock.Advance(s.advance)
		asked := 0
		err := l.Admit(func() Caller { asked++; return Caller{Addr: s.addr} }, func() (string, error) {
			if s.key == "" {
				return "", denied
			}
			return s.key, nil
		})
		got := admitted
		switch {
		case err == denied:
			got = unauthorized
		case memory.CodeOf(err) == memory.CodeRateLimited:
			got = limited
			if err.(*memory.Error).RetryAfter == 0 {
				t.Errorf("step %d (%s): no retry time", i, s.name)
			}
		case err != nil:
			t.Fatalf("step %d (%s): unexpected error %v", i, s.name, err)
		}
		if got != s.want {
			t.Fatalf("step %d (%s): outcome %d, want %d", i, s.name, got, s.want)
		}
		// The address is worked out only when it is the key.
		if wantAsked := map[bool]int{true: 0, false: 1}[s.key != ""]; asked != wantAsked {
			t.Fatalf("step %d (%s): address asked %d times, want %d", i, s.name, asked, wantAsked)
		}
	}
}

// TestAdmitWithoutAuthentication: with authentication off every call
// spends from its address's bucket, and a nil Limiter only authenticates.
func TestAdmitWithoutAuthentication(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	l := NewLimiter(RateLimit{RequestsPerSecond: 1, Burst: 2}, clock.Now)
	open := func() (string, error) { return "", nil }
	addr := netip.MustParseAddr("2001:db8::7")
	for i, wantLimited := range []bool{false, false, true} {
		err := l.Admit(at(addr), open)
		if limited := err != nil && memory.CodeOf(err) == memory.CodeRateLimited; limited != wantLimited || err != nil && !limited {
			t.Fatalf("call %d: %v, want limited=%v", i, err, wantLimited)
		}
	}
	if ok, _ := l.Allow(AddressKey(addr)); ok {
		t.Error("the calls did not spend from the address's bucket")
	}

	var none *Limiter
	denied := memory.Errorf(memory.CodeUnauthorized, "no")
	for range 5 {
		if err := none.Admit(at(addr), func() (string, error) { return "", denied }); err != denied {
			t.Fatalf("nil limiter: %v, want the authentication error", err)
		}
	}
	if err := none.Admit(at(addr), open); err != nil {
		t.Fatalf("nil limiter: %v", err)
	}
}

// TestIdentifyCredential: a nil ring admits everyone with no key;
// otherwise only "Bearer <a configured key>" is admitted, with that key's
// client key, and the two failures carry the caller's hint and
// MsgInvalidKey.
func TestIdentifyCredential(t *testing.T) {
	var off *Keyring
	if id, err := off.Identify("", "unused"); id.ClientKey != "" || err != nil {
		t.Fatalf("auth off: %q, %v", id.ClientKey, err)
	}
	ring, err := NewKeyring([]string{"first-key", "second-key"})
	if err != nil {
		t.Fatal(err)
	}
	const hint = "send Bearer <key>"
	for _, tc := range []struct {
		credential, message string
	}{
		{"", hint},
		{"Basic Zmlyc3Q6a2V5", hint},
		{"Bearer", hint},
		{"Bearer\tfirst-key", hint},
		{"Bearer nope", MsgInvalidKey},
		{"Bearer first", MsgInvalidKey},
		{"Bearer  first-key", MsgInvalidKey},
	} {
		id, err := ring.Identify(tc.credential, hint)
		var me *memory.Error
		if id.ClientKey != "" || !errors.As(err, &me) || me.Code != memory.CodeUnauthorized || me.Message != tc.message {
			t.Errorf("%q: %q, %v; want UNAUTHORIZED %q", tc.credential, id.ClientKey, err, tc.message)
		}
	}
	for _, scheme := range []string{"Bearer", "bearer", "BEARER", "bEARER"} {
		id, err := ring.Identify(scheme+" second-key", hint)
		if err != nil || id.ClientKey != ClientKey(sha256.Sum256([]byte("second-key"))) || !id.Scope.All() {
			t.Fatalf("valid key with scheme %q: %+v, %v", scheme, id, err)
		}
	}
}

// at is the address function of a caller at a.
func at(a netip.Addr) func() Caller { return func() Caller { return Caller{Addr: a} } }

// TestAdmitLoopback: with authentication off, local calls are not limited
// unless LimitLoopback says so; a loopback address that is not local (a
// local proxy's clients) and failed authentication from a local caller
// are limited as before; with authentication on, a valid key spends its
// own bucket wherever it calls from.
func TestAdmitLoopback(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	lo := netip.MustParseAddr("127.0.0.1")
	local := func() Caller { return Caller{Addr: lo, Local: true} }
	proxied := func() Caller { return Caller{Addr: lo} }
	open := func() (string, error) { return "", nil }
	limited := func(err error) bool { return memory.CodeOf(err) == memory.CodeRateLimited && err != nil }

	free := NewLimiter(RateLimit{RequestsPerSecond: 1, Burst: 2}, clock.Now)
	for i := range 100 {
		if err := free.Admit(local, open); err != nil {
			t.Fatalf("local call %d: %v", i, err)
		}
	}
	if free.Size() != 0 {
		t.Errorf("local calls made %d buckets", free.Size())
	}
	for i, want := range []bool{false, false, true} {
		if err := free.Admit(proxied, open); limited(err) != want {
			t.Fatalf("proxied call %d: %v, want limited=%v", i, err, want)
		}
	}
	denied := memory.Errorf(memory.CodeUnauthorized, "invalid API key")
	strict := NewLimiter(RateLimit{RequestsPerSecond: 1, Burst: 2}, clock.Now)
	for i, want := range []bool{false, false, true} {
		if err := strict.Admit(local, func() (string, error) { return "", denied }); limited(err) != want {
			t.Fatalf("local failure %d: %v, want limited=%v", i, err, want)
		}
	}
	key := ClientKey(sha256.Sum256([]byte("k")))
	for i, want := range []bool{false, false, true} {
		if err := strict.Admit(local, func() (string, error) { return key, nil }); limited(err) != want {
			t.Fatalf("local call with a key %d: %v, want limited=%v", i, err, want)
		}
	}
	limit := NewLimiter(RateLimit{RequestsPerSecond: 1, Burst: 2, LimitLoopback: true}, clock.Now)
	for i, want := range []bool{false, false, true} {
		if err := limit.Admit(local, open); limited(err) != want {
			t.Fatalf("LimitLoopback, local call %d: %v, want limited=%v", i, err, want)
		}
	}
}

// TestGateSetPolicy: a new policy applies to the next call: keys that
// were removed are refused and new ones accepted, and a new rate applies
// to buckets that already exist (they keep their tokens, never above the
// new burst).
func TestGateSetPolicy(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	ring := func(keys ...string) *Keyring {
		k, err := NewKeyring(keys)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	addr := at(netip.MustParseAddr("192.0.2.1"))
	admit := func(g *Gate, key string) error {
		_, err := g.Admit(addr, "Bearer "+key, "send a key")
		return err
	}
	code := func(err error) memory.Code {
		if err == nil {
			return ""
		}
		return memory.CodeOf(err)
	}

	g := NewGate(Policy{Keys: ring("old-key"), Rate: RateLimit{RequestsPerSecond: 1, Burst: 5}}, clock.Now)
	if err := admit(g, "old-key"); err != nil {
		t.Fatalf("old key before the swap: %v", err)
	}
	if got := code(admit(g, "new-key")); got != memory.CodeUnauthorized {
		t.Fatalf("new key before the swap: %v", got)
	}
	g.SetPolicy(Policy{Keys: ring("new-key"), Rate: RateLimit{RequestsPerSecond: 1, Burst: 2}})
	if got := code(admit(g, "old-key")); got != memory.CodeUnauthorized {
		t.Fatalf("old key after the swap: %v, want UNAUTHORIZED", got)
	}
	for i, want := range []memory.Code{"", "", memory.CodeRateLimited} {
		if got := code(admit(g, "new-key")); got != want {
			t.Fatalf("new key, call %d after the swap: %q, want %q (burst 2)", i, got, want)
		}
	}
	if p := g.Policy(); p.Rate.Burst != 2 {
		t.Fatalf("Policy() = %+v after the swap", p)
	}

	// The old key's bucket had 4 tokens left; under a burst of 1 it holds
	// at most 1.
	g.SetPolicy(Policy{Keys: ring("old-key"), Rate: RateLimit{RequestsPerSecond: 1, Burst: 1}})
	for i, want := range []memory.Code{"", memory.CodeRateLimited} {
		if got := code(admit(g, "old-key")); got != want {
			t.Fatalf("old key again, call %d under burst 1: %q, want %q", i, got, want)
		}
	}
	// A faster rate refills faster.
	g.SetPolicy(Policy{Keys: ring("old-key"), Rate: RateLimit{RequestsPerSecond: 10, Burst: 1}})
	clock.Advance(100 * time.Millisecond)
	if err := admit(g, "old-key"); err != nil {
		t.Fatalf("old key 100 ms later at 10/s: %v", err)
	}

	// Authentication off, no rate limit.
	g.SetPolicy(Policy{})
	for i := range 10 {
		id, err := g.Admit(addr, "", "send a key")
		if err != nil || id.ClientKey != "" || !id.Scope.All() {
			t.Fatalf("open call %d: %+v, %v; want no client key, every namespace", i, id, err)
		}
	}
}

// TestGateConcurrentSwap runs calls while the policy changes under them
// (for the race detector): every call is answered under one of the two
// policies.
func TestGateConcurrentSwap(t *testing.T) {
	a, err := NewKeyring([]string{"key-a"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewKeyring([]string{"key-b"})
	if err != nil {
		t.Fatal(err)
	}
	policies := []Policy{
		{Keys: a, Rate: RateLimit{RequestsPerSecond: 1e9, Burst: 1 << 30}},
		{Keys: b, Rate: RateLimit{RequestsPerSecond: 1e9, Burst: 1 << 30}},
	}
	g := NewGate(policies[0], nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 2000 {
			g.SetPolicy(policies[i%2])
		}
	}()
	addr := at(netip.MustParseAddr("192.0.2.9"))
	for i := range 2000 {
		_, err := g.Admit(addr, "Bearer key-a", "send a key")
		if err != nil && memory.CodeOf(err) != memory.CodeUnauthorized {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	<-done
}
