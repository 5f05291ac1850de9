package redact

import "strings"

// alphabet is the set of bytes a token continues with after its prefix.
type alphabet uint8

const (
	upperDigit     alphabet = iota // A-Z 0-9
	alnum                          // A-Z a-z 0-9
	alnumUnder                     // A-Z a-z 0-9 _
	alnumDash                      // A-Z a-z 0-9 -
	alnumDashUnder                 // A-Z a-z 0-9 - _ (base64url)
	lowerHex                       // 0-9 a-f
	urlPath                        // A-Z a-z 0-9 - _ /
	jwtChars                       // A-Z a-z 0-9 - _ .
	numAlphabets
)

func (a alphabet) has(c byte) bool {
	switch a {
	case upperDigit:
		return isUpper(c) || isDigit(c)
	case alnum:
		return isAlnum(c)
	case alnumUnder:
		return isAlnum(c) || c == '_'
	case alnumDash:
		return isAlnum(c) || c == '-'
	case alnumDashUnder:
		return isAlnum(c) || c == '-' || c == '_'
	case lowerHex:
		return isDigit(c) || ('a' <= c && c <= 'f')
	case urlPath:
		return isAlnum(c) || c == '-' || c == '_' || c == '/'
	case jwtChars:
		return isAlnum(c) || c == '-' || c == '_' || c == '.'
	}
	return false
}

// runMemo remembers, per alphabet, the last run scanned. Every position inside
// a run ends where the run ends, so candidates nested in one long run (for
// example "sk-a-sk-a-sk-a...") cost O(1) each and the scan stays linear.
type runMemo struct {
	from, to                        int
	lastDigit, lastUpper, lastLower int
}

type tokenScanner struct {
	s    string
	memo [numAlphabets]runMemo
	// nextDot is the first '.' at or after the last JWT candidate, and
	// dots the dots that follow the one at dotsAfter; both only move
	// forward, so JWT candidates stay linear too.
	nextDot   int
	dotsAfter int
	dots      [4]int
	nDots     int
}

// run returns the end of the run of a starting at i and the index of its last
// digit (-1 when none).
func (t *tokenScanner) run(i int, a alphabet) (end, lastDigit int) {
	m := &t.memo[a]
	if i >= m.from && i < m.to {
		return m.to, m.lastDigit
	}
	*m = runMemo{from: i, to: i, lastDigit: -1, lastUpper: -1, lastLower: -1}
	for end = i; end < len(t.s) && a.has(t.s[end]); end++ {
		switch c := t.s[end]; {
		case isDigit(c):
			m.lastDigit = end
		case isUpper(c):
			m.lastUpper = end
		case isLower(c):
			m.lastLower = end
		}
	}
	m.to = end
	return end, m.lastDigit
}

// mixedCase reports whether the run of a that contains j has both upper- and
// lower-case letters after j, as random base62 and base64 tokens do and
// dashed names such as the SSH algorithm sk-ecdsa-sha2-nistp256-cert-v01 do
// not. It must follow a call to run for the same run.
func (t *tokenScanner) mixedCase(j int, a alphabet) bool {
	m := &t.memo[a]
	return m.lastUpper >= j && m.lastLower >= j
}

// shape matches prefix at i followed by min..max bytes of a, not followed by
// a letter or digit; with digit set the run must contain a digit. It returns
// the end of the token, or -1.
func (t *tokenScanner) shape(i int, prefix string, a alphabet, min, max int, digit bool) int {
	if !strings.HasPrefix(t.s[i:], prefix) {
		return -1
	}
	j := i + len(prefix)
	end, lastDigit := t.run(j, a)
	if n := end - j; n < min || n > max {
		return -1
	}
	if end < len(t.s) && isAlnum(t.s[end]) {
		return -1
	}
	if digit && lastDigit < j {
		return -1
	}
	return end
}

