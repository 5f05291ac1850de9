package redact

import (
	"encoding/base64"
	"strings"
)

// rules4 are the token rules that start with a digit.
var rules4 = []tokenRule{{"4b1d", alnum, 38, 38, needDigit | needMixed}} // ClickHouse Cloud

// redactTokenShapes replaces tokens recognisable by their shape alone, in any
// context. Matching is case-sensitive and a token must start at a word
// boundary (not glued to a letter, digit or '_' on its left) and end before a
// letter or digit. The shapes are listed in the package documentation; most
// are a fixed prefix, an alphabet and a length range (the tables in
// tokens.go), the rest are structures checked here: JWTs and base64 of JWTs,
// dotted tokens (SendGrid, Harness, Doppler, Dynatrace, Mapbox, Yandex,
// Terraform Cloud), UUID-bodied keys (LaunchDarkly, Plaid), tokens that end
// in a marker (MaxMind's _mmk, New Relic's NRAL, Mailchimp's -usNN), Azure AD
// client secrets (Q~ in fifth place), Telegram bot tokens and Facebook app
// tokens (digits, then ':' or '|'), and webhook URLs, whose host and path
// prefix are kept.
//
// Stripe publishable keys (pk_live_, pk_test_) are deliberately kept: they are
// designed to be shipped in web pages.
func redactTokenShapes(s string) string {
	t := tokenScanner{s: s, nextDot: -1, dotsAfter: -1}
	e := editor{src: s}
	last := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 'Q' {
			if start, end := t.azureClientSecret(i); end >= 0 && start >= last {
				e.replace(start, end, Marker)
				last, i = end, end-1
				continue
			}
		}
		if !isAlnum(c) || (i > 0 && isWordByte(s[i-1])) {
			continue
		}
		start, end := t.at(i)
		if end < 0 {
			continue
		}
		e.replace(start, end, Marker)
		last, i = end, end-1
	}
	return e.String()
}

// at returns the span to replace for a token starting at i, or end -1.
func (t *tokenScanner) at(i int) (start, end int) {
	s := t.s
	rules := rulesFor(s[i])
	if s[i] == '4' {
		rules = rules4
	}
	for _, r := range rules {
		if i+1 >= len(s) || r.prefix[1] != s[i+1] {
			continue
		}
		if n := t.match(i, r); n >= 0 {
			return i, n
		}
	}
	if start, end = t.structured(i); end >= 0 {
		return start, end
	}
	if i+32 <= len(s) && lowerHex.has(s[i]) && lowerHex.has(s[i+31]) {
		if n := t.hexLed(i); n >= 0 {
			return i, n
		}
	}
	if isDigit(s[i]) {
		if n := t.digitLed(i); n >= 0 {
			return i, n
		}
	}
	if i+23 <= len(s) && s[i+14] == '.' {
		if n := t.terraformCloud(i); n >= 0 {
			return i, n
		}
	}
	if i+40 <= len(s) && s[i+6] == '_' {
		return i, t.maxMind(i)
	}
	return i, -1
}

