package httpapi

import (
	"net/http"

	"memsvc.dev/memsvc/pkg/access"
)

// msgMissingAuth says what to send when a request has no usable
// Authorization header.
const msgMissingAuth = `missing or malformed Authorization header; send "Authorization: Bearer <api key>"`

// identify checks the Bearer token of r when authentication is on. It
// returns who the caller is: the rate limiting key of an authenticated
// request ("" when authentication is off) and the namespaces it may use.
func (s *Server) identify(r *http.Request) (access.Identity, error) {
	return s.keys.Identify(r.Header.Get("Authorization"), msgMissingAuth)
}
