package memory

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Bytes is binary data. On the wire it is a JSON array of integers 0-255,
// the upstream CMP encoding, unless the answer is asked for in
// BinaryBase64; on input a base64 string is accepted as well, because it
// is about a third the size.
type Bytes []byte

// MarshalJSON writes the integer-array form. An empty or nil value is [].
func (b Bytes) MarshalJSON() ([]byte, error) {
	out := make([]byte, 0, 2+4*len(b))
	out = append(out, '[')
	for i, c := range b {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendUint(out, uint64(c), 10)
	}
	return append(out, ']'), nil
}

var errBytesShape = errors.New("want an array of integers 0-255 or a base64 string")

// UnmarshalJSON reads an integer array or a base64 string: standard
// padded (memsvc's BinaryBase64), or unpadded, or in the URL alphabet.
func (b *Bytes) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return errBytesShape
	}
	switch data[0] {
	case 'n':
		if string(data) != "null" {
			return errBytesShape
		}
		*b = nil
		return nil
	case '"':
		return b.parseString(data)
	case '[':
		return b.parseArray(data)
	default:
		return errBytesShape
	}
}

// parseString reads a base64 string (data is a JSON string token). A
// string without escapes, which is every base64 string a client means,
// is decoded where it lies; one with escapes is unquoted by
// encoding/json first.
func (b *Bytes) parseString(data []byte) error {
	if len(data) < 2 || data[len(data)-1] != '"' {
		return errBytesShape
	}
	s := data[1 : len(data)-1]
	if bytes.IndexByte(s, '\\') >= 0 {
		var str string
		if err := json.Unmarshal(data, &str); err != nil {
			return errBytesShape
		}
		s = []byte(str)
	}
	v, ok := decodeBase64(s)
	if !ok {
		return fmt.Errorf("invalid base64 string: %w", errBytesShape)
	}
	*b = v
	return nil
}

// parseArray is a hand-written scanner for the integer array: it is the
// hot path of every encode request and an order of magnitude faster than
// decoding into []int first.
func (b *Bytes) parseArray(data []byte) error {
	out := make([]byte, 0, len(data)/3)
	i := 1
	skip := func() {
		for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
			i++
		}
	}
	skip()
	if i < len(data) && data[i] == ']' {
		i++
		skip()
		if i != len(data) {
			return errBytesShape
		}
		*b = out
		return nil
	}
	for {
		skip()
		start := i
		v := 0
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			v = v*10 + int(data[i]-'0')
			if v > 255 {
				return fmt.Errorf("byte value out of range at offset %d: %w", start, errBytesShape)
			}
			i++
		}
		if i == start {
			return fmt.Errorf("unexpected character at offset %d: %w", i, errBytesShape)
		}
		if i-start > 1 && data[start] == '0' {
			return fmt.Errorf("leading zero at offset %d: %w", start, errBytesShape)
		}
		out = append(out, byte(v))
		skip()
		if i >= len(data) {
			return errBytesShape
		}
		switch data[i] {
		case ',':
			i++
		case ']':
			i++
			skip()
			if i != len(data) {
				return errBytesShape
			}
			*b = out
			return nil
		default:
			return fmt.Errorf("unexpected character at offset %d: %w", i, errBytesShape)
		}
	}
}

// JSON holds a free-form JSON value (record metadata, spatial cues) as
// compact bytes. The empty value marshals as {}, which is what a record
// without metadata shows.
type JSON []byte

// MarshalJSON writes the value, or {} when it is empty.
func (j JSON) MarshalJSON() ([]byte, error) {
	if len(j) == 0 {
		return []byte("{}"), nil
	}
	return j, nil
}

// UnmarshalJSON keeps a compact copy; null becomes empty.
func (j *JSON) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if string(data) == "null" {
		*j = nil
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, data); err != nil {
		return err
	}
	*j = JSON(buf.Bytes())
	return nil
}

// IsObject reports whether the value is a JSON object (empty counts as the
// empty object).
func (j JSON) IsObject() bool {
	t := bytes.TrimSpace(j)
	return len(t) == 0 || t[0] == '{'
}
