// Package access holds what the HTTP and gRPC transports both use to admit
// a call: the ring of API keys with the namespaces each key may use
// (Scope), the per-client rate limiter and the order in which the two
// admit a call (Limiter.Admit). Keeping one copy makes the two transports
// authenticate, confine and limit exactly alike.
package access

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"slices"
	"strings"

	"memsvc.dev/memsvc/pkg/memory"
)

// Keyring holds the SHA-256 digests of the API keys, never the keys, and
// what each key may do: the namespaces it may use. Every comparison is
// between two 32-byte digests, so neither its time nor an early exit tells
// a caller how long a key is or which key came close. Whatever is bound to
// a key lives in its entry here, so replacing the Keyring changes the keys
// and their bindings at once.
type Keyring struct {
	entries []entry
}

// entry is one key of a Keyring.
type entry struct {
	digest [sha256.Size]byte
	scope  Scope
}

// Key is an API key and the namespaces it may use.
type Key struct {
	Secret string
	Scope  Scope
}

// NewKeyring returns a keyring of keys that may use every namespace (the
// keys of auth.api_keys). It refuses an empty list and blank keys
// (numbered from 1 in the error, as a configuration file lists them).
func NewKeyring(keys []string) (*Keyring, error) {
	bound := make([]Key, len(keys))
	for i, key := range keys {
		bound[i] = Key{Secret: key, Scope: AllNamespaces()}
	}
	return NewScopedKeyring(bound)
}

// NewScopedKeyring returns a keyring of keys, each confined to its Scope.
// It refuses an empty list, blank keys, and a key listed twice with two
// different scopes (which one would apply is not a question to leave to
// chance); keys are numbered from 1 in errors, never shown.
func NewScopedKeyring(keys []Key) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, errors.New("authentication enabled without API keys")
	}
	k := &Keyring{entries: make([]entry, 0, len(keys))}
	for i, key := range keys {
		if strings.TrimSpace(key.Secret) == "" {
			return nil, fmt.Errorf("API key %d is blank", i+1)
		}
		d := sha256.Sum256([]byte(key.Secret))
		if j := slices.IndexFunc(k.entries, func(e entry) bool { return e.digest == d }); j >= 0 {
			if !k.entries[j].scope.Equal(key.Scope) {
				return nil, fmt.Errorf("API key %d repeats key %d with other namespaces; list each key once", i+1, j+1)
			}
		}
		k.entries = append(k.entries, entry{digest: d, scope: key.Scope})
	}
	return k, nil
}

// Match compares token with every key in constant time, without an early
// exit. It returns the token's digest, which callers use to tell clients
// apart without holding the key.
func (k *Keyring) Match(token string) ([sha256.Size]byte, bool) {
	d, i := k.match(token)
	return d, i >= 0
}

// match is Match that also returns the index of the matching entry, or
// -1; which entry matched does not change the time taken.
func (k *Keyring) match(token string) ([sha256.Size]byte, int) {
	d := sha256.Sum256([]byte(token))
	found := -1
	for i := range k.entries {
		eq := subtle.ConstantTimeCompare(d[:], k.entries[i].digest[:])
		found = subtle.ConstantTimeSelect(eq, i, found)
	}
	return d, found
}

// MsgInvalidKey is the message of a credential that names no configured
// key.
const MsgInvalidKey = "invalid API key"

// Identity is what admission learns about an authenticated caller.
type Identity struct {
	// ClientKey is the caller's rate limiting key (see ClientKey); ""
	// when authentication is off.
	ClientKey string
	// Scope holds the namespaces the caller may use: its key's, or all
	// when authentication is off.
	Scope Scope
}

// Identify checks credential, the "Bearer <key>" a transport received,
// and returns who the caller is. A nil Keyring (authentication off) admits
// every caller, with every namespace. The scheme name is matched in any
// case ("bearer", "BEARER"), as HTTP auth schemes are case-insensitive;
// one space separates it from the key. A credential that is absent or not
// of the Bearer scheme is UNAUTHORIZED with the message missing, which
// tells the caller what to send on that transport; one that names no key
// is UNAUTHORIZED with MsgInvalidKey.
func (k *Keyring) Identify(credential, missing string) (Identity, error) {
	if k == nil {
		return Identity{Scope: AllNamespaces()}, nil
	}
	const scheme = "Bearer "
	if len(credential) < len(scheme) || !strings.EqualFold(credential[:len(scheme)], scheme) {
		return Identity{}, memory.Errorf(memory.CodeUnauthorized, "%s", missing)
	}
	token := credential[len(scheme):]
	d, i := k.match(token)
	if i < 0 {
		return Identity{}, memory.Errorf(memory.CodeUnauthorized, MsgInvalidKey)
	}
	return Identity{ClientKey: ClientKey(d), Scope: k.entries[i].scope}, nil
}

// ClientKey is the rate limiting key of a caller authenticated with the
// key of digest d.
func ClientKey(d [sha256.Size]byte) string { return "key:" + string(d[:]) }