// structured matches the tokens that need more than a prefix rule.
func (t *tokenScanner) structured(i int) (start, end int) {
	s := t.s
	n := -1
	switch s[i] {
	case 'S':
		n = t.sendGrid(i)
	case 'Z':
		n = t.jwtBase64(i)
	case 'a':
		if n = t.uuidBodied(i, "api-"); n < 0 {
			for _, p := range [...]string{"access-sandbox-", "access-development-", "access-production-", "authress_"} {
				if p == "authress_" {
					n = t.authress(i, p)
				} else {
					n = t.uuidBodied(i, p)
				}
				if n >= 0 {
					break
				}
			}
		}
	case 'b':
		// Telegram bot token in an API URL: .../bot<token>/getMe.
		if i > 0 && s[i-1] == '/' && strings.HasPrefix(s[i:], "bot") {
			if n = t.telegram(i + 3); n >= 0 {
				return i + 3, n
			}
		}
	case 'c':
		return t.keepPrefix(i, "claude.ai/code/", "session_", alnum, 16, 255)
	case 'd':
		if n = t.doppler(i); n < 0 {
			for _, p := range [...]string{"discord.com/api/webhooks/", "discordapp.com/api/webhooks/"} {
				if start, end = t.keepPrefix(i, p, "", urlPath, 20, 255); end >= 0 {
					return start, end
				}
			}
		}
	case 'e':
		if n = t.jwt(i); n < 0 {
			n = t.authress(i, "ext_")
		}
	case 'h':
		for _, p := range [...]string{"hooks.slack.com/services/", "hooks.slack.com/workflows/", "hooks.slack.com/triggers/"} {
			if start, end = t.keepPrefix(i, p, "", urlPath, 20, 255); end >= 0 {
				return start, end
			}
		}
	case 'm':
		n = t.uuidBodied(i, "mob-")
	case 'p':
		if n = t.harness(i, "pat."); n < 0 {
			n = t.airtable(i)
		}
	case 's':
		switch {
		case strings.HasPrefix(s[i:], "sk-"):
			if n = t.match(i, tokenRule{"sk-", alnumDashUnder, 20, 255, needDigit}); n >= 0 && !t.mixedCase(i+3, alnumDashUnder) {
				n = -1
			}
		case strings.HasPrefix(s[i:], "sk."):
			n = t.mapbox(i)
		case strings.HasPrefix(s[i:], "s."):
			n = t.vaultLegacy(i)
		case strings.HasPrefix(s[i:], "sat."):
			n = t.harness(i, "sat.")
		case strings.HasPrefix(s[i:], "sdk-"):
			n = t.uuidBodied(i, "sdk-")
		default:
			if n = t.authress(i, "sc_"); n < 0 {
				n = t.authress(i, "scauth_")
			}
		}
	case 't':
		if strings.HasPrefix(s[i:], "tk.") {
			n = t.mapbox(i)
		} else if strings.HasPrefix(s[i:], "t1.") {
			n = t.dottedRun(i, 3, 90, 1)
		}
	case 'w':
		return t.keepPrefix(i, "webhook.office.com/webhookb2/", "", urlPathAt, 60, 400)
	}
	return i, n
}

// keepPrefix matches prefix, then lead, then min..max bytes of a, and
// returns the span after prefix: for webhook URLs whose host and path prefix
// are not secret.
func (t *tokenScanner) keepPrefix(i int, prefix, lead string, a alphabet, min, max int) (int, int) {
	end := t.match(i, tokenRule{prefix + lead, a, min, max, 0})
	if end < 0 {
		return i, -1
	}
	return i + len(prefix), end
}

// sendGrid matches SG. and 60 to 72 bytes of base64url with dots and '='
// (SG.<22>.<43> in practice).
func (t *tokenScanner) sendGrid(i int) int {
	end := t.match(i, tokenRule{"SG.", dotted, 60, 72, 0})
	if end < 0 || strings.IndexByte(t.s[i+3:end], '.') < 0 {
		return -1
	}
	return end
}

// dottedRun matches a run of base64url and dots after a prefix of skip
// bytes, at least min long and with at least dots more dots.
func (t *tokenScanner) dottedRun(i, skip, min, dots int) int {
	j := i + skip
	end, _ := t.run(j, jwtChars)
	for end > j && t.s[end-1] == '.' {
		end--
	}
	if end-j < min || strings.Count(t.s[j:end], ".") < dots {
		return -1
	}
	return end
}

// mapbox matches Mapbox secret and temporary tokens: sk. or tk., then a
// base64url JSON payload (eyJ...), a dot and a signature.
func (t *tokenScanner) mapbox(i int) int {
	if !strings.HasPrefix(t.s[i+3:], "eyJ") {
		return -1
	}
	return t.dottedRun(i, 3, 60, 1)
}

// harness matches pat.<22>.<24>.<20> and sat.<...> Harness tokens.
func (t *tokenScanner) harness(i int, prefix string) int {
	if !strings.HasPrefix(t.s[i:], prefix) {
		return -1
	}
	end := t.dottedRun(i, len(prefix), 60, 2)
	if end < 0 {
		return -1
	}
	parts := strings.Split(t.s[i+len(prefix):end], ".")
	if len(parts) != 3 || len(parts[0]) < 20 || len(parts[1]) < 20 || len(parts[2]) < 16 {
		return -1
	}
	return end
}

// airtable matches pat<14>.<64 hex> personal access tokens.
func (t *tokenScanner) airtable(i int) int {
	s := t.s
	if !strings.HasPrefix(s[i:], "pat") || i+18 > len(s) || s[i+17] != '.' {
		return -1
	}
	if end, _ := t.run(i+3, alnum); end != i+17 {
		return -1
	}
	return t.match(i+18, tokenRule{"", lowerHex, 64, 64, 0})
}

