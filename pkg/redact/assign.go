package redact

import "strings"

const (
	// maxQuotedKey bounds a quoted key scanned back from its separator.
	maxQuotedKey = 128
	// minBareValue is the shortest unquoted value treated as a secret:
	// "token: 3 left" and "pw=ok" are not worth a false positive.
	minBareValue = 4
	// minFlagValue is the shortest credential-like value after a
	// "--password" style flag.
	minFlagValue = 6
)

// redactAssignments replaces the value of every assignment whose key names a
// secret (see IsSecretKey):
//
//	KEY=value  KEY = value  KEY := value  KEY ?= value  key => value
//	key: value (YAML, HTTP headers)   "key": "value"   'key': 'value'
//	\"key\": \"value\" (inside encoded JSON)   --key value   <key>value</key>
//
// Quoted values lose their content and keep their quotes. Unquoted values end
// at white space or at one of " ' ` , ; & | \ ) ] } >; when the key was quoted
// the marker is quoted too, so JSON stays JSON.
//
// A value is kept when it is not a secret but a reference to one or a
// stand-in: placeholders (see isPlaceholder), code (a value that runs into
// '(', '[', '{' or '<': os.Getenv("TOKEN"), getpass(), [REDACTED]), keywords
// (null, None, true, string, ...), dotted paths (self.token, cfg.Password),
// an identifier that itself names a secret (password=password,
// Token: accessToken), a variable after " = " or ":=" (see sepCode), file
// paths, unquoted values under 4 bytes, and prose after ':' ("Password:
// required for login"). Authorization values keep their scheme word; Cookie
// values are redacted through the end of the header.
//
// Every verdict depends only on the value itself and on text no redaction of
// this pass can change, which keeps the rule idempotent: a quoted value is
// judged after the assignments inside it are redacted, a key inside a value
// already judged is not a key, and look-around stops at bytes that cannot
// start a redacted span.
func redactAssignments(s string) string {
	a := assigner{s: s, e: editor{src: s}, codeFrom: -1, codeTo: -1}
	for i := 0; i < len(s); {
		i = a.at(i)
	}
	return a.e.String()
}

type assigner struct {
	s string
	e editor
	// consumed is the end of the last value this pass redacted or judged
	// as a whole; a key inside it belongs to that value
	// (Set-Cookie: "password": "x" has no password key).
	consumed int
	// [codeFrom, codeTo) is the last unquoted value run that stopped at an
	// opening bracket; any value starting inside it stops there too.
	codeFrom, codeTo int
}

// redact replaces s[start:end] and resumes after it.
func (a *assigner) redact(start, end int, with string) int {
	a.e.replace(start, end, with)
	a.consumed = end
	return end
}

// keyInfo describes the key in front of a separator.
type keyInfo struct {
	name  string
	start int  // first byte of the key, its opening quote included
	quote byte // 0, '"' or '\''
	esc   bool // quoted as \" inside an encoded string
}

// at examines s[i] and returns the next index to examine.
func (a *assigner) at(i int) int {
	s := a.s
	switch s[i] {
	case '=', ':':
		return a.separator(i)
	case '>':
		return a.xmlElement(i)
	case '-':
		if i+1 < len(s) && s[i+1] == '-' && (i == 0 || !isKeyChar(s[i-1])) {
			return a.flag(i)
		}
		if i+5 < len(s) && isLetter(s[i+1]) && (i == 0 || isBlank(s[i-1])) {
			return a.flag(i) // -password value, -token value (single-dash long flags)
		}
	case ',':
		return a.callPair(i)
	}
	return i + 1
}

// callPair handles a call whose first argument names a secret and whose
// second is a quoted string, at the ',' between them:
// os.Setenv("API_TOKEN", "..."), define('AUTH_KEY', '...'),
// env('APP_KEY', '...'), System.setProperty("db.password", "...").
func (a *assigner) callPair(i int) int {
	s := a.s
	j := i
	for j > 0 && isBlank(s[j-1]) {
		j--
	}
	if j < 2 || (s[j-1] != '"' && s[j-1] != '\'') {
		return i + 1
	}
	q := s[j-1]
	k := j - 1
	for k > 0 && j-1-k < maxQuotedKey && isKeyChar(s[k-1]) {
		k--
	}
	open := k - 1
	if k == j-1 || open < 1 || s[open] != q || open < a.consumed {
		return i + 1
	}
	p := open
	for p > 0 && isBlank(s[p-1]) {
		p--
	}
	if p == 0 || s[p-1] != '(' {
		return i + 1
	}
	class := classifyKey(s[k : j-1])
	if class == keyPlain {
		return i + 1
	}
	v := i + 1
	for v < len(s) && isBlank(s[v]) {
		v++
	}
	if v >= len(s) || (s[v] != '"' && s[v] != '\'') {
		return i + 1
	}
	return a.quoted(keyInfo{name: s[k : j-1], start: open, quote: q}, class, v)
}

