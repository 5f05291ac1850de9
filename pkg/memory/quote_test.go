package memory

import (
	"strings"
	"testing"
)

// TestQuote: short input is quoted whole, long input as a prefix with its
// length, cut at a character boundary.
func TestQuote(t *testing.T) {
	if got := Quote("abc"); got != `"abc"` {
		t.Errorf("Quote(abc) = %s", got)
	}
	long := strings.Repeat("x", 100_000)
	got := Quote(long)
	if len(got) > 2*MaxQuoteBytes || !strings.Contains(got, "(100000 bytes)") {
		t.Errorf("Quote(100 KB) = %s", got)
	}
	// A multi-byte character across the cut is not split.
	s := strings.Repeat("a", MaxQuoteBytes-1) + "é" + strings.Repeat("b", 10)
	if got := Quote(s); strings.Contains(got, `\x`) {
		t.Errorf("Quote split a character: %s", got)
	}
	if got := CutMessage(strings.Repeat("é", MaxMessageBytes)); len(got) > MaxMessageBytes || strings.Contains(got, "\ufffd") {
		t.Errorf("CutMessage: %d bytes", len(got))
	}
	if msg := "short"; CutMessage(msg) != msg {
		t.Error("CutMessage changed a short message")
	}
}

// TestParseErrorsQuoteAPrefix: the model's parse errors quote at most a
// prefix of a large input.
func TestParseErrorsQuoteAPrefix(t *testing.T) {
	big := strings.Repeat("z", 100_000)
	_, err1 := ParseID(big)
	_, err2 := ParseStoreType(big)
	_, err3 := ParseMetaJSON("meta", `{"`+big+`":1}`)
	_, err4 := ParseEmotionLabel(big)
	for i, err := range []error{err1, err2, err3, err4} {
		if err == nil || len(err.Error()) > 1000 {
			t.Errorf("error %d: %d bytes", i+1, len(err.Error()))
		}
	}
}
