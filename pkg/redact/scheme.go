package redact

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"
)

const (
	// minBearer is the shortest bearer credential.
	minBearer = 8
	// minBasicOpaque is the shortest Basic credential accepted without
	// decoding to user:password.
	minBasicOpaque = 16
)

// redactAuthSchemes replaces the credential after the HTTP auth scheme words
// Bearer and Basic wherever they appear (curl -H arguments, logged request
// headers, code), keeping the scheme word and the white space:
// "Bearer eyJhbGciOi..." becomes "Bearer [REDACTED]".
//
// The credential must look like one, so prose survives: after Bearer a
// credential-like token68 of at least 8 bytes ("bearer of bad news", "Bearer
// authentication" stay); after Basic a base64 run that decodes to printable
// "user:password", or an opaque run of at least 16 bytes with digits or
// symbols ("Basic understanding of Go", "basic authentication" stay).
func redactAuthSchemes(s string) string {
	e := editor{src: s}
	for i := 0; i < len(s); i++ {
		if s[i]|0x20 != 'b' || (i > 0 && isWordByte(s[i-1])) {
			continue
		}
		var basic bool
		switch {
		case hasFoldPrefix(s[i:], "bearer"):
		case hasFoldPrefix(s[i:], "basic"):
			basic = true
		default:
			continue
		}
		j := i + len("bearer")
		if basic {
			j = i + len("basic")
		}
		if j >= len(s) || !isBlank(s[j]) {
			continue
		}
		for j < len(s) && isBlank(s[j]) {
			j++
		}
		k := j
		for k < len(s) && isToken68(s[k]) {
			k++
		}
		for k < len(s) && s[k] == '=' {
			k++
		}
		cred := s[j:k]
		if k < len(s) && s[k] == '"' && strings.HasSuffix(cred, "=") {
			// An auth-param of a challenge: Bearer realm="api".
			i = j - 1
			continue
		}
		if basic {
			if !basicCredential(cred) {
				i = j - 1
				continue
			}
		} else {
			cred = strings.TrimRight(cred, ".-_~")
			if !credentialLike(cred, minBearer) {
				i = j - 1
				continue
			}
		}
		e.replace(j, j+len(cred), Marker)
		i = j + len(cred) - 1
	}
	return e.String()
}

// isToken68 is the RFC 7235 token68 alphabet (without the trailing '=').
func isToken68(c byte) bool {
	return isAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/'
}

// basicCredential reports whether v is the credential of HTTP Basic auth:
// base64 (padded or not) of printable text containing ':', or an opaque
// base64 run of at least 16 bytes with a digit or a '+', '/' or '='.
func basicCredential(v string) bool {
	if len(v) < 8 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !isAlnum(c) && c != '+' && c != '/' && c != '=' {
			return false
		}
	}
	if dec, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(v, "=")); err == nil && userPass(dec) {
		return true
	}
	return len(v) >= minBasicOpaque && strings.ContainsAny(v, "0123456789+/=")
}

// userPass reports whether b is printable UTF-8 text with a ':' after a
// non-empty user name.
func userPass(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	colon := false
	for i, r := range string(b) {
		if r < ' ' || r == 0x7f || r == utf8.RuneError {
			return false
		}
		if r == ':' && i > 0 {
			colon = true
		}
	}
	return colon
}
