package redact

import "strings"

// maxNetrcTokens bounds the tokens of one netrc entry.
const maxNetrcTokens = 16

// redactNetrc replaces the passwords of .netrc entries: "machine HOST",
// or "default", followed by keyword-value pairs (login, password, account,
// port), on one line or several:
//
//	machine api.heroku.com login me@example.com password [REDACTED]
//
// The entry must follow the netrc grammar from its first keyword: a pair
// whose keyword is not one of netrc's ends it, so prose that mentions
// "machine, login and password lines" is left alone. The values of
// password and account are redacted.
func redactNetrc(s string) string {
	if !strings.Contains(s, "password") {
		return s
	}
	e := editor{src: s}
	// next finds the next occurrence of a keyword at or after i; each
	// keyword's position is searched again only once passed, so the scan
	// stays linear.
	nextM, nextD := -1, -1
	next := func(i int, w string, at *int) int {
		if *at < i && *at != len(s) {
			*at = len(s)
			if k := strings.Index(s[i:], w); k >= 0 {
				*at = i + k
			}
		}
		return *at
	}
	for i := 0; ; {
		start := min(next(i, "machine", &nextM), next(i, "default", &nextD))
		if start == len(s) {
			break
		}
		i = start + len("machine")
		if start > 0 && !isSpace(s[start-1]) {
			continue
		}
		i = netrcEntry(s, start, &e)
	}
	return e.String()
}

// netrcEntry parses the entry whose first keyword is at start, redacts its
// passwords and returns where parsing stopped.
func netrcEntry(s string, start int, e *editor) int {
	p := start
	word := func() (int, int) {
		for p < len(s) && isSpace(s[p]) {
			p++
		}
		a := p
		for p < len(s) && !isSpace(s[p]) {
			p++
		}
		return a, p
	}
	a, b := word()
	kw := s[a:b]
	if kw == "machine" {
		ha, hb := word()
		if hb == ha || !isNetrcHost(s[ha:hb]) {
			return b
		}
	} else if kw != "default" {
		return b
	}
	ok := false
	for n := 0; n < maxNetrcTokens; n++ {
		save := p
		ka, kb := word()
		switch s[ka:kb] {
		case "login", "port":
		case "password", "account":
			va, vb := word()
			if vb > va && ok {
				if v := s[va:vb]; !isPlaceholder(v) && !isPlaceholderWord(v) && va >= e.last {
					e.replace(va, vb, Marker)
				}
			}
			continue
		default:
			return save
		}
		va, vb := word()
		if vb == va {
			return p
		}
		ok = true
	}
	return p
}

// isNetrcHost reports a plausible host name: letters, digits, . - _ and
// no trailing punctuation.
func isNetrcHost(h string) bool {
	for i := 0; i < len(h); i++ {
		if c := h[i]; !isAlnum(c) && c != '.' && c != '-' && c != '_' {
			return false
		}
	}
	return isAlnum(h[len(h)-1])
}
