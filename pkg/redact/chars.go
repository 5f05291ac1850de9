package redact

import "strings"

// Byte classes. Every rule works on ASCII structure only, so a span the
// package replaces always starts and ends next to an ASCII byte and a valid
// UTF-8 input stays valid.

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isLetter(c byte) bool {
	return isUpper(c) || isLower(c)
}
func isAlnum(c byte) bool { return isLetter(c) || isDigit(c) }

// isWordByte is the class of RE2's \w: a token shape or a scheme word must not
// be glued to one of these on its left.
func isWordByte(c byte) bool { return isAlnum(c) || c == '_' }

// isKeyChar reports whether c can be part of an unquoted key name such as
// MY_API_KEY, x-api-key, spring.datasource.password or --password.
func isKeyChar(c byte) bool { return isAlnum(c) || c == '_' || c == '-' || c == '.' }

// isBlank is horizontal white space.
func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// isEOL ends a line.
func isEOL(c byte) bool { return c == '\n' || c == '\r' }

// isSpace is any ASCII white space.
func isSpace(c byte) bool { return isBlank(c) || isEOL(c) || c == '\v' || c == '\f' }

// hasFoldPrefix reports whether s starts with the lower-case ASCII word w,
// ignoring ASCII case.
func hasFoldPrefix(s, w string) bool {
	if len(s) < len(w) {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := s[i]
		if isUpper(c) {
			c += 'a' - 'A'
		}
		if c != w[i] {
			return false
		}
	}
	return true
}

// credentialLike reports whether v looks like a machine-made credential rather
// than a word: at least min bytes, no white space or brackets, and a digit,
// an upper-case letter after the first byte mixed with lower case, or one of
// the symbols random tokens are made of. "include", "Authentication",
// "same-origin" and "[REDACTED]" are not credential-like; "hunter2",
// "dXNlcjpwYXNz", "YOUR_TOKEN" and "s3cr3t!" are.
func credentialLike(v string, min int) bool {
	if len(v) < min {
		return false
	}
	var digit, lower, innerUpper, symbol bool
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case isDigit(c):
			digit = true
		case isLower(c):
			lower = true
		case isUpper(c):
			if i > 0 {
				innerUpper = true
			}
		case c <= ' ' || c == 0x7f || strings.IndexByte("\"'`[](){}<>\\", c) >= 0:
			return false
		case strings.IndexByte("+/=_~!@#$%^&*:", c) >= 0:
			symbol = true
		}
	}
	return digit || symbol || (innerUpper && lower)
}

// isPlaceholder reports whether a value is a stand-in for a secret rather than
// a secret: empty, a shell or template reference ($TOKEN, $HOME/.token,
// ${DB_PASSWORD}, $(cat f), {{ .Token }}, {% raw %}, %(password)s, %s,
// %TOKEN%), an angle-bracket placeholder (<your-token>), filler (********,
// xxxxxxxx, ...) or a marker. "$ecret" is not a reference: shell variables
// in configuration are upper case.
func isPlaceholder(v string) bool {
	if v == "" {
		return true
	}
	last := v[len(v)-1]
	switch v[0] {
	case '$':
		if len(v) == 1 {
			return true
		}
		switch c := v[1]; {
		case c == '{':
			return last == '}'
		case c == '(':
			return last == ')'
		case isUpper(c) || c == '_':
			i := 2
			for i < len(v) && isWordByte(v[i]) {
				i++
			}
			return i == len(v) || (v[i] == '/' && isPath(v[i:]))
		}
		return false
	case '{':
		return strings.HasPrefix(v, "{{") && strings.HasSuffix(v, "}}") ||
			strings.HasPrefix(v, "{%") && strings.HasSuffix(v, "%}")
	case '%':
		if len(v) <= 2 || v[1] == '(' {
			return true
		}
		if last != '%' {
			return false
		}
		for i := 1; i < len(v)-1; i++ {
			if !isWordByte(v[i]) {
				return false
			}
		}
		return true
	case '<':
		return last == '>'
	case '[':
		return v == Marker || v == PrivateKeyMarker // already redacted
	}
	return isFiller(v)
}

// isFiller reports whether v is at least three of one masking character:
// "***", "xxxx", "...", "----".
func isFiller(v string) bool {
	if len(v) < 3 || strings.IndexByte("*xX.#-_", v[0]) < 0 {
		return false
	}
	for i := 1; i < len(v); i++ {
		if v[i] != v[0] {
			return false
		}
	}
	return true
}

// randomish reports whether v looks machine-made, as the value of a name
// that holds a secret only sometimes (see keyRandom): 12 to 1024 bytes of
// letters, digits and the symbols tokens are made of, with digits and at
// least eight distinct bytes, or a number of 14 or more digits (a client
// id); not a path, URL, version, date, host name or dotted name.
// "dapi0f1e2d...", "8f14e45f-ceea-467f-a9f8-2a1c9d7b3e5f" and
// "1234567890123456" are randomish; "4096", "api@2024.05.01+abc1234",
// "login.example.com", "2024-05-01T12:00:00Z" and "-1001234567890" are not.
func randomish(v string) bool {
	if len(v) < 12 || len(v) > 1024 {
		return false
	}
	var digits, letters, dots, slashes, distinct int
	var seen [128]bool
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case isDigit(c):
			digits++
		case isLetter(c):
			letters++
		case c == '.':
			dots++
		case c == '/':
			slashes++
		case strings.IndexByte("-_=+~:|%$", c) < 0:
			return false
		}
		if !seen[c] {
			seen[c] = true
			distinct++
		}
	}
	switch {
	case digits == 0:
		return false
	case letters == 0:
		return len(v) >= 14 && allDigits(v) && distinct >= 5
	case slashes > 0 && (dots > 0 || slashes > 2 || strings.Contains(v, "//")):
		return false
	case distinct < 8, looksVersion(v), looksDate(v), dots > 0 && dottedWords(v):
		return false
	}
	return true
}

// looksVersion reports a version: optional v, digits, a dot, a digit.
func looksVersion(v string) bool {
	v = strings.TrimPrefix(strings.TrimPrefix(v, "v"), "V")
	i := 0
	for i < len(v) && isDigit(v[i]) {
		i++
	}
	return i > 0 && i+1 < len(v) && v[i] == '.' && isDigit(v[i+1])
}

// looksDate reports an ISO date at the start: 2024-05-01...
func looksDate(v string) bool {
	if len(v) < 10 || v[4] != '-' || v[7] != '-' {
		return false
	}
	return allDigits(v[:4]) && allDigits(v[5:7]) && allDigits(v[8:10])
}

// dottedWords reports a dotted name none of whose parts mixes letters and
// digits over eight bytes or more: a host name, a Java property, a file
// name.
func dottedWords(v string) bool {
	for _, part := range strings.Split(v, ".") {
		var l, d bool
		for i := 0; i < len(part); i++ {
			l = l || isLetter(part[i])
			d = d || isDigit(part[i])
		}
		if l && d && len(part) >= 8 {
			return false
		}
	}
	return true
}
