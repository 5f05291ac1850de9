package memory

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Bytes is binary data. On the wire it is a JSON array of integers 0-255,
// the upstream CMP encoding; on input a base64 string is accepted as well,
// because it is a third the size.
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

// UnmarshalJSON reads an integer array or a base64 (standard or URL
// alphabet, padded or not) string.
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
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return errBytesShape
		}
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			if v, err := enc.DecodeString(s); err == nil {
				*b = v
				return nil
			}
		}
		return fmt.Errorf("invalid base64 string: %w", errBytesShape)
	case '[':
		return b.parseArray(data)
	default:
		return errBytesShape
	}
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
