// Package jsonscan reads JSON a token at a time, strictly, for the fast
// paths that decode recall answers without encoding/json (pkg/memory's
// decoder of whole answers, pkg/mcpproxy's reader of the fields its recall
// tool shows). A Scanner never guesses: each method reports whether the
// next value is what it expects, and a caller that gets false abandons its
// parse and hands the whole input to encoding/json, whose results and
// errors then stand. It is standard library only, so the model package
// may use it.
package jsonscan

import (
	"encoding"
	"strconv"
	"time"
	"unicode/utf8"
)

// Scanner is a position in Data. Methods skip white space before a value
// and move Pos past what they read.
type Scanner struct {
	Data []byte
	Pos  int
}

// WS skips white space.
func (s *Scanner) WS() {
	for s.Pos < len(s.Data) {
		switch s.Data[s.Pos] {
		case ' ', '\t', '\n', '\r':
			s.Pos++
		default:
			return
		}
	}
}

// Peek returns the next byte after white space, 0 at the end.
func (s *Scanner) Peek() byte {
	s.WS()
	if s.Pos < len(s.Data) {
		return s.Data[s.Pos]
	}
	return 0
}

// Lit consumes c after white space.
func (s *Scanner) Lit(c byte) bool {
	if s.Peek() != c {
		return false
	}
	s.Pos++
	return true
}

// Null consumes null.
func (s *Scanner) Null() bool { return s.word("null") }

func (s *Scanner) word(w string) bool {
	s.WS()
	if len(s.Data)-s.Pos >= len(w) && string(s.Data[s.Pos:s.Pos+len(w)]) == w {
		s.Pos += len(w)
		return true
	}
	return false
}

// Bool reads true or false; anything else, null included, is refused.
func (s *Scanner) Bool(out *bool) bool {
	switch {
	case s.word("true"):
		*out = true
	case s.word("false"):
		*out = false
	default:
		return false
	}
	return true
}

// End reports whether only white space is left.
func (s *Scanner) End() bool {
	s.WS()
	return s.Pos == len(s.Data)
}

// StrToken returns the next string token, quotes included, and whether it
// holds escapes. Escapes are checked against JSON's grammar; control
// characters fail it.
func (s *Scanner) StrToken() (tok []byte, escaped, ok bool) {
	if s.Peek() != '"' {
		return nil, false, false
	}
	b := s.Data
	for j := s.Pos + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			tok = b[s.Pos : j+1]
			s.Pos = j + 1
			return tok, escaped, true
		case c == '\\':
			escaped = true
			j++
			if j >= len(b) {
				return nil, false, false
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(b) {
					return nil, false, false
				}
				for _, h := range b[j+1 : j+5] {
					if !isHex(h) {
						return nil, false, false
					}
				}
				j += 4
			default:
				return nil, false, false
			}
		case c < 0x20:
			return nil, false, false
		}
	}
	return nil, false, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// PlainString returns the next string, without its quotes, when it has
// neither escapes nor invalid UTF-8 (which decoders treat specially).
func (s *Scanner) PlainString() ([]byte, bool) {
	tok, escaped, ok := s.StrToken()
	if !ok || escaped || !utf8.Valid(tok) {
		return nil, false
	}
	return tok[1 : len(tok)-1], true
}

// Text reads the next string into v with its UnmarshalText, as
// encoding/json does for a TextUnmarshaler; null leaves v as it is.
func (s *Scanner) Text(v encoding.TextUnmarshaler) bool {
	if s.Null() {
		return true
	}
	str, ok := s.PlainString()
	return ok && v.UnmarshalText(str) == nil
}

// Time reads the next string into t with time.Time's UnmarshalJSON, as
// encoding/json does; null leaves t as it is.
func (s *Scanner) Time(t *time.Time) bool {
	if s.Null() {
		return true
	}
	tok, _, ok := s.StrToken()
	return ok && t.UnmarshalJSON(tok) == nil
}

