package httpapi

import (
	"net/http"
	"strings"

	"memsvc.dev/memsvc/pkg/access"
	"memsvc.dev/memsvc/pkg/memory"
)

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
	d, ok := s.keys.Match(token)
	if !ok {
		return "", memory.Errorf(memory.CodeUnauthorized, msgInvalidKey)
	}
	return access.ClientKey(d), nil
}
