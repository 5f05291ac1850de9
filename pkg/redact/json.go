package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"unicode/utf8"
)

// ErrInvalidJSON is returned (wrapped) by JSON for a document that is not a
// single valid JSON value.
var ErrInvalidJSON = errors.New("invalid JSON")

// quotedMarker is Marker as a JSON string.
const quotedMarker = `"` + Marker + `"`

// JSON redacts a JSON document structurally and returns the redacted
// document:
//
//   - every string value goes through Text;
//   - every object key goes through Text (a key can itself be a token), and
//     when the redacted key names a secret (IsSecretKey) its value is
//     replaced by the string "[REDACTED]" whatever its type — except values
//     that cannot hold a secret (null, true, false, "", {} and []), which
//     are kept;
//   - in an array, a string that follows a flag naming a secret is the
//     flag's value and is replaced: ["mysql", "--password", "hunter2"]
//     becomes ["mysql", "--password", "[REDACTED]"] (argv of a tool call);
//   - numbers, booleans, null, member order, duplicate keys and all white
//     space are kept exactly as written, and so is every string that Text
//     leaves unchanged, escapes included.
//
// A document without secrets therefore comes back byte for byte. JSON is
// idempotent, and valid JSON in gives valid JSON out. A document that is not
// a single valid JSON value gives an error wrapping ErrInvalidJSON.
func JSON(doc []byte) ([]byte, error) {
	if !json.Valid(doc) {
		var raw json.RawMessage
		err := json.Unmarshal(doc, &raw)
		if err == nil {
			err = errors.New("not a single value")
		}
		return nil, fmt.Errorf("%w: %w", ErrInvalidJSON, err)
	}
	r := jsonRedactor{doc: doc, dec: json.NewDecoder(bytes.NewReader(doc))}
	if bytes.Contains(doc, []byte(`"Secret"`)) {
		r.secrets = kubeObjects(doc)
	}
	r.dec.UseNumber()
	r.out = make([]byte, 0, len(doc))
	if err := r.value(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidJSON, err)
	}
	r.out = append(r.out, doc[r.pos:]...)
	return r.out, nil
}

// jsonRedactor walks the token stream of a valid document and copies the
// bytes between tokens (white space, ',' and ':') verbatim, so only redacted
// tokens differ from the input.
type jsonRedactor struct {
	doc []byte
	dec *json.Decoder
	out []byte
	pos int // doc[:pos] has been written to out
	// secrets holds the offsets (just after '{') of the objects that are
	// Kubernetes Secrets: "kind": "Secret" among their members.
	secrets map[int]bool
	// inSecretData is set while the value of a Secret's data or
	// stringData member is written: every string in it is a secret.
	inSecretData bool
}

// next reads a token, copies the gap before it and returns the token and
// its raw span.
func (r *jsonRedactor) next() (json.Token, int, int, error) {
	tok, err := r.dec.Token()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, 0, 0, fmt.Errorf("read token: %w", err)
	}
	end := int(r.dec.InputOffset())
	start := r.pos
	for start < end && isJSONGap(r.doc[start]) {
		start++
	}
	r.out = append(r.out, r.doc[r.pos:start]...)
	r.pos = start
	return tok, start, end, nil
}

func isJSONGap(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == ':'
}

// emit writes the raw token doc[start:end].
func (r *jsonRedactor) emit(start, end int) {
	r.out = append(r.out, r.doc[start:end]...)
	r.pos = end
}

// emitString writes s: raw when Text left it unchanged, else re-encoded.
func (r *jsonRedactor) emitString(s, red string, start, end int) {
	if s == red {
		r.emit(start, end)
		return
	}
	r.out = appendJSONString(r.out, red)
	r.pos = end
}

func (r *jsonRedactor) value() error {
	tok, start, end, err := r.next()
	if err != nil {
		return err
	}
	return r.valueFrom(tok, start, end)
}

func (r *jsonRedactor) valueFrom(tok json.Token, start, end int) error {
	switch t := tok.(type) {
	case json.Delim:
		r.emit(start, end)
		switch t {
		case '{':
			return r.object(end)
		case '[':
			return r.array()
		}
		return fmt.Errorf("unexpected %q", rune(t))
	case string:
		if r.inSecretData && t != "" {
			r.out = append(r.out, quotedMarker...)
			r.pos = end
			return nil
		}
		r.emitString(t, Text(t), start, end)
	default: // json.Number, bool, nil
		r.emit(start, end)
	}
	return nil
}