func (a *assigner) separator(i int) int {
	s := a.s
	sepStart, sepEnd := i, i+1
	if s[i] == ':' {
		if sepEnd < len(s) && s[sepEnd] == ':' {
			return i + 2 // Rust and C++ paths
		}
		if sepEnd < len(s) && s[sepEnd] == '=' {
			sepEnd++
		}
	} else {
		if sepEnd < len(s) && (s[sepEnd] == '=' || s[sepEnd] == '~') {
			return i + 2 // == and =~ compare
		}
		if i > 0 {
			switch s[i-1] {
			case '?', '+':
				sepStart-- // make's ?= and +=
			case '=', '!', '<', '>', '-', '*', '/', '%', '&', '|', '^':
				return i + 1 // comparisons and arithmetic
			}
		}
		if sepEnd < len(s) && s[sepEnd] == '>' {
			sepEnd++
		}
	}
	k, ok := a.keyBefore(sepStart)
	if !ok || k.start < a.consumed {
		// No key, or a key this pass has already redacted as the value of
		// another one: Set-Cookie: "password": "x".
		return i + 1
	}
	class := classifyKey(k.name)
	if class == keyPlain {
		return i + 1
	}
	v := sepEnd
	for v < len(s) && isBlank(s[v]) {
		v++
	}
	if v >= len(s) || isEOL(s[v]) {
		return v
	}
	if isQuote(s, v) {
		if k.quote == 0 && k.start > 0 && s[k.start-1] == s[v] {
			// "Password: " is a prompt: the quote after the separator
			// closes the string the key is in.
			return i + 1
		}
		return a.quoted(k, class, v)
	}
	var sep sepKind
	switch {
	case s[i] == ':' && sepEnd == i+1:
		if k.quote == 0 && v == sepEnd {
			return i + 1 // user:pass, host:port, a:b
		}
		sep = sepColon
	case s[i] == ':':
		sep = sepDeclare // :=
	case sepEnd == i+2:
		sep = sepCode // =>
	case v > sepEnd && sepStart > 0 && isBlank(s[sepStart-1]) && s[sepStart] != '?':
		sep = sepCode // x = y, x += y
	default:
		sep = sepEnv // KEY=value, KEY ?= value
	}
	return a.unquoted(k, class, sepEnd, v, sep)
}

// sepKind tells what kind of text an assignment is probably in.
type sepKind uint8

const (
	// sepEnv is KEY=value or make's KEY ?= value: configuration, where a
	// bare word is a value.
	sepEnv sepKind = iota
	// sepColon is key: value: YAML, HTTP headers, type annotations, prose.
	sepColon
	// sepCode is x = y, x += y, x => y: code, where a bare word without
	// digits is a variable.
	sepCode
	// sepDeclare is Go's x := y, where any bare word is a variable.
	sepDeclare
)

// keyBefore finds the key that ends (after optional blanks) at sep.
func (a *assigner) keyBefore(sep int) (keyInfo, bool) {
	s := a.s
	j := sep
	for j > 0 && isBlank(s[j-1]) {
		j--
	}
	if j == 0 {
		return keyInfo{}, false
	}
	if j >= 3 && s[j-1] == ']' && (s[j-2] == '"' || s[j-2] == '\'') {
		// A quoted key in brackets: os.environ['API_KEY'] = ...,
		// ENV["TOKEN"] = ..., $_ENV['SECRET'] = ...
		q, end := s[j-2], j-2
		k := end
		for k > 0 && end-k < maxQuotedKey && isKeyChar(s[k-1]) {
			k--
		}
		if k == end || k < 2 || s[k-1] != q || s[k-2] != '[' {
			return keyInfo{}, false
		}
		return keyInfo{name: s[k:end], start: k - 2}, true
	}
	if q := s[j-1]; q == '"' || q == '\'' {
		end := j - 1
		esc := end > 0 && s[end-1] == '\\'
		if esc {
			end--
		}
		k := end
		for k > 0 && end-k < maxQuotedKey && isKeyChar(s[k-1]) {
			k--
		}
		open := k - 1
		if k == end || open < 0 || s[open] != q {
			return keyInfo{}, false
		}
		if esc {
			if open == 0 || s[open-1] != '\\' {
				return keyInfo{}, false
			}
			open--
		}
		return keyInfo{name: s[k:end], start: open, quote: q, esc: esc}, true
	}
	k := j
	for k > 0 && isKeyChar(s[k-1]) {
		k--
	}
	if k == j {
		return keyInfo{}, false
	}
	return keyInfo{name: s[k:j], start: k}, true
}

