package redact

import "strings"

const (
	pemBegin  = "-----BEGIN "
	pemEnd    = "-----END "
	pemDashes = "-----"
	// maxPEMLabel bounds the label between BEGIN and the closing dashes.
	maxPEMLabel = 64
	// minPEMFirstLine is the shortest first body line that counts as key
	// material; base64 lines of real keys are 64 or 70 bytes.
	minPEMFirstLine = 16
)

// redactPrivateKeys replaces PEM private key blocks (RSA, EC, DSA, OPENSSH,
// ENCRYPTED, PKCS#8, PGP ... PRIVATE KEY [BLOCK]) with PrivateKeyMarker.
//
// A block is the BEGIN line, the body and the END line. The body is a run of
// base64 lines and "Name: value" header lines separated by white space or by
// the escapes \n, \r and \t (keys pasted into JSON or logs). A header followed
// by key material but no END line (truncated output) is redacted through the
// end of its body. A bare header with no body, as in code that looks for one
// (strings.HasPrefix(s, "-----BEGIN RSA PRIVATE KEY-----")), is left alone.
func redactPrivateKeys(s string) string {
	if !strings.Contains(s, pemBegin) {
		return s
	}
	e := editor{src: s}
	for i := 0; ; {
		k := strings.Index(s[i:], pemBegin)
		if k < 0 {
			break
		}
		start := i + k
		end, ok := privateKeyBlock(s, start)
		if !ok {
			i = start + 1
			continue
		}
		e.replace(start, end, PrivateKeyMarker)
		i = end
	}
	return e.String()
}

// pemBoundary parses "-----<word> <LABEL>-----" at s[i:] and returns its end
// when the label names a private key.
func pemBoundary(s string, i int, word string) (int, bool) {
	j := i + len(pemDashes) + len(word) + 1
	k := j
	for k < len(s) && k-j <= maxPEMLabel && (isUpper(s[k]) || isDigit(s[k]) || s[k] == ' ') {
		k++
	}
	if !strings.HasPrefix(s[k:], pemDashes) {
		return 0, false
	}
	label := s[j:k]
	if !strings.HasSuffix(label, "PRIVATE KEY") && !strings.HasSuffix(label, "PRIVATE KEY BLOCK") {
		return 0, false
	}
	return k + len(pemDashes), true
}

func privateKeyBlock(s string, start int) (int, bool) {
	pos, ok := pemBoundary(s, start, "BEGIN")
	if !ok {
		return 0, false
	}
	bodyEnd := -1
	for {
		p := skipPEMSpace(s, pos)
		if strings.HasPrefix(s[p:], pemEnd) {
			if end, ok := pemBoundary(s, p, "END"); ok {
				return end, true
			}
			break
		}
		q := p
		for q < len(s) && isPEMBodyChar(s[q]) && !isPEMBoundary(s, q) {
			q++
		}
		if q == p {
			break
		}
		if bodyEnd < 0 && q-p < minPEMFirstLine && !(s[q-1] == ':' && q < len(s) && isBlank(s[q])) {
			// Prose or code after a header that is only mentioned. A
			// short first line must be a header line ("Proc-Type: ...").
			return 0, false
		}
		bodyEnd, pos = q, q
		if q < len(s) && skipPEMSpace(s, q) == q && !isPEMBoundary(s, q) {
			// The body runs into something that is not key material, as in
			// a truncated key inside a quoted string.
			break
		}
	}
	if bodyEnd < 0 {
		return 0, false
	}
	return bodyEnd, true
}

// isPEMBodyChar covers base64 and the header lines of encrypted PEM and
// armored PGP keys (Proc-Type: 4,ENCRYPTED; DEK-Info: AES-128-CBC,0F...;
// Version: ...).
func isPEMBodyChar(c byte) bool {
	return isAlnum(c) || c == '+' || c == '/' || c == '=' || c == ':' || c == ',' || c == '-' || c == '.'
}

// skipPEMSpace skips white space and the escape sequences \n, \r and \t.
func skipPEMSpace(s string, i int) int {
	for i < len(s) {
		switch {
		case isSpace(s[i]):
			i++
		case s[i] == '\\' && i+1 < len(s) && (s[i+1] == 'n' || s[i+1] == 'r' || s[i+1] == 't'):
			i += 2
		default:
			return i
		}
	}
	return i
}

// isPEMBoundary reports whether a BEGIN or END line starts at s[i:]. Body
// lines stop there and nowhere else in a run of dashes, so that the body of
// a block does not depend on whether the next block has been redacted yet.
func isPEMBoundary(s string, i int) bool {
	return strings.HasPrefix(s[i:], pemBegin) || strings.HasPrefix(s[i:], pemEnd)
}
