package access

import (
	"sync/atomic"
	"time"
)

// Policy is what admission decides by: the API keys and the rate limit.
// A Policy is a value that nobody changes once built; a Gate replaces it
// whole. Settings that will later bind keys to namespaces belong in the
// Keyring, so that they change with the keys, in the same swap.
type Policy struct {
	// Keys are the accepted API keys; nil turns authentication off.
	Keys *Keyring
	// Rate is the rate limit; RequestsPerSecond <= 0 turns it off.
	// Its MaxClients counts only when the Gate is made (NewGate).
	Rate RateLimit
}

// Gate admits the calls of both transports under the current Policy. A
// reload swaps the policy atomically (SetPolicy): each call reads the
// policy once, so it is admitted wholly under the old settings or wholly
// under the new ones, and calls admitted before the swap run to the end
// as they are. The clients' rate limiting buckets outlive a swap (see
// Limiter). A Gate is safe for concurrent use.
type Gate struct {
	policy  atomic.Pointer[Policy]
	buckets *Limiter
}

// NewGate returns a gate applying p, reading time from now (nil selects
// time.Now).
func NewGate(p Policy, now func() time.Time) *Gate {
	if now == nil {
		now = time.Now
	}
	g := &Gate{buckets: NewLimiter(p.Rate, now)}
	g.policy.Store(&p)
	return g
}

// Policy returns the policy in force.
func (g *Gate) Policy() Policy { return *g.policy.Load() }

// SetPolicy replaces the policy in force with p for every call admitted
// from now on.
func (g *Gate) SetPolicy(p Policy) { g.policy.Store(&p) }

// Admit authenticates credential (the "Bearer <key>" the transport
// received; missing is the hint of Keyring.Authenticate) and rate limits
// the call, in the order and with the rules of Limiter.Admit, under one
// policy.
func (g *Gate) Admit(caller func() Caller, credential, missing string) error {
	p := g.policy.Load()
	authenticate := func() (string, error) { return p.Keys.Authenticate(credential, missing) }
	if p.Rate.RequestsPerSecond <= 0 {
		_, err := authenticate()
		return err
	}
	return g.buckets.admit(p.Rate, caller, authenticate)
}

// Clients is the number of client buckets kept.
func (g *Gate) Clients() int { return g.buckets.Size() }

// Allow takes a token from key's bucket at the rate in force, as a call
// admitted under key would; see Limiter.Allow.
func (g *Gate) Allow(key string) (bool, time.Duration) {
	return g.buckets.allow(key, g.policy.Load().Rate)
}
