// Package access holds what the HTTP and gRPC transports both use to admit
// a call: the ring of API keys, the per-client rate limiter and the order
// in which the two admit a call (Limiter.Admit). Keeping one copy makes the
// two transports authenticate and limit exactly alike.
package access

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"

	"memsvc.dev/memsvc/pkg/memory"
)

// Keyring holds the SHA-256 digests of the API keys, never the keys:
// every comparison is between two 32-byte digests, so neither its time nor
// an early exit tells a caller how long a key is or which key came close.
type Keyring struct {
	digests [][sha256.Size]byte
}

// NewKeyring refuses an empty list and blank keys (numbered from 1 in the
// error, as a configuration file lists them).
func NewKeyring(keys []string) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, errors.New("authentication enabled without API keys")
	}
	k := &Keyring{}
	for i, key := range keys {
		if strings.TrimSpace(key) == "" {
			return nil, fmt.Errorf("API key %d is blank", i+1)
		}
		k.digests = append(k.digests, sha256.Sum256([]byte(key)))
	}
	return k, nil
}

// Match compares token with every key in constant time, without an early
// exit. It returns the token's digest, which callers use to tell clients
// apart without holding the key.
func (k *Keyring) Match(token string) ([sha256.Size]byte, bool) {
	d := sha256.Sum256([]byte(token))
	found := 0
	for i := range k.digests {
		found |= subtle.ConstantTimeCompare(d[:], k.digests[i][:])
	}
	return d, found == 1
}

// MsgInvalidKey is the message of a credential that names no configured
// key.
const MsgInvalidKey = "invalid API key"

// Authenticate checks credential, the "Bearer <key>" a transport received,
// and returns the caller's rate limiting key (ClientKey). A nil Keyring
// (authentication off) admits every caller with "". The scheme name is
// matched in any case ("bearer", "BEARER"), as HTTP auth schemes are
// case-insensitive; one space separates it from the key. A credential that
// is absent or not of the Bearer scheme is UNAUTHORIZED with the message
// missing, which tells the caller what to send on that transport; one that
// names no key is UNAUTHORIZED with MsgInvalidKey.
func (k *Keyring) Authenticate(credential, missing string) (string, error) {
	if k == nil {
		return "", nil
	}
	const scheme = "Bearer "
	if len(credential) < len(scheme) || !strings.EqualFold(credential[:len(scheme)], scheme) {
		return "", memory.Errorf(memory.CodeUnauthorized, "%s", missing)
	}
	token := credential[len(scheme):]
	d, ok := k.Match(token)
	if !ok {
		return "", memory.Errorf(memory.CodeUnauthorized, MsgInvalidKey)
	}
	return ClientKey(d), nil
}

// ClientKey is the rate limiting key of a caller authenticated with the
// key of digest d.
func ClientKey(d [sha256.Size]byte) string { return "key:" + string(d[:]) }