func (r *jsonRedactor) object(at int) error {
	secret := r.secrets[at]
	for r.dec.More() {
		tok, start, end, err := r.next()
		if err != nil {
			return err
		}
		key, ok := tok.(string)
		if !ok {
			return fmt.Errorf("object key is %T", tok)
		}
		red := Text(key)
		r.emitString(key, red, start, end)
		switch classifyKey(red) {
		case keyPlain:
			if secret && (key == "data" || key == "stringData") && !r.inSecretData {
				r.inSecretData = true
				err = r.value()
				r.inSecretData = false
			} else {
				err = r.value()
			}
		case keyRandom:
			err = r.randomValue()
		default:
			err = r.secretValue()
		}
		if err != nil {
			return err
		}
	}
	return r.closing()
}

func (r *jsonRedactor) array() error {
	flag := false
	for r.dec.More() {
		tok, start, end, err := r.next()
		if err != nil {
			return err
		}
		str, isStr := tok.(string)
		if flag && isStr && flagValue(str) {
			r.out = append(r.out, quotedMarker...)
			r.pos = end
		} else if err := r.valueFrom(tok, start, end); err != nil {
			return err
		}
		flag = isStr && isSecretFlag(str)
	}
	return r.closing()
}

// isSecretFlag reports whether an argv element is a flag that names a
// secret and takes the next element as its value: "--password", "--api-key".
func isSecretFlag(s string) bool {
	if len(s) < 2 || s[0] != '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isKeyChar(s[i]) {
			return false
		}
	}
	return IsSecretKey(s)
}

// flagValue reports whether an argv element after a secret flag is its
// value rather than another flag or nothing.
func flagValue(s string) bool {
	return s != "" && s[0] != '-'
}

func (r *jsonRedactor) closing() error {
	_, start, end, err := r.next()
	if err != nil {
		return err
	}
	r.emit(start, end)
	return nil
}

// secretValue replaces the value of a secret key by the quoted marker unless
// it cannot hold a secret.
func (r *jsonRedactor) secretValue() error {
	tok, start, end, err := r.next()
	if err != nil {
		return err
	}
	empty := false
	switch t := tok.(type) {
	case nil, bool:
		empty = true
	case string:
		empty = t == ""
	case json.Delim:
		empty = !r.dec.More()
		if err := r.skip(); err != nil {
			return err
		}
		end = int(r.dec.InputOffset())
	}
	if empty {
		r.emit(start, end)
		return nil
	}
	r.out = append(r.out, quotedMarker...)
	r.pos = end
	return nil
}

// kubeObjects returns the offsets, just after their '{', of the objects of
// a valid document that have a member "kind": "Secret" (Kubernetes
// Secrets, whose data and stringData values are all secrets).
func kubeObjects(doc []byte) map[int]bool {
	dec := json.NewDecoder(bytes.NewReader(doc))
	type frame struct {
		at     int
		object bool
		key    bool   // the next string is a key
		last   string // the last key read
	}
	var stack []frame
	out := map[int]bool{}
	for {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		var top *frame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		if top != nil && top.object && top.key {
			if k, ok := tok.(string); ok {
				top.last, top.key = k, false
				continue
			}
		}
		if top != nil && top.object {
			if v, ok := tok.(string); ok && v == "Secret" && top.last == "kind" {
				out[top.at] = true
			}
			top.key = true
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				stack = append(stack, frame{at: int(dec.InputOffset()), object: d == '{', key: d == '{'})
			default:
				stack = stack[:len(stack)-1]
			}
		}
	}
}

// randomValue replaces the value of a name that holds a secret only
// sometimes (keyRandom) when it is a string that looks machine-made, and
// redacts it as any other value otherwise.
func (r *jsonRedactor) randomValue() error {
	tok, start, end, err := r.next()
	if err != nil {
		return err
	}
	if str, ok := tok.(string); ok && randomish(str) {
		r.out = append(r.out, quotedMarker...)
		r.pos = end
		return nil
	}
	return r.valueFrom(tok, start, end)
}