// doppler matches dp.pt., dp.st.[env.], dp.sa., dp.ct., dp.scim. and
// dp.audit. tokens: a final segment of 40 to 44 letters and digits.
func (t *tokenScanner) doppler(i int) int {
	s := t.s
	if !strings.HasPrefix(s[i:], "dp.") {
		return -1
	}
	kind := false
	for _, k := range [...]string{"pt.", "st.", "sa.", "ct.", "scim.", "audit."} {
		if strings.HasPrefix(s[i+3:], k) {
			kind = true
			break
		}
	}
	if !kind {
		return -1
	}
	end := t.dottedRun(i, 3, 43, 1)
	if end < 0 {
		return -1
	}
	last := s[i+3+strings.LastIndexByte(s[i+3:end], '.')+1 : end]
	if len(last) < 40 || len(last) > 44 || strings.ContainsAny(last, "-_") || strings.Count(s[i:end], ".") > 4 {
		return -1
	}
	return end
}

// vaultLegacy matches the old HashiCorp Vault service token s.<24>: letters
// with digits and both cases, not part of a dotted name.
func (t *tokenScanner) vaultLegacy(i int) int {
	if i > 0 && t.s[i-1] == '.' {
		return -1
	}
	end := t.match(i, tokenRule{"s.", alnum, 24, 24, needDigit | needMixed})
	if end < 0 || end < len(t.s) && t.s[end] == '.' {
		return -1
	}
	return end
}

// authress matches Authress service client keys: the prefix, dotted
// segments with ".acc_" or ".acc-" among them, 50 or more bytes.
func (t *tokenScanner) authress(i int, prefix string) int {
	s := t.s
	if !strings.HasPrefix(s[i:], prefix) {
		return -1
	}
	j := i + len(prefix)
	end, _ := t.run(j, b64AnyDot)
	for end > j && s[end-1] == '.' {
		end--
	}
	body := s[j:end]
	if len(body) < 50 || !(strings.Contains(body, ".acc_") || strings.Contains(body, ".acc-")) {
		return -1
	}
	return end
}

// uuidBodied matches prefix followed by a UUID (LaunchDarkly sdk-, api-,
// mob- keys, Plaid access tokens).
func (t *tokenScanner) uuidBodied(i int, prefix string) int {
	s := t.s
	if !strings.HasPrefix(s[i:], prefix) {
		return -1
	}
	j := i + len(prefix)
	if !isUUID(s[j:min(j+36, len(s))]) || j+36 < len(s) && isKeyChar(s[j+36]) {
		return -1
	}
	return j + 36
}

// isUUID reports whether s is a UUID in 8-4-4-4-12 hexadecimal form.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !anyHex.has(s[i]) {
				return false
			}
		}
	}
	return true
}

// jwtBase64 matches a JWT encoded once more in standard base64 ("ZXlK" is
// base64 of "eyJ").
func (t *tokenScanner) jwtBase64(i int) int {
	s := t.s
	if !strings.HasPrefix(s[i:], "ZXlK") {
		return -1
	}
	end, _ := t.run(i, b64Std)
	if end-i < 60 || end < len(s) && isAlnum(s[end]) {
		return -1
	}
	body := strings.TrimRight(s[i:end], "=")
	n := min(len(body)/4*4, 4096)
	dec, err := base64.RawStdEncoding.DecodeString(body[:n])
	if err != nil || !strings.HasPrefix(string(dec), "eyJ") || strings.IndexByte(string(dec), '.') < 0 {
		return -1
	}
	for _, c := range dec {
		if !jwtChars.has(c) {
			return -1
		}
	}
	return end
}

