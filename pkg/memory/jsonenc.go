package memory

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// The appenders below write values exactly as encoding/json writes them
// (json.Marshal, with its HTML escaping), without reflection and without
// the re-scan encoding/json gives the output of every MarshalJSON. They
// are the building blocks of the hand-written encoders of the records and
// answers (recalljson.go); the tests compare those with encoding/json
// byte for byte.

// byteJSON holds, for every byte value, its decimal digits followed by a
// comma, packed little-endian in the low 32 bits, and the length of that
// text in the bits above: content bytes go on the wire as integer arrays,
// and a table lookup and one 4-byte store per byte beat formatting each.
var byteJSON = [256]uint64{
	0x200002c30, 0x200002c31, 0x200002c32, 0x200002c33, 0x200002c34, 0x200002c35, 0x200002c36, 0x200002c37,
	0x200002c38, 0x200002c39, 0x3002c3031, 0x3002c3131, 0x3002c3231, 0x3002c3331, 0x3002c3431, 0x3002c3531,
	0x3002c3631, 0x3002c3731, 0x3002c3831, 0x3002c3931, 0x3002c3032, 0x3002c3132, 0x3002c3232, 0x3002c3332,
	0x3002c3432, 0x3002c3532, 0x3002c3632, 0x3002c3732, 0x3002c3832, 0x3002c3932, 0x3002c3033, 0x3002c3133,
	0x3002c3233, 0x3002c3333, 0x3002c3433, 0x3002c3533, 0x3002c3633, 0x3002c3733, 0x3002c3833, 0x3002c3933,
	0x3002c3034, 0x3002c3134, 0x3002c3234, 0x3002c3334, 0x3002c3434, 0x3002c3534, 0x3002c3634, 0x3002c3734,
	0x3002c3834, 0x3002c3934, 0x3002c3035, 0x3002c3135, 0x3002c3235, 0x3002c3335, 0x3002c3435, 0x3002c3535,
	0x3002c3635, 0x3002c3735, 0x3002c3835, 0x3002c3935, 0x3002c3036, 0x3002c3136, 0x3002c3236, 0x3002c3336,
	0x3002c3436, 0x3002c3536, 0x3002c3636, 0x3002c3736, 0x3002c3836, 0x3002c3936, 0x3002c3037, 0x3002c3137,
	0x3002c3237, 0x3002c3337, 0x3002c3437, 0x3002c3537, 0x3002c3637, 0x3002c3737, 0x3002c3837, 0x3002c3937,
	0x3002c3038, 0x3002c3138, 0x3002c3238, 0x3002c3338, 0x3002c3438, 0x3002c3538, 0x3002c3638, 0x3002c3738,
	0x3002c3838, 0x3002c3938, 0x3002c3039, 0x3002c3139, 0x3002c3239, 0x3002c3339, 0x3002c3439, 0x3002c3539,
	0x3002c3639, 0x3002c3739, 0x3002c3839, 0x3002c3939, 0x42c303031, 0x42c313031, 0x42c323031, 0x42c333031,
	0x42c343031, 0x42c353031, 0x42c363031, 0x42c373031, 0x42c383031, 0x42c393031, 0x42c303131, 0x42c313131,
	0x42c323131, 0x42c333131, 0x42c343131, 0x42c353131, 0x42c363131, 0x42c373131, 0x42c383131, 0x42c393131,
	0x42c303231, 0x42c313231, 0x42c323231, 0x42c333231, 0x42c343231, 0x42c353231, 0x42c363231, 0x42c373231,
	0x42c383231, 0x42c393231, 0x42c303331, 0x42c313331, 0x42c323331, 0x42c333331, 0x42c343331, 0x42c353331,
	0x42c363331, 0x42c373331, 0x42c383331, 0x42c393331, 0x42c303431, 0x42c313431, 0x42c323431, 0x42c333431,
	0x42c343431, 0x42c353431, 0x42c363431, 0x42c373431, 0x42c383431, 0x42c393431, 0x42c303531, 0x42c313531,
	0x42c323531, 0x42c333531, 0x42c343531, 0x42c353531, 0x42c363531, 0x42c373531, 0x42c383531, 0x42c393531,
	0x42c303631, 0x42c313631, 0x42c323631, 0x42c333631, 0x42c343631, 0x42c353631, 0x42c363631, 0x42c373631,
	0x42c383631, 0x42c393631, 0x42c303731, 0x42c313731, 0x42c323731, 0x42c333731, 0x42c343731, 0x42c353731,
	0x42c363731, 0x42c373731, 0x42c383731, 0x42c393731, 0x42c303831, 0x42c313831, 0x42c323831, 0x42c333831,
	0x42c343831, 0x42c353831, 0x42c363831, 0x42c373831, 0x42c383831, 0x42c393831, 0x42c303931, 0x42c313931,
	0x42c323931, 0x42c333931, 0x42c343931, 0x42c353931, 0x42c363931, 0x42c373931, 0x42c383931, 0x42c393931,
	0x42c303032, 0x42c313032, 0x42c323032, 0x42c333032, 0x42c343032, 0x42c353032, 0x42c363032, 0x42c373032,
	0x42c383032, 0x42c393032, 0x42c303132, 0x42c313132, 0x42c323132, 0x42c333132, 0x42c343132, 0x42c353132,
	0x42c363132, 0x42c373132, 0x42c383132, 0x42c393132, 0x42c303232, 0x42c313232, 0x42c323232, 0x42c333232,
	0x42c343232, 0x42c353232, 0x42c363232, 0x42c373232, 0x42c383232, 0x42c393232, 0x42c303332, 0x42c313332,
	0x42c323332, 0x42c333332, 0x42c343332, 0x42c353332, 0x42c363332, 0x42c373332, 0x42c383332, 0x42c393332,
	0x42c303432, 0x42c313432, 0x42c323432, 0x42c333432, 0x42c343432, 0x42c353432, 0x42c363432, 0x42c373432,
	0x42c383432, 0x42c393432, 0x42c303532, 0x42c313532, 0x42c323532, 0x42c333532, 0x42c343532, 0x42c353532}

