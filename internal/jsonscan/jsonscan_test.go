package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestTokensAgreeWithEncodingJSON: every token a Scanner accepts alone is
// valid JSON, and the invalid ones it is given are refused.
func TestTokensAgreeWithEncodingJSON(t *testing.T) {
	for _, tc := range []struct {
		in   string
		read func(*Scanner) bool
	}{
		{`"plain"`, func(s *Scanner) bool { _, _, ok := s.StrToken(); return ok }},
		{`"tab\tand \u00e9 \/"`, func(s *Scanner) bool { _, _, ok := s.StrToken(); return ok }},
		{`"bad \x escape"`, func(s *Scanner) bool { _, _, ok := s.StrToken(); return ok }},
		{`"short \u00e"`, func(s *Scanner) bool { _, _, ok := s.StrToken(); return ok }},
		{"\"raw \x01 control\"", func(s *Scanner) bool { _, _, ok := s.StrToken(); return ok }},
		{`"unterminated`, func(s *Scanner) bool { _, _, ok := s.StrToken(); return ok }},
		{`-0.5e+10`, func(s *Scanner) bool { _, ok := s.Number(); return ok }},
		{`0`, func(s *Scanner) bool { _, ok := s.Number(); return ok }},
		{`-`, func(s *Scanner) bool { _, ok := s.Number(); return ok }},
		{`1.`, func(s *Scanner) bool { _, ok := s.Number(); return ok }},
		{`2e`, func(s *Scanner) bool { _, ok := s.Number(); return ok }},
		{`{"a": [1, {"b": null}], "c": "d"}`, (*Scanner).Skip},
		{`[1,2,3]`, (*Scanner).Skip},
		{`[1,02]`, (*Scanner).Skip},
		{`{"a" 1}`, (*Scanner).Skip},
		{`tru`, (*Scanner).Skip},
		{`false`, (*Scanner).Skip},
	} {
		s := Scanner{Data: []byte(tc.in)}
		got := tc.read(&s) && s.End()
		if want := json.Valid([]byte(tc.in)); got != want {
			t.Errorf("%q: scanner %v, encoding/json valid %v", tc.in, got, want)
		}
	}
}

// TestSkipDepthBounded: nesting past 64 is refused, not followed.
func TestSkipDepthBounded(t *testing.T) {
	for depth, want := range map[int]bool{64: true, 66: false, 100_000: false} {
		s := Scanner{Data: []byte(strings.Repeat("[", depth) + strings.Repeat("]", depth))}
		if got := s.Skip(); got != want {
			t.Errorf("depth %d: Skip %v, want %v", depth, got, want)
		}
	}
}

// TestObjectRefusesRepeatedKeys: a repeated key or an escaped key fails
// the object, so the caller hands the input to encoding/json.
func TestObjectRefusesRepeatedKeys(t *testing.T) {
	for in, want := range map[string]bool{
		`{"a": 1, "b": 2}`: true,
		`{"a": 1, "a": 2}`: false,
		`{"\u0061": 1}`:    false,
		`{}`:               true,
		`{"a": 1,}`:        false,
		`{"a": 1 "b": 2}`:  false,
	} {
		s := Scanner{Data: []byte(in)}
		var keys []string
		got := s.Object(func(key []byte) bool {
			keys = append(keys, string(key))
			var f float64
			return s.Float(&f, 64)
		}) && s.End()
		if got != want {
			t.Errorf("%s: Object %v (keys %q), want %v", in, got, keys, want)
		}
	}
}

// TestArrayNull: null is an empty array that says so.
func TestArrayNull(t *testing.T) {
	s := Scanner{Data: []byte(` null `)}
	isNull := false
	if !s.Array(&isNull, func() bool { return false }) || !isNull || !s.End() {
		t.Fatalf("null: isNull %v, pos %d", isNull, s.Pos)
	}
	s = Scanner{Data: []byte(`[1, 2, 3]`)}
	var sum uint32
	if !s.Array(nil, func() bool { var n uint32; ok := s.Uint32(&n); sum += n; return ok }) || sum != 6 {
		t.Fatalf("[1, 2, 3]: sum %d", sum)
	}
}

// TestRawReturnsOneValue: Raw stops at the end of the value, inside an
// object or an array.
func TestRawReturnsOneValue(t *testing.T) {
	for in, want := range map[string]string{
		`{"a": [1, "]"]}, 2`: `{"a": [1, "]"]}`,
		`"x,y", 3`:           `"x,y"`,
		`12}`:                `12`,
		`true]`:              `true`,
	} {
		s := Scanner{Data: []byte(in)}
		got, ok := s.Raw()
		if !ok || string(got) != want {
			t.Errorf("%s: Raw %q %v, want %q", in, got, ok, want)
		}
	}
}

// TestTimeAgreesWithEncodingJSON: Time reads what json.Unmarshal reads
// into a time.Time, zone included, null leaves the time as it was, and
// what json.Unmarshal refuses is refused.
func TestTimeAgreesWithEncodingJSON(t *testing.T) {
	before := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, in := range []string{
		`"2026-05-01T09:30:00Z"`,
		`"2026-05-01T09:30:00.123456789+05:30"`,
		`null`,
		`"2026-05-01"`,
		`"2026-05-01T09:30:00\u005a"`,
		`12`,
	} {
		want, got := before, before
		wantErr := json.Unmarshal([]byte(in), &want)
		s := Scanner{Data: []byte(in)}
		ok := s.Time(&got) && s.End()
		if ok != (wantErr == nil) || ok && !got.Equal(want) || ok && got.Location().String() != want.Location().String() {
			t.Errorf("%s: Time %v %v, json.Unmarshal %v %v", in, got, ok, want, wantErr)
		}
	}
}

// TestByteArrayAgreesWithEncodingJSON: ByteArray reads an array of byte
// values as json.Unmarshal reads it into integers, white space included,
// appending to what it is given, and refuses what is not valid JSON or
// holds a value that is not a byte.
func TestByteArrayAgreesWithEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`[]`, `[ ]`, `[0]`, `[104,105]`, `[ 1 , 2 ,3 ]`, "[\n255,\t0]",
		`[256]`, `[-1]`, `[01]`, `[1.5]`, `[1e2]`, `[1,]`, `[,1]`, `[1 2]`, `[1`, `null`, `"aGk="`, `[[1]]`,
	} {
		var ints []int
		wantOK := json.Unmarshal([]byte(in), &ints) == nil && len(in) > 0 && in[0] == '['
		var want []byte
		for _, v := range ints {
			if v < 0 || v > 255 {
				wantOK = false
			}
			want = append(want, byte(v))
		}
		s := Scanner{Data: []byte(in)}
		got, ok := s.ByteArray([]byte("x"))
		ok = ok && s.End()
		if ok != wantOK || ok && string(got) != "x"+string(want) {
			t.Errorf("%s: ByteArray %q %v, want %q %v", in, got, ok, want, wantOK)
		}
	}
}