// isQuote reports whether a quoted value starts at v: ", ', ` or \".
func isQuote(s string, v int) bool {
	switch s[v] {
	case '"', '\'', '`':
		return true
	case '\\':
		return v+1 < len(s) && s[v+1] == '"'
	}
	return false
}

// closingQuote returns the end of the quoted content starting at i and
// whether the quote was closed before the end of the line. Quoted content
// never spans lines.
func closingQuote(s string, i int, q byte, esc bool) (int, bool) {
	for j := i; j < len(s); j++ {
		c := s[j]
		switch {
		case isEOL(c):
			return j, false
		case esc:
			if c == '\\' && j+1 < len(s) && s[j+1] == '"' {
				return j, true
			}
		case c == '\\' && q == '"' && j+1 < len(s) && !isEOL(s[j+1]):
			j++ // an escape; a backslash never joins lines
		case c == q:
			return j, true
		}
	}
	return len(s), false
}

// quoted handles a quoted value. The assignments inside the quotes are
// redacted first and the value is judged on the result, so that the verdict
// does not change when Text runs again on its own output (a value kept for
// containing "$(" must not lose its "$(" to an inner redaction and then be
// judged differently).
func (a *assigner) quoted(k keyInfo, class keyClass, v int) int {
	s := a.s
	q, cs, esc := s[v], v+1, false
	if q == '\\' {
		q, cs, esc = '"', v+2, true
	}
	ce, closed := closingQuote(s, cs, q, esc)
	after := ce
	if closed {
		after++
		if esc {
			after++
		}
	}
	if !closed {
		return a.unterminated(class, v, cs, ce)
	}
	a.consumed = after
	inner := redactAssignments(s[cs:ce])
	if keepQuoted(class, inner) {
		a.e.replace(cs, ce, inner)
		return after
	}
	rs := cs
	if class == keyAuthorization {
		rs += schemeWord(inner)
		a.e.replace(cs, ce, inner[:rs-cs]+Marker)
		return after
	}
	a.e.replace(rs, ce, Marker)
	return after
}

// unterminated handles a quote that is not closed on its line. It is either
// a value cut short (password="hunter2) or the end of a string the key was
// in ("shlex: token=" + repr(raw)), so only the first word after the quote
// is judged, like a closed value, and a quote followed by a blank is not a
// value at all.
func (a *assigner) unterminated(class keyClass, v, cs, ce int) int {
	s := a.s
	end := cs
	for end < ce && !isSpace(s[end]) {
		end++
	}
	if end == cs {
		return v + 1
	}
	a.consumed = end
	inner := redactAssignments(s[cs:end])
	if keepQuoted(class, inner) {
		a.e.replace(cs, end, inner)
		return end
	}
	return a.redact(cs, end, Marker)
}

// keepQuoted reports whether quoted content under a secret key is not a
// secret.
func keepQuoted(class keyClass, v string) bool {
	if strings.Contains(v, "${") || strings.Contains(v, "$(") {
		return true // interpolated: `Bearer ${token}`, "$(gh auth token)"
	}
	switch class {
	case keyWeak:
		return !credentialLike(v, 8) || isPlaceholder(v)
	case keyRandom:
		return !randomish(v)
	case keyAuthorization:
		if w := schemeWord(v); w > 0 {
			return isPlaceholder(v[w:])
		}
		return isSchemeOnly(v) || isPlaceholder(v) // "Bearer " + token
	}
	return isPlaceholder(v)
}

// schemeWord returns the length of a leading auth scheme word and the blanks
// after it ("Bearer ", "token ", "AWS4-HMAC-SHA256 "), or 0 when v is not
// "scheme credential".
func schemeWord(v string) int {
	w := 0
	for w < len(v) && (isAlnum(v[w]) || v[w] == '-' || v[w] == '_') {
		w++
	}
	if w == 0 || !isLetter(v[0]) || w == len(v) || !isBlank(v[w]) {
		return 0
	}
	for w < len(v) && isBlank(v[w]) {
		w++
	}
	if w == len(v) {
		return 0
	}
	return w
}