// redactTokenShapes replaces tokens recognisable by their shape alone, in any
// context. Matching is case-sensitive and a token must start at a word
// boundary (not glued to a letter, digit or '_' on its left) and end before a
// letter or digit. The shapes (bytes after the prefix):
//
//	AWS access key id       AKIA / ASIA + 16 of A-Z0-9
//	Google API key          AIza + 35 of A-Za-z0-9_-
//	Google OAuth            GOCSPX- client secrets, ya29. access tokens
//	GitHub                  ghp_ gho_ ghu_ ghs_ ghr_ + 30+ alnum; github_pat_
//	GitLab                  glpat- gldt- glrt- glptt- glft- glcbt- glsoat- + 20+
//	Slack                   xoxb- xoxa- xoxp- xoxr- xoxs- xoxe- xapp- (with a
//	                        digit); hooks.slack.com webhook paths
//	Discord                 discord(app).com/api/webhooks/ paths
//	Stripe                  sk_live_ sk_test_ rk_live_ rk_test_ whsec_
//	OpenAI, Anthropic       sk- + 20+ of A-Za-z0-9_- with a digit and mixed
//	                        case (sk-proj-, sk-svcacct-, sk-ant-api03- ...)
//	JWT / JWS / JWE         eyJ... . ... . ... (base64url JSON header)
//	npm, Hugging Face       npm_ + 36, hf_ + 34
//	HashiCorp Vault         hvs. hvb. hvr. + 24+
//	PyPI                    pypi-AgEIcHlwaS5vcmc... upload tokens
//	Docker Hub              dckr_pat_
//	SendGrid                SG.<22>.<43>
//	DigitalOcean            dop_v1_ doo_v1_ dor_v1_ + 64 hex
//	Shopify                 shpat_ shpca_ shppa_ shpss_ + 32 hex
//	age                     AGE-SECRET-KEY-1...
//
// Stripe publishable keys (pk_live_, pk_test_) are deliberately kept: they are
// designed to be shipped in web pages.
func redactTokenShapes(s string) string {
	t := tokenScanner{s: s, nextDot: -1, dotsAfter: -1}
	e := editor{src: s}
	for i := 0; i < len(s); i++ {
		if !isLetter(s[i]) || (i > 0 && isWordByte(s[i-1])) {
			continue
		}
		start, end := t.at(i)
		if end < 0 {
			continue
		}
		e.replace(start, end, Marker)
		i = end - 1
	}
	return e.String()
}

// at returns the span to replace for a token starting at i, or end -1.
func (t *tokenScanner) at(i int) (start, end int) {
	s := t.s
	n := -1
	switch s[i] {
	case 'A':
		if n = t.shape(i, "AKIA", upperDigit, 16, 16, false); n < 0 {
			if n = t.shape(i, "ASIA", upperDigit, 16, 16, false); n < 0 {
				if n = t.shape(i, "AIza", alnumDashUnder, 35, 35, false); n < 0 {
					n = t.shape(i, "AGE-SECRET-KEY-1", upperDigit, 50, 80, false)
				}
			}
		}
	case 'G':
		n = t.shape(i, "GOCSPX-", alnumDashUnder, 20, 64, false)
	case 'S':
		n = t.sendGrid(i)
	case 'd':
		if n = t.shape(i, "dckr_pat_", alnumDashUnder, 20, 64, false); n < 0 {
			for _, p := range [...]string{"dop_v1_", "doo_v1_", "dor_v1_"} {
				if n = t.shape(i, p, lowerHex, 64, 64, false); n >= 0 {
					break
				}
			}
			if n < 0 {
				if start, end = t.keepPrefix(i, "discord.com/api/webhooks/", urlPath, 20, 255); end < 0 {
					start, end = t.keepPrefix(i, "discordapp.com/api/webhooks/", urlPath, 20, 255)
				}
				return start, end
			}
		}
	case 'e':
		n = t.jwt(i)
	case 'g':
		if strings.HasPrefix(s[i:], "gh") || strings.HasPrefix(s[i:], "github_pat_") {
			for _, p := range [...]string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"} {
				if n = t.shape(i, p, alnum, 30, 255, false); n >= 0 {
					break
				}
			}
			if n < 0 {
				n = t.shape(i, "github_pat_", alnumUnder, 30, 255, false)
			}
		} else if strings.HasPrefix(s[i:], "gl") {
			for _, p := range [...]string{"glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glcbt-", "glsoat-"} {
				if n = t.shape(i, p, alnumDashUnder, 20, 255, false); n >= 0 {
					break
				}
			}
		}
	case 'h':
		if strings.HasPrefix(s[i:], "hv") {
			for _, p := range [...]string{"hvs.", "hvb.", "hvr."} {
				if n = t.shape(i, p, alnumDashUnder, 24, 512, false); n >= 0 {
					break
				}
			}
		} else if n = t.shape(i, "hf_", alnum, 30, 40, false); n < 0 {
			for _, p := range [...]string{"hooks.slack.com/services/", "hooks.slack.com/workflows/", "hooks.slack.com/triggers/"} {
				if start, end = t.keepPrefix(i, p, urlPath, 20, 255); end >= 0 {
					return start, end
				}
			}
		}
	case 'n':
		n = t.shape(i, "npm_", alnum, 30, 40, false)
	case 'p':
		n = t.shape(i, "pypi-AgEIcHlwaS5vcmc", alnumDashUnder, 20, 1024, false)
	case 'r':
		if n = t.shape(i, "rk_live_", alnum, 16, 255, false); n < 0 {
			n = t.shape(i, "rk_test_", alnum, 16, 255, false)
		}
	case 's':
		switch {
		case strings.HasPrefix(s[i:], "sk_"):
			if n = t.shape(i, "sk_live_", alnum, 16, 255, false); n < 0 {
				n = t.shape(i, "sk_test_", alnum, 16, 255, false)
			}
		case strings.HasPrefix(s[i:], "sk-"):
			if n = t.shape(i, "sk-", alnumDashUnder, 20, 255, true); n >= 0 && !t.mixedCase(i+3, alnumDashUnder) {
				n = -1
			}
		case strings.HasPrefix(s[i:], "shp"):
			for _, p := range [...]string{"shpat_", "shpca_", "shppa_", "shpss_"} {
				if n = t.shape(i, p, lowerHex, 32, 32, false); n >= 0 {
					break
				}
			}
		}
	case 'w':
		n = t.shape(i, "whsec_", alnum, 24, 255, false)
	case 'x':
		for _, p := range [...]string{"xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-", "xoxe-", "xapp-"} {
			if n = t.shape(i, p, alnumDash, 10, 255, true); n >= 0 {
				break
			}
		}
	case 'y':
		n = t.shape(i, "ya29.", alnumDashUnder, 20, 2048, false)
	}
	return i, n
}

