package memory

import (
	"strconv"
	"unicode/utf8"
)

// MaxQuoteBytes is the longest prefix of a client's input an error
// message quotes.
const MaxQuoteBytes = 64

// MaxMessageBytes bounds the message of an error a transport sends back:
// longer messages are cut (CutMessage). Messages quote client input only
// through Quote, so the cut is a second line of defence.
const MaxMessageBytes = 2048

// Quote returns s quoted as %q does when it is at most MaxQuoteBytes long;
// a longer s is cut at a character boundary and its length given, so an
// error message never echoes a large input back:
//
//	"0123456789…" (100000 bytes)
func Quote(s string) string {
	if len(s) <= MaxQuoteBytes {
		return strconv.Quote(s)
	}
	n := MaxQuoteBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strconv.Quote(s[:n]+"…") + " (" + strconv.Itoa(len(s)) + " bytes)"
}

// CutMessage returns msg cut to at most MaxMessageBytes at a character
// boundary, marked with "…" when cut.
func CutMessage(msg string) string {
	if len(msg) <= MaxMessageBytes {
		return msg
	}
	n := MaxMessageBytes - len("…")
	for n > 0 && !utf8.RuneStart(msg[n]) {
		n--
	}
	return msg[:n] + "…"
}
