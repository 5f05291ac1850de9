package wire

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"memsvc.dev/memsvc/pkg/memory"
)

// Envelope is the body of every error answer of the /v1 routes and
// /metrics:
//
//	{"code":"RECORD_NOT_FOUND","message":"...","details":null,"retry_after":null,"request_id":"..."}
//
// details is always present and null. retry_after is null or a number of
// seconds (and then the Retry-After header carries it too). request_id is
// present when the request's x-request-id is a UUID and absent otherwise.
type Envelope struct {
	Code       memory.Code     `json:"code"`
	Message    string          `json:"message"`
	Details    json.RawMessage `json:"details"`
	RetryAfter *uint32         `json:"retry_after"`
	RequestID  string          `json:"request_id,omitempty"`
}

// NewEnvelope describes err for the request whose x-request-id is
// requestID. The message is cut to memory.MaxMessageBytes, so no error
// answer echoes a large input back whole.
func NewEnvelope(err *memory.Error, requestID string) Envelope {
	env := Envelope{Code: err.Code, Message: memory.CutMessage(err.Message), RequestID: EnvelopeRequestID(requestID)}
	if err.RetryAfter > 0 {
		s := err.RetryAfter
		env.RetryAfter = &s
	}
	return env
}

// Err turns the envelope back into the error it describes, so errors.Is
// works on a client as it does in process.
func (e *Envelope) Err() *memory.Error {
	err := &memory.Error{Code: e.Code, Message: e.Message}
	if e.RetryAfter != nil {
		err.RetryAfter = *e.RetryAfter
	}
	return err
}

// DecodeEnvelope parses an error body. It reports false unless body is a
// JSON object with a non-empty string "code" and a string "message", the
// test upstream's SDKs apply too; anything else (a proxy's HTML page, an
// empty 404) is not an envelope.
func DecodeEnvelope(body []byte) (*Envelope, bool) {
	var probe struct {
		Code       *string `json:"code"`
		Message    *string `json:"message"`
		RetryAfter *uint32 `json:"retry_after"`
		RequestID  string  `json:"request_id"`
	}
	if err := json.Unmarshal(body, &probe); err != nil || probe.Code == nil || *probe.Code == "" || probe.Message == nil {
		return nil, false
	}
	return &Envelope{
		Code:       memory.Code(*probe.Code),
		Message:    *probe.Message,
		RetryAfter: probe.RetryAfter,
		RequestID:  probe.RequestID,
	}, true
}

// EnvelopeRequestID returns the x-request-id value to copy into an error
// envelope: the value itself when it is a UUID in any common spelling, and
// "" (omit the field) otherwise. The header always echoes the value
// unchanged, whatever it is.
func EnvelopeRequestID(v string) string {
	if v == "" || strings.TrimSpace(v) != v {
		return ""
	}
	if _, err := memory.ParseID(v); err != nil {
		return ""
	}
	return v
}

// NoRoute is the error of a request for a path the API does not have. It
// is answered with status 404 and, unlike other VALIDATION_ERRORs, not 400.
func NoRoute(method, path string) *memory.Error {
	return &memory.Error{Code: memory.CodeValidation, Message: fmt.Sprintf(
		"no route %s %s: the path is not part of this server's API (a typo, a missing /v1 prefix, or a trailing slash?)", method, memory.Quote(path))}
}

// WrongMethod is the error of a request for a known path with a method it
// does not serve. It is answered with status 405 and an Allow header.
func WrongMethod(method, path, allowed string) *memory.Error {
	return &memory.Error{Code: memory.CodeValidation, Message: fmt.Sprintf(
		"%s is not allowed on %s; use %s", memory.Quote(method), path, allowed)}
}

// IsNoRoute reports whether an answer says that the server has no such
// route: a 404 or 405 without an envelope (upstream servers, older memsvc
// servers) or with the VALIDATION_ERROR envelope of NoRoute and
// WrongMethod. A 404 with RECORD_NOT_FOUND is about a record, not a route.
func IsNoRoute(status int, env *Envelope) bool {
	if status != http.StatusNotFound && status != http.StatusMethodNotAllowed {
		return false
	}
	return env == nil || env.Code == memory.CodeValidation
}
