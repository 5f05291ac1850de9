package access

import "net/netip"

// AddressKey is the rate limiting key of a client known by its network
// address: every caller when authentication is off, and callers whose
// authentication failed. IPv4-mapped IPv6 addresses and zones are
// normalised away, so both transports name one client the same way and a
// shared Limiter gives it one bucket across them. An IPv6 address counts
// by its /64: one host usually holds a whole /64, and a bucket per address
// would give it 2^64 of them.
func AddressKey(a netip.Addr) string {
	a = a.Unmap().WithZone("")
	if a.Is6() {
		return "ip:" + netip.PrefixFrom(a, 64).Masked().String()
	}
	return "ip:" + a.String()
}

// Caller is what a transport knows about the origin of a call.
type Caller struct {
	// Addr is the client's address: the TCP peer, or the client a
	// trusted proxy names.
	Addr netip.Addr
	// Local reports a call straight from this host: a loopback peer that
	// forwards no one else's call (an untrusted local proxy passing on
	// calls from elsewhere is not local).
	Local bool
}

// Admit decides whether a call may proceed. caller is asked only when the
// address matters (authentication off or failed): working it out can mean
// parsing forwarded headers. authenticate checks the call's credentials
// and returns the caller's rate limiting key (ClientKey), or "" when
// authentication is off. Both transports admit calls through it, so they
// do so in the same order:
//
//  1. An authenticated call spends a token of its key's bucket. With
//     authentication off, a local call (Caller.Local) is not limited
//     unless RateLimit.LimitLoopback says so: it comes from the agents and
//     tools of the server's own host, which would otherwise all share the
//     one bucket of 127.0.0.1. Any other call spends a token of its
//     address's bucket.
//  2. A call whose authentication fails spends a token of its address's
//     bucket, local or not. While the bucket has tokens it gets the
//     authentication error; once it is empty, RATE_LIMITED. A client that
//     keeps sending bad keys is slowed down like any anonymous client.
//
// A valid key is never held back by failures from its address. Many
// clients may share one address (a NAT, a reverse proxy whose network is
// not trusted, any gRPC proxy), and one client sending bad keys must not
// lock the others out. The limit on failures therefore bounds the load and
// the log volume of bad requests, not key guessing: a wrong key answered
// 429 and the right one answered 200 can still be told apart. What makes
// guessing hopeless is the key itself; the server warns at start about
// keys shorter than MinKeyLength.
//
// A nil Limiter only authenticates.
func (l *Limiter) Admit(caller func() Caller, authenticate func() (clientKey string, err error)) error {
	if l == nil {
		_, err := authenticate()
		return err
	}
	return l.admit(l.cfg, caller, authenticate)
}

// admit is Admit at the rate of cfg.
func (l *Limiter) admit(cfg RateLimit, caller func() Caller, authenticate func() (clientKey string, err error)) error {
	key, authErr := authenticate()
	if authErr != nil || key == "" {
		c := caller()
		if authErr == nil && c.Local && !cfg.LimitLoopback {
			return nil
		}
		key = AddressKey(c.Addr)
	}
	if ok, wait := l.allow(key, cfg); !ok {
		return RateLimited(wait)
	}
	return authErr
}

// MinKeyLength is the shortest API key the server accepts without a
// warning: 16 random characters are beyond guessing at any request rate.
const MinKeyLength = 16
