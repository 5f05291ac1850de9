package recorder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"memsvc.dev/memsvc/pkg/memory"
)

// ErrInvalidEvent matches every error about a Capture Event that cannot be
// recorded.
var ErrInvalidEvent = errors.New("invalid capture event")

// EventError says what is wrong with a Capture Event, and where.
type EventError struct {
	Line  int    // 1-based input line; 0 when the event did not come from a line
	Field string // the offending field; "" for the event as a whole
	Msg   string
}

func (e *EventError) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	b.WriteString("invalid capture event: ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Is makes errors.Is(err, ErrInvalidEvent) true.
func (e *EventError) Is(target error) bool { return target == ErrInvalidEvent }

// invalid builds an EventError. Input values are never quoted in it: the
// error is logged, and any field of an event may hold a secret where a
// valid value was expected (a token pasted as the event type). Every
// Go-quoted string in the message, from this package or the packages it
// calls, becomes its length (see hideQuoted).
func invalid(field, format string, args ...any) *EventError {
	return &EventError{Field: field, Msg: hideQuoted(fmt.Sprintf(format, args...))}
}

// hideQuoted replaces every Go-quoted string in msg by its length:
// `invalid speaker "ghp_..."` becomes `invalid speaker (40 bytes, not
// shown)`.
func hideQuoted(msg string) string {
	if strings.IndexByte(msg, '"') < 0 {
		return msg
	}
	var b strings.Builder
	for i := 0; i < len(msg); {
		if msg[i] != '"' {
			b.WriteByte(msg[i])
			i++
			continue
		}
		n := len(msg) - i - 1 // an unbalanced quote: the rest is the value
		q, err := strconv.QuotedPrefix(msg[i:])
		if err == nil {
			v, _ := strconv.Unquote(q)
			n = len(v)
		}
		fmt.Fprintf(&b, "(%d bytes, not shown)", n)
		if err != nil {
			break
		}
		i += len(q)
	}
	return b.String()
}

// EventType is the kind of a Capture Event.
type EventType uint8

// The eight event types.
const (
	UserMessage EventType = iota + 1
	AssistantMessage
	ToolCall
	ToolResult
	Command
	FileChange
	SessionSummary
	ErrorEvent
)

var eventTypeNames = [...]string{"", "user_message", "assistant_message", "tool_call", "tool_result", "command", "file_change", "session_summary", "error"}

func (t EventType) String() string {
	if t > 0 && int(t) < len(eventTypeNames) {
		return eventTypeNames[t]
	}
	return ""
}

// Valid reports whether t is one of the eight types.
func (t EventType) Valid() bool { return t >= UserMessage && t <= ErrorEvent }

// ParseEventType parses an event type name (exact, lowercase).
func ParseEventType(s string) (EventType, error) {
	for i := 1; i < len(eventTypeNames); i++ {
		if eventTypeNames[i] == s {
			return EventType(i), nil
		}
	}
	return 0, fmt.Errorf("unknown event type %q: want one of %s", s, strings.Join(eventTypeNames[1:], ", "))
}

// Source is the raw journal source of an event type: conversation for
// messages, summary for session summaries, tool_io for the rest.
func (t EventType) Source() memory.RawSource {
	switch t {
	case UserMessage, AssistantMessage:
		return memory.SourceConversation
	case SessionSummary:
		return memory.SourceSummary
	default:
		return memory.SourceToolIO
	}
}

// Speaker is who an event of type t is attributed to when it names no
// speaker: user and assistant messages to the user and the assistant, tool
// calls, tool results and commands to the tool, file changes, errors and
// session summaries to the system.
func (t EventType) Speaker() memory.RawSpeaker {
	switch t {
	case UserMessage:
		return memory.SpeakerUser
	case AssistantMessage:
		return memory.SpeakerAssistant
	case ToolCall, ToolResult, Command:
		return memory.SpeakerTool
	default:
		return memory.SpeakerSystem
	}
}

// Event is a validated Capture Event. Strings are trimmed; absent optional
// fields are zero. Content is the JSON value of the content field (a JSON
// string for text). Nothing in an Event is redacted yet.
type Event struct {
	SessionID  string
	Type       EventType
	Content    json.RawMessage
	TurnID     string
	TopicID    string
	ActionID   string
	Source     string
	Speaker    memory.RawSpeaker   // 0: inferred from Type
	Timestamp  time.Time           // zero: none
	Visibility memory.Visibility   // 0: normal
	Secrecy    memory.SecrecyLevel // 0: sensitive
	Metadata   json.RawMessage     // nil: none
	Meta       *memory.MetaMemory  // nil: none
	// RecordID is the event's own stable id (transcript capture derives it
	// from the transcript line); zero gives a fresh one. An event with its
	// own id is not checked against recent events: the server drops an id
	// it has already stored, which is exact.
	RecordID memory.ID
}

// TextEvent returns an event with text content.
func TextEvent(sessionID string, t EventType, text string) Event {
	b, _ := json.Marshal(text) // a string always marshals
	return Event{SessionID: sessionID, Type: t, Content: b}
}

// wireEvent is the JSON shape of a Capture Event; every field is kept raw
// so that type errors can name the field.
type wireEvent struct {
	SessionID    json.RawMessage `json:"session_id"`
	EventType    json.RawMessage `json:"event_type"`
	Content      json.RawMessage `json:"content"`
	TurnID       json.RawMessage `json:"turn_id"`
	TopicID      json.RawMessage `json:"topic_id"`
	ActionID     json.RawMessage `json:"action_id"`
	Source       json.RawMessage `json:"source"`
	Speaker      json.RawMessage `json:"speaker"`
	Timestamp    json.RawMessage `json:"timestamp"`
	Visibility   json.RawMessage `json:"visibility"`
	SecrecyLevel json.RawMessage `json:"secrecy_level"`
	Metadata     json.RawMessage `json:"metadata"`
	Meta         json.RawMessage `json:"meta"`
}

// ParseEvent parses and validates one Capture Event (a JSON object; unknown
// fields are ignored). Errors are *EventError values naming the field.
func ParseEvent(data []byte) (Event, error) {
	var ev Event
	data = bytes.TrimSpace(data)
	if !utf8.Valid(data) {
		return ev, invalid("", "not valid UTF-8")
	}
	if len(data) == 0 || data[0] != '{' {
		return ev, invalid("", "want a JSON object")
	}
	var w wireEvent
	if err := json.Unmarshal(data, &w); err != nil {
		return ev, invalid("", "not valid JSON: %v", jsonProblem(err))
	}
	var err error
	var ok bool
	if ev.SessionID, ok, err = optString("session_id", w.SessionID); err != nil {
		return ev, err
	} else if !ok || ev.SessionID == "" {
		return ev, invalid("session_id", "required and must not be blank")
	}
	name, ok, err := optString("event_type", w.EventType)
	if err != nil {
		return ev, err
	} else if !ok || name == "" {
		return ev, invalid("event_type", "required: want one of %s", strings.Join(eventTypeNames[1:], ", "))
	}
	if ev.Type, err = ParseEventType(name); err != nil {
		return ev, invalid("event_type", "%v", err)
	}
	if isNull(w.Content) {
		return ev, invalid("content", "required and must not be null")
	}
	ev.Content = w.Content
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		dst  *string
	}{{"turn_id", w.TurnID, &ev.TurnID}, {"topic_id", w.TopicID, &ev.TopicID}, {"action_id", w.ActionID, &ev.ActionID}, {"source", w.Source, &ev.Source}} {
		if *f.dst, _, err = optString(f.name, f.raw); err != nil {
			return ev, err
		}
	}
	if err := optEnum("speaker", w.Speaker, &ev.Speaker, memory.ParseRawSpeaker); err != nil {
		return ev, err
	}
	if s, ok, err := optString("timestamp", w.Timestamp); err != nil {
		return ev, err
	} else if ok && s != "" {
		if ev.Timestamp, err = time.Parse(time.RFC3339Nano, s); err != nil {
			return ev, invalid("timestamp", "%q: not an RFC 3339 time such as 2026-11-01T12:00:00Z", s)
		}
		ev.Timestamp = ev.Timestamp.UTC()
	}
	if err := optEnum("visibility", w.Visibility, &ev.Visibility, memory.ParseVisibility); err != nil {
		return ev, err
	}
	if err := optEnum("secrecy_level", w.SecrecyLevel, &ev.Secrecy, memory.ParseSecrecyLevel); err != nil {
		return ev, err
	}
	if !isNull(w.Metadata) {
		ev.Metadata = w.Metadata
	}
	if !isNull(w.Meta) {
		if bytes.TrimSpace(w.Meta)[0] != '{' {
			return ev, invalid("meta", "want a JSON object")
		}
		var m memory.MetaMemory
		if err := json.Unmarshal(w.Meta, &m); err != nil {
			return ev, invalid("meta", "%v", jsonProblem(err))
		}
		ev.Meta = &m
	}
	if err := ev.Validate(); err != nil {
		return ev, err
	}
	return ev, nil
}