// Number returns the next number token, checked against JSON's grammar.
func (s *Scanner) Number() ([]byte, bool) {
	s.WS()
	b, j := s.Data, s.Pos
	if j < len(b) && b[j] == '-' {
		j++
	}
	digits := func() bool {
		k := j
		for j < len(b) && '0' <= b[j] && b[j] <= '9' {
			j++
		}
		return j > k
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case !digits():
		return nil, false
	}
	if j < len(b) && b[j] == '.' {
		j++
		if !digits() {
			return nil, false
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if !digits() {
			return nil, false
		}
	}
	tok := b[s.Pos:j]
	s.Pos = j
	return tok, true
}

// Float reads the next number as a float of bits (32 or 64) bits.
func (s *Scanner) Float(out *float64, bits int) bool {
	tok, ok := s.Number()
	if !ok {
		return false
	}
	f, err := strconv.ParseFloat(string(tok), bits)
	*out = f
	return err == nil
}

// Uint32 reads the next number as an unsigned 32-bit integer.
func (s *Scanner) Uint32(out *uint32) bool {
	tok, ok := s.Number()
	if !ok {
		return false
	}
	n, err := strconv.ParseUint(string(tok), 10, 32)
	*out = uint32(n)
	return err == nil
}

// Object parses an object, calling field with each key; field parses the
// value and reports false for a key it does not know. A key must be a
// plain string, and a repeated key, or more than 16 keys, fails it:
// encoding/json decodes a repeated key into what the first one filled,
// and rather than imitate that such input goes to it.
func (s *Scanner) Object(field func(key []byte) bool) bool {
	if !s.Lit('{') {
		return false
	}
	if s.Lit('}') {
		return true
	}
	var seen [16][]byte
	n := 0
	for {
		key, ok := s.PlainString()
		if !ok || n == len(seen) {
			return false
		}
		for _, k := range seen[:n] {
			if string(k) == string(key) {
				return false
			}
		}
		seen[n] = key
		n++
		if !s.Lit(':') || !field(key) {
			return false
		}
		if s.Lit('}') {
			return true
		}
		if !s.Lit(',') {
			return false
		}
	}
}

// Array parses an array, calling item for each element, or null (and then
// sets *isNull, unless isNull is nil).
func (s *Scanner) Array(isNull *bool, item func() bool) bool {
	if s.Null() {
		if isNull != nil {
			*isNull = true
		}
		return true
	}
	if !s.Lit('[') {
		return false
	}
	if s.Lit(']') {
		return true
	}
	for {
		if !item() {
			return false
		}
		if s.Lit(']') {
			return true
		}
		if !s.Lit(',') {
			return false
		}
	}
}

// maxSkipDepth bounds the nesting of a skipped value.
const maxSkipDepth = 64

// Skip passes over the next value, checking that it is well-formed JSON
// (nested at most 64 deep).
func (s *Scanner) Skip() bool { return s.skip(0) }

func (s *Scanner) skip(depth int) bool {
	c := s.Peek()
	if s.Pos >= len(s.Data) || depth > maxSkipDepth {
		return false
	}
	switch {
	case c == '[' && s.skipUints():
		return true
	case c == '{' || c == '[':
		s.Pos++
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		if s.Lit(closing) {
			return true
		}
		for {
			if c == '{' {
				if _, _, ok := s.StrToken(); !ok || !s.Lit(':') {
					return false
				}
			}
			if !s.skip(depth + 1) {
				return false
			}
			if s.Lit(closing) {
				return true
			}
			if !s.Lit(',') {
				return false
			}
		}
	case c == '"':
		_, _, ok := s.StrToken()
		return ok
	case c == '-' || '0' <= c && c <= '9':
		_, ok := s.Number()
		return ok
	default:
		return s.word("null") || s.word("true") || s.word("false")
	}
}

// ByteArray reads an array of integers from 0 to 255, such as content
// data, in one pass, appending the values to dst; anything else (another
// number, null, a string) is refused.
func (s *Scanner) ByteArray(dst []byte) ([]byte, bool) {
	if !s.Lit('[') {
		return nil, false
	}
	if s.Lit(']') {
		return dst, true
	}
	b := s.Data
	for {
		s.WS()
		j, v := s.Pos, 0
		for j < len(b) && '0' <= b[j] && b[j] <= '9' {
			v = v*10 + int(b[j]-'0')
			if v > 255 {
				return nil, false
			}
			j++
		}
		if j == s.Pos || j-s.Pos > 1 && b[s.Pos] == '0' {
			return nil, false
		}
		dst = append(dst, byte(v))
		s.Pos = j
		if j < len(b) && b[j] == ',' { // the common case, without white space
			s.Pos++
			continue
		}
		if s.Lit(']') {
			return dst, true
		}
		if !s.Lit(',') {
			return nil, false
		}
	}
}

// skipUints passes over an array of unsigned integers without white
// space, such as content data, and reports whether it did; it moves
// nothing when the array is anything else.
func (s *Scanner) skipUints() bool {
	b, j := s.Data, s.Pos+1
	if j < len(b) && b[j] == ']' {
		s.Pos = j + 1
		return true
	}
	for j < len(b) {
		k := j
		for j < len(b) && '0' <= b[j] && b[j] <= '9' {
			j++
		}
		if j == k || j-k > 1 && b[k] == '0' || j == len(b) {
			return false
		}
		switch b[j] {
		case ',':
			j++
		case ']':
			s.Pos = j + 1
			return true
		default:
			return false
		}
	}
	return false
}

// Raw returns the next value, whatever it is, unchecked but for its
// strings and brackets, for encoding/json to decode (which checks it).
func (s *Scanner) Raw() ([]byte, bool) {
	s.WS()
	start, depth := s.Pos, 0
	for s.Pos < len(s.Data) {
		c := s.Data[s.Pos]
		switch {
		case c == '"':
			if _, _, ok := s.StrToken(); !ok {
				return nil, false
			}
		case c == '{' || c == '[':
			depth++
			s.Pos++
		case c == '}' || c == ']':
			if depth == 0 { // the end of the enclosing value
				return s.Data[start:s.Pos], s.Pos > start
			}
			depth--
			s.Pos++
		case c == ',' && depth == 0:
			return s.Data[start:s.Pos], s.Pos > start
		default:
			s.Pos++
		}
		if depth == 0 && (c == '"' || c == '}' || c == ']') {
			return s.Data[start:s.Pos], true
		}
	}
	return s.Data[start:s.Pos], depth == 0 && s.Pos > start
}