// appendJSONBytes appends b as an array of integers, [] when empty.
func appendJSONBytes(dst, b []byte) []byte {
	if len(b) == 0 {
		return append(dst, "[]"...)
	}
	// Room for "[" and four bytes per value: every value is stored as
	// four bytes and the end moves on by its real length.
	n := len(dst)
	dst = slices.Grow(dst, 1+4*len(b))
	buf := dst[:cap(dst)]
	buf[n] = '['
	n++
	for _, c := range b {
		e := byteJSON[c]
		binary.LittleEndian.PutUint32(buf[n:], uint32(e))
		n += int(e >> 32)
	}
	buf[n-1] = ']' // over the last comma
	return buf[:n]
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string the way encoding/json does:
// ", \ and control characters escaped, <, > and & as \u003c, \u003e and
// \u0026, each byte of invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// errUnsupportedFloat is the error of a NaN or an infinity, which JSON
// cannot hold.
var errUnsupportedFloat = errors.New("json: unsupported value: NaN or infinity")

// appendJSONFloat appends f as encoding/json writes a float of bits (32 or
// 64) bits: the shortest text that reads back as the same value, in
// positional notation unless the magnitude is below 1e-6 or at least 1e21.
func appendJSONFloat(dst []byte, f float64, bits int) ([]byte, error) {
	if f == 0 && !math.Signbit(f) {
		return append(dst, '0'), nil
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, errUnsupportedFloat
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		// e-09 becomes e-9, as encoding/json writes it.
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, nil
}

// appendJSONFloat32s appends v as an array of numbers, null when nil.
func appendJSONFloat32s(dst []byte, v []float32) ([]byte, error) {
	if v == nil {
		return append(dst, "null"...), nil
	}
	dst = slices.Grow(dst, 2+10*len(v))
	dst = append(dst, '[')
	for i, f := range v {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = appendJSONFloat(dst, float64(f), 32); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}

// appendJSONTime appends t as time.Time's MarshalJSON writes it: RFC 3339
// with nanoseconds, quoted; a year outside 0-9999 or a zone offset of a
// day or more is an error.
func appendJSONTime(dst []byte, t time.Time) ([]byte, error) {
	n0 := len(dst)
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, time.RFC3339Nano)
	b := dst[n0+1:]
	switch {
	case len(b) < 5 || b[4] != '-':
		return dst[:n0], errors.New("Time.MarshalJSON: year outside of range [0,9999]")
	case b[len(b)-1] != 'Z':
		c := b[len(b)-len("Z07:00")]
		h := b[len(b)-len("07:00"):]
		if '0' <= c && c <= '9' || 10*(h[0]-'0')+(h[1]-'0') >= 24 {
			return dst[:n0], errors.New("Time.MarshalJSON: timezone hour outside of range [0,23]")
		}
	}
	return append(dst, '"'), nil
}

// appendJSONID appends id as a quoted UUID string.
func appendJSONID(dst []byte, id ID) []byte {
	dst = append(dst, '"')
	for i, c := range id {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, hexDigits[c>>4], hexDigits[c&0xF])
	}
	return append(dst, '"')
}

// appendJSONEnum appends the wire name of v, an error when it has none.
func appendJSONEnum(dst []byte, names enumNames, v uint8) ([]byte, error) {
	n := names.name(v)
	if n == "" {
		_, err := names.marshal(v)
		return dst, err
	}
	return appendJSONString(dst, n), nil
}

// appendJSONRaw appends the free-form JSON value j as encoding/json writes
// a Marshaler's output: compacted, with <, >, &, U+2028 and U+2029
// escaped; empty is {}. Invalid JSON is an error.
func appendJSONRaw(dst []byte, j JSON) ([]byte, error) {
	if len(j) == 0 || string(j) == "{}" {
		return append(dst, "{}"...), nil
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, j); err != nil {
		return dst, err
	}
	var out bytes.Buffer
	json.HTMLEscape(&out, compact.Bytes())
	return append(dst, out.Bytes()...), nil
}

// appendJSONUint appends n in decimal.
func appendJSONUint(dst []byte, n uint32) []byte { return strconv.AppendUint(dst, uint64(n), 10) }