// Validate checks an event built in code (ParseEvent calls it too): the
// rules of ParseEvent plus the server's limits, so that a batch is never
// refused for one event in it.
func (ev *Event) Validate() error {
	if strings.TrimSpace(ev.SessionID) == "" {
		return invalid("session_id", "required and must not be blank")
	}
	if !ev.Type.Valid() {
		return invalid("event_type", "required: want one of %s", strings.Join(eventTypeNames[1:], ", "))
	}
	for _, f := range []struct{ name, v string }{{"session_id", ev.SessionID}, {"turn_id", ev.TurnID}, {"topic_id", ev.TopicID}, {"action_id", ev.ActionID}, {"source", ev.Source}} {
		if len(f.v) > memory.MaxLabelBytes {
			return invalid(f.name, "%d bytes exceeds the limit of %d", len(f.v), memory.MaxLabelBytes)
		}
		if !utf8.ValidString(f.v) {
			return invalid(f.name, "not valid UTF-8")
		}
	}
	if ev.Speaker != 0 && !ev.Speaker.Valid() {
		return invalid("speaker", "unknown speaker %d", ev.Speaker)
	}
	if ev.Visibility != 0 && !ev.Visibility.Valid() {
		return invalid("visibility", "unknown visibility %d", ev.Visibility)
	}
	if ev.Secrecy != 0 && !ev.Secrecy.Valid() {
		return invalid("secrecy_level", "unknown secrecy level %d", ev.Secrecy)
	}
	if isNull(ev.Content) {
		return invalid("content", "required and must not be null")
	}
	if !json.Valid(ev.Content) {
		return invalid("content", "not valid JSON")
	}
	text, err := contentText(ev.Content)
	if err != nil {
		return err
	}
	if strings.TrimSpace(text) == "" {
		return invalid("content", "must not be blank")
	}
	if len(text) > memory.MaxTextBlockBytes {
		return invalid("content", "%d bytes exceeds the limit of %d", len(text), memory.MaxTextBlockBytes)
	}
	if ev.Metadata != nil && !json.Valid(ev.Metadata) {
		return invalid("metadata", "not valid JSON")
	}
	if ev.Meta != nil {
		if err := ev.Meta.Validate("meta"); err != nil {
			return invalid("", "%v", err)
		}
	}
	return nil
}

