package httpapi

import (
	"net/http"
)

// msgMissingAuth says what to send when a request has no usable
// Authorization header.
const msgMissingAuth = `missing or malformed Authorization header; send "Authorization: Bearer <api key>"`

// authenticate checks the Bearer token of r when authentication is on. It
// returns the rate limiting key of an authenticated request ("" when
// authentication is off).
func (s *Server) authenticate(r *http.Request) (string, error) {
	return s.keys.Authenticate(r.Header.Get("Authorization"), msgMissingAuth)
}