// hexLed matches tokens that start with a run of lower-case hexadecimal:
// Mailchimp (<32>-usNN), Mailgun signing keys (<32>-<8>-<8>) and New Relic
// license keys (<36>NRAL).
func (t *tokenScanner) hexLed(i int) int {
	s := t.s
	end, _ := t.run(i, lowerHex)
	switch end - i {
	case 32:
		if strings.HasPrefix(s[end:], "-us") {
			k := end + 3
			for k < len(s) && k < end+5 && isDigit(s[k]) {
				k++
			}
			if k > end+3 && (k == len(s) || !isAlnum(s[k])) {
				return k
			}
			return -1
		}
		if end+18 <= len(s) && s[end] == '-' && s[end+9] == '-' {
			a, _ := t.run(end+1, lowerHex)
			if a != end+9 {
				return -1
			}
			b, _ := t.run(end+10, lowerHex)
			if b == end+18 && (b == len(s) || !isAlnum(s[b])) {
				return b
			}
		}
	case 36:
		if strings.HasPrefix(s[end:], "NRAL") && (end+4 == len(s) || !isAlnum(s[end+4])) {
			return end + 4
		}
	}
	return -1
}

// digitLed matches tokens that start with a run of digits: Telegram bot
// tokens (<5-16 digits>:A<34>) and Facebook app tokens (<15-16 digits>|<...>).
func (t *tokenScanner) digitLed(i int) int {
	if !isDigit(t.s[i]) {
		return -1
	}
	if n := t.telegram(i); n >= 0 {
		return n
	}
	s := t.s
	d := i
	for d < len(s) && isDigit(s[d]) {
		d++
	}
	if n := d - i; n < 15 || n > 16 || d >= len(s) || s[d] != '|' {
		return -1
	}
	end, _ := t.run(d+1, alnumDashUnder)
	if n := end - d - 1; n < 27 || n > 40 || end < len(s) && isAlnum(s[end]) {
		return -1
	}
	return end
}

// telegram matches a Telegram bot token at i.
func (t *tokenScanner) telegram(i int) int {
	s := t.s
	d := i
	for d < len(s) && isDigit(s[d]) {
		d++
	}
	if n := d - i; n < 5 || n > 16 || !strings.HasPrefix(s[d:], ":A") {
		return -1
	}
	end, _ := t.run(d+2, alnumDashUnder)
	if end-d-2 != 34 || end < len(s) && isAlnum(s[end]) {
		return -1
	}
	return end
}

// terraformCloud matches <14>.atlasv1.<60-70> Terraform Cloud tokens.
func (t *tokenScanner) terraformCloud(i int) int {
	s := t.s
	if i+23 > len(s) || s[i+14] != '.' || !strings.HasPrefix(s[i+14:], ".atlasv1.") {
		return -1
	}
	if end, _ := t.run(i, alnum); end != i+14 {
		return -1
	}
	return t.match(i+23, tokenRule{"", alnumDashUnderEq, 60, 70, 0})
}

// maxMind matches <6>_<29>_mmk MaxMind license keys.
func (t *tokenScanner) maxMind(i int) int {
	s := t.s
	if i+40 > len(s) || s[i+6] != '_' || s[i+36:i+40] != "_mmk" {
		return -1
	}
	if end, _ := t.run(i, alnum); end != i+6 {
		return -1
	}
	if end, _ := t.run(i+7, alnum); end != i+36 {
		return -1
	}
	if i+40 < len(s) && isWordByte(s[i+40]) {
		return -1
	}
	return i + 40
}

// azureClientSecret matches an Azure AD client secret around the "Q~" at q:
// three bytes of [A-Za-z0-9_~.] and a digit before it, 31 to 34 of
// [A-Za-z0-9_~.-] after it, delimited by white space, quotes, brackets or
// separators.
func (t *tokenScanner) azureClientSecret(q int) (int, int) {
	s := t.s
	if q < 4 || q+2 >= len(s) || s[q+1] != '~' || !isDigit(s[q-1]) {
		return q, -1
	}
	start := q - 4
	for k := start; k < q-1; k++ {
		if c := s[k]; !isAlnum(c) && c != '_' && c != '~' && c != '.' {
			return q, -1
		}
	}
	if start > 0 && !isSpace(s[start-1]) && strings.IndexByte("\\'\"`>=:(,)", s[start-1]) < 0 {
		return q, -1
	}
	end := q + 2
	for end < len(s) && end-q-2 <= 34 && (isAlnum(s[end]) || strings.IndexByte("_~.-", s[end]) >= 0) {
		end++
	}
	if n := end - q - 2; n < 31 || n > 34 {
		return q, -1
	}
	if end < len(s) && !isSpace(s[end]) && strings.IndexByte("\\'\"`<),", s[end]) < 0 {
		return q, -1
	}
	return start, end
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