// optEnum reads the optional string field name (optString) into *dst
// through parse; an absent, null or empty field leaves *dst as it is.
func optEnum[T any](name string, raw json.RawMessage, dst *T, parse func(string) (T, error)) error {
	s, ok, err := optString(name, raw)
	if err != nil || !ok || s == "" {
		return err
	}
	v, err := parse(s)
	if err != nil {
		return invalid(name, "%v", err)
	}
	*dst = v
	return nil
}

// optString reads an optional string field: absent and null are "", false;
// anything but a string is an error. The value is trimmed.
func optString(field string, raw json.RawMessage) (string, bool, error) {
	if isNull(raw) {
		return "", false, nil
	}
	if raw[0] != '"' {
		return "", false, invalid(field, "want a string")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, invalid(field, "%v", jsonProblem(err))
	}
	return strings.TrimSpace(s), true, nil
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// contentText is the text of a content value: a string as it is, any other
// JSON value as its JSON text with surrounding white space removed.
func contentText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", invalid("content", "%v", jsonProblem(err))
		}
		return s, nil
	}
	return string(raw), nil
}

// jsonProblem shortens encoding/json errors, which name Go types.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s (offset %d)", se.Error(), se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			return fmt.Sprintf("%s: unexpected JSON %s", te.Field, te.Value)
		}
		return "unexpected JSON " + te.Value
	}
	return err.Error()
}
