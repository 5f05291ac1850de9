package access

import (
	"sync/atomic"
	"time"
)

// Policy is what admission decides by: the API keys, with the namespaces
// each may use, and the rate limit. A Policy is a value that nobody
// changes once built; a Gate replaces it whole. The namespaces bound to a
// key live in the Keyring, so they change with the keys, in the same swap.
type Policy struct {
	// Keys are the accepted API keys and their namespaces; nil turns
	// authentication off (every caller may use every namespace).
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
// received; missing is the hint of Keyring.Identify) and rate limits the
// call, in the order and with the rules of Limiter.Admit, under one
// policy. It returns who the caller is: its rate limiting key and the
// namespaces its key may use, both from the policy that admitted it.
func (g *Gate) Admit(caller func() Caller, credential, missing string) (Identity, error) {
	p := g.policy.Load()
	var id Identity
	authenticate := func() (string, error) {
		var err error
		id, err = p.Keys.Identify(credential, missing)
		return id.ClientKey, err
	}
	var err error
	if p.Rate.RequestsPerSecond <= 0 {
		_, err = authenticate()
	} else {
		err = g.buckets.admit(p.Rate, caller, authenticate)
	}
	if err != nil {
		return Identity{}, err
	}
	return id, nil
}

// Clients is the number of client buckets kept.
func (g *Gate) Clients() int { return g.buckets.Size() }

// Allow takes a token from key's bucket at the rate in force, as a call
// admitted under key would; see Limiter.Allow.
func (g *Gate) Allow(key string) (bool, time.Duration) {
	return g.buckets.allow(key, g.policy.Load().Rate)
}
