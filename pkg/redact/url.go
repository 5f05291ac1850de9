package redact

import "strings"

const (
	// maxScheme bounds the URL scheme scanned back from "://".
	maxScheme = 32
	// maxUserinfo bounds the user name and password of a URL, and
	// maxHostPort its host and port: what is scanned for one "://" stays
	// bounded, so Text stays linear on text full of URLs.
	maxUserinfo = 512
	maxHostPort = 300
)

// redactURLCredentials replaces the password of scheme://user:password@host
// URLs and connection strings (postgres://, mysql://, mongodb+srv://,
// redis://:password@, amqp://, https://user:token@ git remotes ...). The
// scheme, user name and host stay: they are what makes a log line useful.
//
// The user name runs from "://" to the first ':' and holds none of
// / ? # @ [ ] or white space. The password runs from that ':' to the '@'
// that is followed by a host (a name, an IPv4 address or a bracketed IPv6
// address, then an optional :port, then the end of the URL or / ? # , ; ( ) ]),
// so a password may hold any byte but white space, quotes, '<', '>' and '\':
// "p@ss/w#rd:x" included. When several '@' are followed by a host, the last
// one before a query string wins. "host:8420/path?x=a@b.example" is a host
// and port, not a user and password. Placeholders (${DB_PASSWORD},
// $PGPASSWORD, <password>, and the words password, token and secret) are
// left alone.
func redactURLCredentials(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	e := editor{src: s}
	urlEnd := span{-1, -1} // the end (b) of the URL that contains a
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
		pw, at := userinfoPassword(s, authStart, &urlEnd)
		if at < 0 {
			continue
		}
		if v := s[pw:at]; isPlaceholder(v) || isPlaceholderWord(v) {
			continue
		}
		e.replace(pw, at, Marker)
		i = at
	}
	return e.String()
}

// userinfoPassword finds the password of the URL authority at authStart:
// it returns the start of the password and the '@' that ends it, or at -1.
//
// end memoises the end of the URL text around the last authority looked
// at, so that text full of "://" is scanned once.
func userinfoPassword(s string, authStart int, memo *span) (pw, at int) {
	u := authStart
	for u < len(s) && u-authStart < maxUserinfo && !isUserEnd(s[u]) {
		u++
	}
	if u >= len(s) || s[u] != ':' {
		return 0, -1
	}
	pw = u + 1
	if pw < memo.a || pw > memo.b {
		end := pw
		for end < len(s) && !isURLEnd(s[end]) {
			end++
		}
		*memo = span{pw, end}
	}
	end := min(memo.b, authStart+maxUserinfo+maxHostPort)
	at, hostEnd := -1, 0
	for k := pw; k < end && k-authStart < maxUserinfo; k++ {
		if c := strings.IndexByte(s[k:min(end, authStart+maxUserinfo)], '@'); c < 0 {
			break
		} else {
			k += c
		}
		he, ok := hostAt(s, k+1, end)
		if !ok {
			continue
		}
		if at >= 0 && strings.IndexByte(s[hostEnd:k], '?') >= 0 {
			break // an '@' in the query string of a URL whose host is known
		}
		at, hostEnd = k, he
	}
	if at < 0 || (u > authStart && isHostPort(s[authStart:u], s[pw:at])) {
		return 0, -1
	}
	return pw, at
}

// hostAt reports whether a host, an optional port and the end of the
// authority start at h, and returns the end of the host and port.
func hostAt(s string, h, end int) (int, bool) {
	k := h
	if k < end && s[k] == '[' {
		c := strings.IndexByte(s[k:end], ']')
		if c < 0 {
			return 0, false
		}
		k += c + 1
	} else {
		for k < end && (isAlnum(s[k]) || s[k] == '.' || s[k] == '-' || s[k] == '_' || s[k] == '%') {
			k++
		}
		if k == h {
			return 0, false
		}
	}
	if k < end && s[k] == ':' {
		d := k + 1
		for d < end && isDigit(s[d]) {
			d++
		}
		if d == k+1 {
			return 0, false
		}
		k = d
	}
	return k, k == end || strings.IndexByte("/?#,;()]", s[k]) >= 0
}

// isHostPort reports whether user:rest is host:port followed by a path,
// query or fragment: localhost:8420/v1/recall?next=a@b.example.
func isHostPort(user, rest string) bool {
	for i := 0; i < len(user); i++ {
		if c := user[i]; !isAlnum(c) && c != '.' && c != '-' {
			return false
		}
	}
	d := 0
	for d < len(rest) && isDigit(rest[d]) {
		d++
	}
	return d > 0 && d <= 5 && (d == len(rest) || strings.IndexByte("/?#", rest[d]) >= 0)
}

// isPlaceholderWord reports a password that is only the word for one, as in
// documentation: postgres://user:password@host/db.
func isPlaceholderWord(v string) bool {
	return foldIn(v, "password", "passwd", "pass", "pwd", "pw", "secret", "token", "apikey", "api_key",
		"mypassword", "yourpassword", "your_password", "your-password", "your_token", "your-token")
}

func isSchemeChar(c byte) bool { return isAlnum(c) || c == '+' || c == '-' || c == '.' }

// isUserEnd ends the user name of a URL authority.
func isUserEnd(c byte) bool {
	switch c {
	case '/', '?', '#', '@', ':', '"', '\'', '`', '<', '>', '\\', '[', ']':
		return true
	}
	return isSpace(c)
}

// isURLEnd ends a URL in text.
func isURLEnd(c byte) bool {
	switch c {
	case '"', '\'', '`', '<', '>', '\\':
		return true
	}
	return isSpace(c)
}