// skip consumes the rest of a compound value whose opening delimiter has
// been read.
func (r *jsonRedactor) skip() error {
	for depth := 1; depth > 0; {
		tok, err := r.dec.Token()
		if err != nil {
			return fmt.Errorf("skip value: %w", err)
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
	}
	return nil
}

// appendJSONString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD;
// control characters, '"', '\\', U+2028 and U+2029 are escaped; everything
// else, '<', '>' and '&' included, is written as is.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < ' ':
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

// Value redacts a value decoded from JSON with the rules of JSON: strings go
// through Text, map keys go through Text, and the value of a secret key is
// replaced by Marker unless it is nil, a bool, "" or an empty slice or map;
// in a slice, a string after a flag naming a secret ("--password") is
// replaced too.
// It understands string, []any, map[string]any, []string, map[string]string
// and json.RawMessage (redacted with JSON; one that is not valid JSON becomes
// the JSON string "[REDACTED]"); any other value (numbers, bools, nil,
// json.Number, and types Value does not know) is returned as is.
//
// Value never modifies its argument. Two keys that redact to the same key
// collapse into one; the one that sorts last wins.
func Value(v any) any {
	switch t := v.(type) {
	case string:
		return Text(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			if str, ok := e.(string); ok && i > 0 && flagValue(str) && isSecretFlag(stringAt(t, i-1)) {
				out[i] = Marker
				continue
			}
			out[i] = Value(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		secret := t["kind"] == "Secret"
		for _, k := range slices.Sorted(maps.Keys(t)) {
			if secret && (k == "data" || k == "stringData") && classifyKey(Text(k)) == keyPlain {
				out[Text(k)] = secretStrings(t[k])
				continue
			}
			rk := Text(k)
			if e := t[k]; secretMember(rk, e) {
				out[rk] = Marker
			} else {
				out[rk] = Value(e)
			}
		}
		return out
	case []string:
		out := make([]string, len(t))
		for i, e := range t {
			if i > 0 && flagValue(e) && isSecretFlag(t[i-1]) {
				out[i] = Marker
				continue
			}
			out[i] = Text(e)
		}
		return out
	case map[string]string:
		out := make(map[string]string, len(t))
		for _, k := range slices.Sorted(maps.Keys(t)) {
			rk := Text(k)
			if e := t[k]; secretMember(rk, e) {
				out[rk] = Marker
			} else {
				out[rk] = Text(e)
			}
		}
		return out
	case json.RawMessage:
		b, err := JSON(t)
		if err != nil {
			return json.RawMessage(quotedMarker)
		}
		return json.RawMessage(b)
	}
	return v
}

// secretStrings replaces every non-empty string in v by Marker: the data
// of a Kubernetes Secret. Keys are redacted with Text.
func secretStrings(v any) any {
	switch t := v.(type) {
	case string:
		if t != "" {
			return Marker
		}
		return t
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = secretStrings(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		for _, k := range slices.Sorted(maps.Keys(t)) {
			if rk := Text(k); secretMember(rk, t[k]) {
				out[rk] = Marker
			} else {
				out[rk] = secretStrings(t[k])
			}
		}
		return out
	}
	return v
}

// secretMember reports whether the member k: v of a decoded object is a
// secret to replace whole, as JSON decides for the same member.
func secretMember(k string, v any) bool {
	switch classifyKey(k) {
	case keyPlain:
		return false
	case keyRandom:
		s, ok := v.(string)
		return ok && randomish(s)
	}
	return mayHoldSecret(v)
}

// mayHoldSecret reports whether a decoded value could carry a secret.
func mayHoldSecret(v any) bool {
	switch t := v.(type) {
	case nil, bool:
		return false
	case string:
		return t != ""
	case []any:
		return len(t) > 0
	case map[string]any:
		return len(t) > 0
	case []string:
		return len(t) > 0
	case map[string]string:
		return len(t) > 0
	case json.RawMessage:
		s := string(bytes.TrimSpace(t))
		return s != "null" && s != "true" && s != "false" && s != `""` && s != "{}" && s != "[]"
	}
	return true
}

func stringAt(v []any, i int) string {
	s, _ := v[i].(string)
	return s
}