// keepPrefix matches like shape but returns only the part after the prefix,
// for webhook URLs whose host and path prefix are not secret.
func (t *tokenScanner) keepPrefix(i int, prefix string, a alphabet, min, max int) (int, int) {
	end := t.shape(i, prefix, a, min, max, false)
	if end < 0 {
		return i, -1
	}
	return i + len(prefix), end
}

// sendGrid matches SG.<22 base64url>.<43 base64url>.
func (t *tokenScanner) sendGrid(i int) int {
	s := t.s
	if !strings.HasPrefix(s[i:], "SG.") {
		return -1
	}
	j := i + 3
	k := j
	for k < len(s) && k-j <= 22 && alnumDashUnder.has(s[k]) {
		k++
	}
	if k-j != 22 || k >= len(s) || s[k] != '.' {
		return -1
	}
	k++
	j = k
	for k < len(s) && k-j <= 43 && alnumDashUnder.has(s[k]) {
		k++
	}
	if k-j != 43 || (k < len(s) && isAlnum(s[k])) {
		return -1
	}
	return k
}

// minJWTPart is the shortest header and payload segment: base64url of
// {"a":1} is 10 bytes.
const minJWTPart = 10

// jwt matches a JWS (header.payload.signature) or JWE (five segments) whose
// header is base64url JSON, i.e. starts with "eyJ". The signature may be empty
// (alg "none"). A sixth segment or more is not part of the token.
func (t *tokenScanner) jwt(i int) int {
	s := t.s
	if !strings.HasPrefix(s[i:], "eyJ") {
		return -1
	}
	runEnd, _ := t.run(i, jwtChars)
	if t.nextDot < i {
		t.nextDot = len(s)
		if k := strings.IndexByte(s[i:], '.'); k >= 0 {
			t.nextDot = i + k
		}
	}
	first := t.nextDot
	if first >= runEnd || first-i < minJWTPart {
		return -1
	}
	if t.dotsAfter != first {
		t.dotsAfter, t.nDots = first, 0
		for k := first + 1; k < runEnd && t.nDots < len(t.dots); k++ {
			if s[k] == '.' {
				t.dots[t.nDots] = k
				t.nDots++
			}
		}
	}
	nd, dots := t.nDots, t.dots
	if nd < 1 || dots[0]-first-1 < minJWTPart {
		return -1
	}
	switch {
	case nd == 3 && runEnd-dots[2] > 1:
		return runEnd // JWE: five segments, nothing after
	case nd >= 2:
		return dots[1] // JWS followed by more dotted text
	}
	return runEnd
}
