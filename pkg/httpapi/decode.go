package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"

	"memsvc.dev/memsvc/pkg/memory"
)

// decodeJSON reads the JSON object body of r into dst: the Content-Type
// must be JSON, the body must fit the limit, must not be empty and must be
// one JSON object. Unknown fields are ignored. Every failure is a
// *memory.Error that says what is wrong and, for JSON errors, where.
func (s *Server) decodeJSON(w http.ResponseWriter, r *http.Request, dst any) error {
	if err := checkJSONType(r.Header.Get("Content-Type")); err != nil {
		return err
	}
	body, err := readBody(w, r, s.maxBody)
	if err != nil {
		return err
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 {
		return memory.Invalid("", "the request body is empty; send a JSON object (at least {})")
	}
	if trimmed[0] != '{' {
		return memory.Invalid("", "the request body must be a JSON object, not %s", jsonKind(trimmed[0]))
	}
	if err := json.Unmarshal(body, dst); err != nil {
		return jsonError(body, err)
	}
	return nil
}

// checkJSONType accepts application/json and application/*+json, with any
// parameters.
func checkJSONType(ct string) error {
	if ct == "" {
		return memory.Invalid("", "missing Content-Type header; send the body as application/json")
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return memory.Invalid("", "malformed Content-Type %s; send the body as application/json", memory.Quote(ct))
	}
	if mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json") {
		return nil
	}
	return memory.Invalid("", "Content-Type %s is not JSON; send the body as application/json", memory.Quote(mt))
}

// tooLarge is the error of a body over its limit.
func tooLarge(limit int64) *memory.Error {
	return memory.Errorf(memory.CodeContentTooLarge, "request body exceeds the limit of %d bytes", limit)
}

// readBody reads the whole body of r, at most limit bytes.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, tooLarge(limit)
	}
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength))
	}
	_, err := buf.ReadFrom(http.MaxBytesReader(baseWriter(w), r.Body, limit))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, tooLarge(limit)
		}
		return nil, memory.Invalid("", "read request body: %v", err)
	}
	return buf.Bytes(), nil
}

// baseWriter unwraps w to the server's own writer, which http.MaxBytesReader
// tells to close the connection once a body is over its limit.
func baseWriter(w http.ResponseWriter) http.ResponseWriter {
	for {
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return w
		}
		w = u.Unwrap()
	}
}

// jsonError describes a decoding error of body for the client.
func jsonError(body []byte, err error) error {
	if me, ok := errors.AsType[*memory.Error](err); ok {
		// Enum, UUID and other value errors from the model's decoders.
		return memory.Invalid("", "invalid JSON body: %s", me.Message)
	}
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		line, col := position(body, se.Offset)
		return memory.Invalid("", "malformed JSON at line %d, column %d: %s", line, col, se.Error())
	}
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		line, col := position(body, te.Offset)
		field := te.Field
		if field == "" {
			field = "body"
		}
		got := te.Value // "string", "number 12", ...: a number literal can be long
		if len(got) > memory.MaxQuoteBytes {
			got = memory.Quote(got)
		}
		return memory.Invalid(field, "want %s, got %s (line %d, column %d)", describeType(te.Type), got, line, col)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return memory.Invalid("", "malformed JSON: the body ends in the middle of a value")
	}
	return memory.Invalid("", "invalid JSON body: %v", err)
}

// position turns a byte offset into a 1-based line and column.
func position(body []byte, offset int64) (line, col int) {
	if offset > int64(len(body)) {
		offset = int64(len(body))
	}
	if offset < 0 {
		offset = 0
	}
	before := body[:offset]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = int(offset) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// describeType names the JSON a Go type accepts.
func describeType(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprintf("a non-negative integer (%s)", t.Kind())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return fmt.Sprintf("an integer (%s)", t.Kind())
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Pointer:
		return describeType(t.Elem())
	default:
		return "another value"
	}
}

func jsonKind(c byte) string {
	switch {
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 'n':
		return "null"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	default:
		return "malformed JSON"
	}
}
