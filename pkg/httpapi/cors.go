package httpapi

import (
	"net/http"
	"strings"
)

// corsPolicy answers pre-flights and decorates responses for browser
// callers.
type corsPolicy struct {
	anyOrigin bool
	origins   map[string]bool
}

// newCORSPolicy returns nil (no CORS headers at all) for an empty list.
func newCORSPolicy(origins []string) *corsPolicy {
	if len(origins) == 0 {
		return nil
	}
	c := &corsPolicy{origins: map[string]bool{}}
	for _, o := range origins {
		o = strings.TrimSpace(o)
		if o == "*" {
			c.anyOrigin = true
		} else if o != "" {
			c.origins[o] = true
		}
	}
	return c
}

const (
	corsAllowMethods  = "GET, HEAD, POST, PUT, PATCH, DELETE"
	corsExposeHeaders = "x-request-id, retry-after"
)

func (c *corsPolicy) allows(origin string) bool {
	if origin == "" {
		return false
	}
	return c.origins[origin] || c.anyOrigin && origin != "null"
}

// handle adds the CORS headers of r to w and answers a pre-flight. It
// reports whether the request has been answered.
func (c *corsPolicy) handle(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	h := w.Header()
	h.Add("Vary", "Origin")
	preflight := r.Method == http.MethodOptions && origin != "" && r.Header.Get("Access-Control-Request-Method") != ""
	allowed := c.allows(origin)
	if allowed {
		h.Set("Access-Control-Allow-Origin", origin)
		if c.anyOrigin {
			h.Set("Access-Control-Allow-Credentials", "true")
		}
	}
	if !preflight {
		if allowed {
			h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
		}
		return false
	}
	h.Add("Vary", "Access-Control-Request-Method")
	h.Add("Vary", "Access-Control-Request-Headers")
	if allowed {
		h.Set("Access-Control-Allow-Methods", corsAllowMethods)
		if req := r.Header.Values("Access-Control-Request-Headers"); len(req) > 0 {
			h.Set("Access-Control-Allow-Headers", strings.Join(req, ", "))
		}
	}
	h.Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
	return true
}