// isSchemeOnly reports whether v is a lone auth scheme word, maybe followed
// by blanks.
func isSchemeOnly(v string) bool {
	v = strings.TrimRight(v, " \t")
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		if !isLetter(v[i]) && v[i] != '-' {
			return false
		}
	}
	return true
}

// valueRun returns the end of the unquoted value starting at v and whether it
// stopped at an opening bracket, which makes it code.
func (a *assigner) valueRun(v int) (int, bool) {
	if v >= a.codeFrom && v < a.codeTo {
		return a.codeTo, true
	}
	s := a.s
	end := v
	for end < len(s) && !isValueEnd(s[end]) {
		end++
	}
	if end < len(s) && strings.IndexByte("([{<", s[end]) >= 0 {
		a.codeFrom, a.codeTo = v, end
		return end, true
	}
	return end, false
}

func isValueEnd(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f',
		'"', '\'', '`', ',', ';', '&', '|', '\\', ')', ']', '}', '>', '(', '[', '{', '<':
		return true
	}
	return false
}

// headerEnd returns the end of a header value starting at v: the end of the
// line when the header starts its line, else also the first quote, backtick,
// backslash (the header is inside a quoted string or an encoded one) or
// bracket.
func (a *assigner) headerEnd(k keyInfo, v int) int {
	s := a.s
	lineStart := k.quote == 0
	for j := k.start; lineStart && j > 0 && !isEOL(s[j-1]); j-- {
		if !isBlank(s[j-1]) {
			lineStart = false
		}
	}
	end := v
	for end < len(s) && !isEOL(s[end]) {
		if !lineStart && strings.IndexByte("\"'`\\()[]{}<>", s[end]) >= 0 {
			break
		}
		end++
	}
	for end > v && isBlank(s[end-1]) {
		end--
	}
	return end
}

// unquoted handles a bare value.
func (a *assigner) unquoted(k keyInfo, class keyClass, sepEnd, v int, sep sepKind) int {
	s := a.s
	switch class {
	case keyAuthorization:
		return a.authorization(k, sepEnd, v)
	case keyCookie:
		if end, code := a.valueRun(v); !code && strings.IndexByte(s[v:end], '=') > 0 {
			end = a.headerEnd(k, v)
			return a.redact(v, end, a.marker(k))
		}
	}
	if strings.IndexByte("&*!@#", s[v]) >= 0 {
		// YAML anchors, aliases and tags, curl's @file, comments.
		return sepEnd
	}
	end, code := a.valueRun(v)
	if code {
		return sepEnd
	}
	val := s[v:end]
	if isPlaceholder(val) || isReference(val, k.name) || isPath(val) {
		return sepEnd
	}
	switch sep {
	case sepCode, sepDeclare:
		if isVariable(val, sep == sepDeclare) || isHex(val) {
			return sepEnd // self.token = nextchar, token := tok2, SO_COOKIE = 0x39
		}
	case sepColon:
		if a.annotation(end) {
			return sepEnd // password: PasswordType | None = None
		}
		if end < len(s) && strings.IndexByte(",})", s[end]) >= 0 && isVariable(val, false) {
			return sepEnd // Go and JS literals: Config{Token: tokens, PrivateKey: priv}
		}
	}
	switch {
	case class == keyWeak:
		if !credentialLike(val, 8) {
			return sepEnd
		}
	case class == keyRandom:
		if !randomish(val) {
			return sepEnd
		}
	case len(val) < minBareValue || isKeyword(val) || (sep != sepEnv && a.prose(k, val, end)):
		return sepEnd
	}
	return a.redact(v, end, a.marker(k))
}

// isVariable reports whether v is a bare identifier used as a variable:
// after ":=" any identifier, after " = " one without digits (so that the
// INI line "password = hunter2" is still redacted).
func isVariable(v string, anyIdent bool) bool {
	if v == "" || !(isLetter(v[0]) || v[0] == '_') {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !isWordByte(c) || (isDigit(c) && !anyIdent) {
			return false
		}
	}
	return true
}

