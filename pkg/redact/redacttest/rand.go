package redacttest

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
)

// Alphabets the generators draw from.
const (
	digits     = "0123456789"
	lowerHex   = "0123456789abcdef"
	upperHex   = "0123456789ABCDEF"
	lowers     = "abcdefghijklmnopqrstuvwxyz"
	uppers     = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	alnum      = uppers + lowers + digits
	lowerAlnum = lowers + digits
	upperAlnum = uppers + digits
	b64url     = alnum + "-_"
	b64        = alnum + "+/"
	base32     = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	bech32     = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
	// pwChars are the bytes of generated passwords: letters, digits and
	// the symbols people put in passwords (no quotes, backslashes or
	// white space, which would change how a line is parsed).
	pwChars = alnum + "!#%*+-.=?@^_~"
)

// gen is a seeded source of fake secrets.
type gen struct{ r *rand.Rand }

func newGen(seed uint64) *gen { return &gen{r: rand.New(rand.NewPCG(seed, 0x5ec7e75))} }

// str returns n bytes drawn from alphabet. Runs of 12 or more bytes from an
// alphabet with letters and digits always hold at least one digit, one
// upper-case and one lower-case letter where the alphabet has them, as real
// tokens almost always do.
func (g *gen) str(alphabet string, n int) string {
	for {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[g.r.IntN(len(alphabet))]
		}
		s := string(b)
		if n < 12 || mixedEnough(s, alphabet) {
			return s
		}
	}
}

func mixedEnough(s, alphabet string) bool {
	need := func(class string) bool {
		return strings.ContainsAny(alphabet, class) && !strings.ContainsAny(s, class)
	}
	return !need(digits) && !need(uppers) && !need(lowers)
}

// password returns a password of n bytes with at least one digit and one
// symbol.
func (g *gen) password(n int) string {
	for {
		s := g.str(uppers+lowers, 1) + g.str(pwChars, n-1)
		if strings.ContainsAny(s, digits) && strings.ContainsAny(s, "!#%*+-.=?@^_~") && strings.ContainsAny(s, lowers) {
			return s
		}
	}
}

// uuid returns a random version 4 UUID in lower case.
func (g *gen) uuid() string {
	h := g.str(lowerHex, 32)
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:]
}

// pick returns one of the options.
func (g *gen) pick(options ...string) string { return options[g.r.IntN(len(options))] }

// b64Of returns the standard base64 of s.
func b64Of(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
