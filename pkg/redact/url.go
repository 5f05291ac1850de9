package redact

import "strings"

// maxScheme bounds the URL scheme scanned back from "://".
const maxScheme = 32

// redactURLCredentials replaces the password of scheme://user:password@host
// URLs and connection strings (postgres://, mysql://, mongodb+srv://,
// redis://:password@, amqp://, https://user:token@ git remotes ...). The
// scheme, user name and host stay: they are what makes a log line useful.
//
// The authority ends at the first '/', '?', '#', white space, quote, '<', '>',
// backslash or '['; the password runs from the first ':' of the user info to
// the last '@' of the authority, so an unescaped '@' inside a password is
// covered. Ending at '[' (where an IPv6 host starts) also ends it at any
// marker, so that a URL never reaches across text another rule redacted.
// Placeholders (${DB_PASSWORD}, $PGPASSWORD, <password>) are left alone.
func redactURLCredentials(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	e := editor{src: s}
	for i := 0; ; {
		k := strings.Index(s[i:], "://")
		if k < 0 {
			break
		}
		p := i + k
		authStart := p + 3
		i = authStart
		a := p
		for a > 0 && p-a < maxScheme && isSchemeChar(s[a-1]) {
			a--
		}
		if a == p || !isLetter(s[a]) {
			continue
		}
		at := -1
		end := authStart
		for ; end < len(s) && !isAuthorityEnd(s[end]); end++ {
			if s[end] == '@' {
				at = end
			}
		}
		if at < 0 {
			continue
		}
		c := strings.IndexByte(s[authStart:at], ':')
		if c < 0 {
			continue
		}
		pw := authStart + c + 1
		if isPlaceholder(s[pw:at]) {
			continue
		}
		e.replace(pw, at, Marker)
		i = at
	}
	return e.String()
}

func isSchemeChar(c byte) bool { return isAlnum(c) || c == '+' || c == '-' || c == '.' }

func isAuthorityEnd(c byte) bool {
	switch c {
	case '/', '?', '#', '"', '\'', '`', '<', '>', '\\', '[':
		return true
	}
	return isSpace(c)
}