// isHex reports a hexadecimal literal such as 0x39 or -0x7f.
func isHex(v string) bool {
	v = strings.TrimPrefix(v, "-")
	if len(v) < 3 || v[0] != '0' || (v[1] != 'x' && v[1] != 'X') {
		return false
	}
	for i := 2; i < len(v); i++ {
		if c := v[i] | 0x20; !isDigit(v[i]) && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// annotation reports whether the value that ends at end is followed by a
// lone '=' or '|' between blanks, as the type in "name: Type = default" or
// "name: A | B". (No redacted span can start with "= " or "| ", so the
// verdict does not change once the text after it is redacted.)
func (a *assigner) annotation(end int) bool {
	s := a.s
	j := end
	for j < len(s) && isBlank(s[j]) {
		j++
	}
	return j > end && j+1 < len(s) && (s[j] == '=' || s[j] == '|') && isBlank(s[j+1])
}

// authorization handles "Authorization: <scheme> <credential>" and a bare
// credential. The scheme word stays.
func (a *assigner) authorization(k keyInfo, sepEnd, v int) int {
	s := a.s
	lineEnd := v
	for lineEnd < len(s) && !isEOL(s[lineEnd]) && lineEnd-v < maxQuotedKey {
		lineEnd++
	}
	if w := schemeWord(s[v:lineEnd]); w > 0 {
		r := v + w
		end, _ := a.valueRun(r)
		if first := s[r:end]; isPlaceholder(first) || !credentialLike(first, minBearer) {
			return sepEnd
		}
		end = a.headerEnd(k, r)
		return a.redact(r, end, a.marker(k))
	}
	end, code := a.valueRun(v)
	if code || !credentialLike(s[v:end], minBearer) || isPlaceholder(s[v:end]) {
		return sepEnd
	}
	return a.redact(v, end, a.marker(k))
}

// marker is the replacement of an unquoted value: quoted like its key, so
// that "token": 12345678 stays valid JSON.
func (a *assigner) marker(k keyInfo) string {
	switch {
	case k.esc:
		return `\"` + Marker + `\"`
	case k.quote != 0:
		return string(k.quote) + Marker + string(k.quote)
	}
	return Marker
}

// prose reports whether a letters-only value reads as English: "Password:
// required for login.", "access token: expired", "token = the next word".
func (a *assigner) prose(k keyInfo, val string, end int) bool {
	s := a.s
	word := strings.TrimRight(val, ".!?")
	for i := 0; i < len(word); i++ {
		if !isLetter(word[i]) {
			return false
		}
	}
	if len(word) < len(val) {
		return true // ends a sentence
	}
	j := end
	for j < len(s) && isBlank(s[j]) {
		j++
	}
	if j > end && j < len(s) && isLetter(s[j]) {
		return true // more words follow
	}
	// A word before the key on the same line: "the access token: expired".
	j = k.start
	if j == 0 || !isBlank(s[j-1]) {
		return false
	}
	for j > 0 && isBlank(s[j-1]) {
		j--
	}
	return j > 0 && isLetter(a.e.byteBefore(j))
}

// flag handles "--password value" (a space, not '='; "--password=value" is a
// separator). The value must look like a credential.
func (a *assigner) flag(i int) int {
	s := a.s
	k := i
	for k < len(s) && isKeyChar(s[k]) {
		k++
	}
	class := keyPlain
	if k < len(s) && isBlank(s[k]) {
		class = classifyKey(s[i:k])
	}
	if class == keyPlain {
		return k
	}
	v := k
	for v < len(s) && isBlank(s[v]) {
		v++
	}
	if v >= len(s) || s[v] == '-' {
		return v
	}
	if isQuote(s, v) {
		q, cs, esc := s[v], v+1, false
		if q == '\\' {
			q, cs, esc = '"', v+2, true
		}
		ce, _ := closingQuote(s, cs, q, esc)
		if val := s[cs:ce]; isPlaceholder(val) || !credentialLike(val, minFlagValue) || class == keyRandom && !randomish(val) {
			return v
		}
		return a.redact(cs, ce, Marker)
	}
	end, code := a.valueRun(v)
	val := s[v:end]
	if code || isPlaceholder(val) || strings.IndexByte("&*!@#", s[v]) >= 0 || !credentialLike(val, minFlagValue) ||
		class == keyRandom && !randomish(val) {
		return v
	}
	return a.redact(v, end, Marker)
}

// xmlElement handles <password>value</password> at the '>' of the start tag.
func (a *assigner) xmlElement(i int) int {
	s := a.s
	k := i
	for k > 0 && isKeyChar(s[k-1]) {
		k--
	}
	if k == i || k == 0 || s[k-1] != '<' || k-1 < a.consumed {
		return i + 1
	}
	class := classifyKey(s[k:i])
	if class == keyPlain {
		return i + 1
	}
	v := i + 1
	end := v
	for end < len(s) && s[end] != '<' && !isEOL(s[end]) {
		end++
	}
	if end >= len(s) || s[end] != '<' {
		return i + 1
	}
	v, end = trimXML(s, v, end)
	val := s[v:end]
	if len(val) < minBareValue || isPlaceholder(val) || (class == keyWeak && !credentialLike(val, 8)) || (class == keyRandom && !randomish(val)) {
		return i + 1
	}
	return a.redact(v, end, Marker)
}

// isKeyword reports literals and type names that sit where a value would:
// token = None, password: str, secret: true.
func isKeyword(v string) bool {
	if len(v) > 9 {
		return false
	}
	var buf [9]byte
	for i := 0; i < len(v); i++ {
		c := v[i]
		if isUpper(c) {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	switch string(buf[:len(v)]) {
	case "null", "nil", "none", "true", "false", "undefined", "yes", "no", "on", "off",
		"empty", "string", "str", "bytes", "bool", "boolean", "int", "integer", "number",
		"any", "object", "optional", "required", "redacted", "hidden", "masked", "omitted",
		"unset", "default", "auto", "prompt", "stdin", "secretstr", "read", "write":
		return true
	}
	return false
}

// isReference reports whether v is code that refers to a secret instead of
// holding one: a dotted path of words (self.token, cfg.Password,
// os.environ.TOKEN, Config::TOKEN) or an identifier that names a secret and
// reads as a name — the tail of the key (password=password,
// self.api_key = api_key) or built of words (accessToken, DB_PASSWORD).
// A word has digits only at its end (v1, sha256, NL80211_ATTR), so
// "hvs.CAESIJ9x2..." is not a path.
func isReference(v, key string) bool {
	segs := 0
	for i := 0; i < len(v); {
		if !isLetter(v[i]) && v[i] != '_' {
			return false
		}
		digit := false
		for i < len(v) && isWordByte(v[i]) {
			switch {
			case v[i] == '_':
				digit = false
			case isDigit(v[i]):
				digit = true
			case digit:
				return false
			}
			i++
		}
		segs++
		switch {
		case i == len(v):
		case v[i] == '.' && i+1 < len(v):
			i++
		case strings.HasPrefix(v[i:], "::") && i+2 < len(v):
			i += 2
		default:
			return false
		}
	}
	if segs >= 2 {
		return true
	}
	if c := classifyKey(v); c == keyPlain || c == keyRandom {
		return false
	}
	var kb, vb [maxKeyNorm]byte
	kn, _ := normKey(key, kb[:])
	vn, _ := normKey(v, vb[:])
	if hasSuffix(kn, string(vn)) || strings.IndexByte(v, '_') >= 0 {
		return true
	}
	for i := 1; i < len(v); i++ {
		if isLower(v[i-1]) && isUpper(v[i]) {
			return true
		}
	}
	return false
}

// isPath reports a file system path: /run/secrets/db, ./token.txt,
// ~/.config/gh/hosts.yml.
func isPath(v string) bool {
	switch {
	case strings.HasPrefix(v, "/"), strings.HasPrefix(v, "./"),
		strings.HasPrefix(v, "../"), strings.HasPrefix(v, "~/"):
	default:
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !isAlnum(c) && strings.IndexByte("._/~-", c) < 0 {
			return false
		}
	}
	last := strings.LastIndexByte(v, '/')
	return strings.Count(v, "/") >= 2 || strings.IndexByte(v[last:], '.') >= 0
}

// trimXML trims blanks and the escapes \n, \r and \t (XML inside an
// encoded string) from both ends of s[v:end].
func trimXML(s string, v, end int) (int, int) {
	for v < end {
		if isBlank(s[v]) {
			v++
		} else if s[v] == '\\' && v+1 < end && strings.IndexByte("nrt", s[v+1]) >= 0 {
			v += 2
		} else {
			break
		}
	}
	for end > v {
		if isBlank(s[end-1]) {
			end--
		} else if end-2 >= v && s[end-2] == '\\' && strings.IndexByte("nrt", s[end-1]) >= 0 {
			end -= 2
		} else {
			break
		}
	}
	return v, end
}
