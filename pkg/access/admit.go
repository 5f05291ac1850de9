package access

import "net/netip"

// AddressKey is the rate limiting key of a client known by its network
// address: every caller when authentication is off, and callers whose
// authentication failed. IPv4-mapped IPv6 addresses and zones are
// normalised away, so both transports name one client the same way and a
// shared Limiter gives it one bucket across them.
func AddressKey(a netip.Addr) string { return "ip:" + a.Unmap().WithZone("").String() }

// Admit decides whether a call from addr may proceed. authenticate checks
// the call's credentials and returns the caller's rate limiting key
// (ClientKey), or "" when authentication is off. Both transports admit
// calls through it, so they do so in the same order:
//
//  1. If addr's bucket is empty the call is refused as RATE_LIMITED before
//     its credentials are looked at.
//  2. A call whose authentication fails spends a token of addr's bucket
//     and gets the authentication error. Failures are therefore limited
//     like any other request: a client that keeps guessing keys gets 429
//     (RESOURCE_EXHAUSTED) instead of another verdict on its next guess.
//  3. An authenticated call spends a token of its key's bucket; with
//     authentication off, of addr's bucket.
//
// Step 1 also refuses a valid key from an address that is out of tokens
// because of failures. That is deliberate: if a valid key were served
// while wrong ones got 429, the 429 would itself say "wrong key" and
// guessing would stay as fast as the network allows. A valid key's own
// requests never spend from the address bucket, so a client that
// authenticates correctly is only held back by failures from its own
// address (another tenant behind the same NAT, or every client behind a
// reverse proxy whose network is not trusted). Anonymous traffic from
// other addresses still cannot touch a key's bucket.
//
// A nil Limiter only authenticates.
func (l *Limiter) Admit(addr netip.Addr, authenticate func() (clientKey string, err error)) error {
	if l == nil {
		_, err := authenticate()
		return err
	}
	addrKey := AddressKey(addr)
	if ok, wait := l.available(addrKey); !ok {
		return RateLimited(wait)
	}
	key, authErr := authenticate()
	if authErr != nil || key == "" {
		key = addrKey
	}
	if ok, wait := l.Allow(key); !ok {
		return RateLimited(wait)
	}
	return authErr
}
