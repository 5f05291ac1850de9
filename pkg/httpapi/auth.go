package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"memsvc.dev/memsvc/pkg/memory"
)

// keyring holds the SHA-256 digests of the API keys. Comparing digests
// makes every comparison the same length, so neither the time taken nor an
// early exit tells a caller how long a key is or which key came close; the
// raw keys are not kept.
type keyring struct {
	digests [][sha256.Size]byte
}

func newKeyring(keys []string) (*keyring, error) {
	if len(keys) == 0 {
		return nil, errors.New("httpapi: authentication enabled without API keys")
	}
	k := &keyring{}
	for i, key := range keys {
		if strings.TrimSpace(key) == "" {
			return nil, fmt.Errorf("httpapi: API key %d is blank", i+1)
		}
		k.digests = append(k.digests, sha256.Sum256([]byte(key)))
	}
	return k, nil
}

// match compares token with every key in constant time, without an early
// exit, and returns the token's digest.
func (k *keyring) match(token string) ([sha256.Size]byte, bool) {
	d := sha256.Sum256([]byte(token))
	found := 0
	for i := range k.digests {
		found |= subtle.ConstantTimeCompare(d[:], k.digests[i][:])
	}
	return d, found == 1
}

const bearerPrefix = "Bearer "

// Messages of the two authentication failures.
const (
	msgMissingAuth = `missing or malformed Authorization header; send "Authorization: Bearer <api key>"`
	msgInvalidKey  = "invalid API key"
)

// authenticate checks the Bearer token of r when authentication is on. It
// returns the rate limiting key of an authenticated request ("" when
// authentication is off).
func (s *Server) authenticate(r *http.Request) (string, error) {
	if s.keys == nil {
		return "", nil
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), bearerPrefix)
	if !ok {
		return "", memory.Errorf(memory.CodeUnauthorized, msgMissingAuth)
	}
	d, ok := s.keys.match(token)
	if !ok {
		return "", memory.Errorf(memory.CodeUnauthorized, msgInvalidKey)
	}
	return "key:" + string(d[:]), nil
}
