package recorder

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/redact"
)

// Agent is a coding agent whose hooks the recorder understands.
type Agent string

// The supported agents.
const (
	Claude Agent = "claude" // Claude Code
	Codex  Agent = "codex"  // OpenAI Codex CLI
)

// Agents lists the supported agents.
func Agents() []Agent { return []Agent{Claude, Codex} }

// ParseAgent parses an agent name.
func ParseAgent(s string) (Agent, error) {
	switch a := Agent(strings.ToLower(strings.TrimSpace(s))); a {
	case Claude, Codex:
		return a, nil
	}
	return "", fmt.Errorf("unknown agent %q: want claude (Claude Code) or codex", s)
}

// Name is the agent's product name.
func (a Agent) Name() string {
	if a == Claude {
		return "Claude Code"
	}
	return "Codex"
}

// HiddenDir is the agent's per-project configuration directory.
func (a Agent) HiddenDir() string { return "." + string(a) }

// captureSource is the Capture Event source of the agent's events.
func (a Agent) captureSource() string {
	if a == Claude {
		return "claude-code"
	}
	return "codex"
}

// MaxHookContentBytes bounds the content of an event made from a hook
// payload; longer content (a large tool output) is cut, after redaction,
// and marked as cut.
const MaxHookContentBytes = 192 << 10

// maxHookMetaString bounds each string copied into metadata.
const maxHookMetaString = 4 << 10

// HookInput is a hook invocation.
type HookInput struct {
	Agent   Agent
	Payload []byte              // the hook's stdin (or argument)
	Getenv  func(string) string // nil: no environment
	Now     time.Time           // recorded as received_at
}

// hookPayload is a decoded payload: its members, raw.
type hookPayload map[string]json.RawMessage

// str returns the first of keys that holds a non-blank string (numbers are
// accepted as their text), trimmed.
func (p hookPayload) str(keys ...string) string {
	for _, k := range keys {
		raw, ok := p[k]
		if !ok {
			continue
		}
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			if s = strings.TrimSpace(s); s != "" {
				return s
			}
			continue
		}
		var n json.Number
		if err := json.Unmarshal(raw, &n); err == nil {
			return n.String()
		}
	}
	return ""
}

// value returns the first of keys that holds something other than null or
// an empty string.
func (p hookPayload) value(keys ...string) (string, json.RawMessage) {
	for _, k := range keys {
		raw, ok := p[k]
		if !ok || isNull(raw) || string(bytes.TrimSpace(raw)) == `""` {
			continue
		}
		return k, raw
	}
	return "", nil
}

// Payload keys, liberal: Claude Code and Codex hooks use snake_case; the
// Codex notify program gets kebab-case; some tools send camelCase.
var (
	keysEvent     = []string{"hook_event_name", "hookEventName", "event", "type"}
	keysSession   = []string{"session_id", "sessionId", "session-id", "conversation_id", "conversationId", "thread_id", "thread-id", "threadId"}
	keysTurn      = []string{"turn_id", "turn-id", "turnId", "message_id", "messageId"}
	keysAction    = []string{"tool_use_id", "toolUseId", "tool_call_id", "toolCallId", "call_id", "callId", "action_id"}
	keysTime      = []string{"timestamp", "created_at", "createdAt", "time"}
	keysPrompt    = []string{"prompt", "user_prompt", "message", "input"}
	keysResponse  = []string{"tool_response", "toolResponse", "tool_result", "response", "output", "result"}
	keysAssistant = []string{"last_assistant_message", "last-assistant-message", "lastAssistantMessage", "summary", "message"}
	// the assistant's last message, as Stop and SubagentStop send it
	keysLastAssistant = keysAssistant[:3]
	// copied into metadata when they hold a scalar
	keysMetadata = []string{"tool_name", "cwd", "transcript_path", "permission_mode", "model", "stop_hook_active",
		"notification_type", "title", "reason", "source", "trigger", "exit_code", "status", "agent_id", "agent_type", "agent_transcript_path"}
	// left out of a whole-payload content: they are metadata or identity
	keysNoise = []string{"session_id", "transcript_path", "cwd", "hook_event_name", "permission_mode"}
)

// HookEvents maps a hook payload to Capture Events. It never fails: a
// payload that is not a JSON object becomes a session_summary holding the
// payload as text; an empty payload gives no events. Content is redacted
// (and cut to MaxHookContentBytes) here already; the pipeline redacts it
// again, which changes nothing.
//
// Event types follow the hook (case and punctuation ignored):
//
//	UserPromptSubmit                    user_message   (prompt)
//	PreToolUse                          tool_call      ({"tool_name", "tool_input"})
//	PostToolUse                         tool_result    ({"tool_name", "tool_input", "tool_response"})
//	Stop, SubagentStop                  session_summary (last assistant message if sent, spoken by
//	                                    the assistant; else the payload, spoken by the system)
//	Notification                        session_summary (message)
//	agent-turn-complete (Codex notify)  user_message per input message, then assistant_message
//	anything else                       session_summary (the payload)
func HookEvents(in HookInput) []Event {
	getenv := in.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	raw := bytes.TrimSpace(in.Payload)
	if len(raw) == 0 {
		return nil
	}
	base := Event{Source: in.Agent.captureSource()}
	md := newObject()
	md.str("agent", string(in.Agent))

	var p hookPayload
	if err := json.Unmarshal(raw, &p); err != nil || p == nil {
		base.SessionID = sessionFallback(in.Agent, getenv)
		base.Type = SessionSummary
		base.Content = hookText(string(raw))
		md.str("payload_error", "hook payload is not a JSON object")
		md.str("received_at", in.Now.UTC().Format(time.RFC3339Nano))
		base.Metadata = md.bytes()
		return []Event{base}
	}

	hookName := p.str(keysEvent...)
	base.SessionID = p.str(keysSession...)
	if base.SessionID == "" {
		base.SessionID = sessionFallback(in.Agent, getenv)
	}
	base.ActionID = p.str(keysAction...)
	turn := p.str(keysTurn...)
	if ts := p.str(keysTime...); ts != "" {
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			base.Timestamp = t.UTC()
		} else {
			md.str("agent_timestamp", ts)
		}
	}
	if hookName != "" {
		md.str("hook_event", hookName)
	}
	for _, k := range keysMetadata {
		if v, ok := p[k]; ok {
			md.scalar(k, v)
		}
	}
	md.str("received_at", in.Now.UTC().Format(time.RFC3339Nano))

	var events []Event
	switch normalizeHookName(hookName) {
	case "userpromptsubmit":
		base.Type = UserMessage
		base.Content = p.textOf(keysPrompt...)
	case "pretooluse":
		base.Type = ToolCall
		base.Content = p.toolContent(false)
	case "posttooluse":
		base.Type = ToolResult
		base.Content = p.toolContent(true)
	case "stop", "subagentstop":
		base.Type = SessionSummary
		key, v := p.value(keysAssistant...)
		if v != nil {
			base.Content = textValue(v)
		}
		if base.Content != nil && slices.Contains(keysLastAssistant, key) {
			base.Speaker = memory.SpeakerAssistant // the assistant's own words
		}
	case "notification":
		base.Type = SessionSummary
		if title, msg := p.str("title"), p.str("message"); title != "" && msg != "" && !strings.Contains(msg, title) {
			base.Content = hookText(title + ": " + msg)
		} else {
			base.Content = p.textOf("message", "title")
		}
	case "agentturncomplete":
		// Codex notify: the turn's input messages and the answer.
		base.TurnID = turn
		base.Metadata = md.bytes()
		var inputs []json.RawMessage
		_ = json.Unmarshal(p["input-messages"], &inputs)
		if len(inputs) == 0 {
			_ = json.Unmarshal(p["input_messages"], &inputs)
		}
		for _, m := range inputs {
			if c := textValue(m); c != nil {
				ev := base
				ev.Type, ev.Content = UserMessage, c
				events = append(events, ev)
			}
		}
		if _, v := p.value(keysAssistant...); v != nil {
			ev := base
			ev.Type, ev.Content = AssistantMessage, textValue(v)
			events = append(events, ev)
		}
		if len(events) > 0 {
			return events
		}
		base.Type = SessionSummary
	default:
		base.Type = SessionSummary
	}
	if base.Content == nil {
		base.Content = p.generic(in.Agent, hookName)
	}
	if (base.Type == ToolCall || base.Type == ToolResult) && base.ActionID == "" && turn != "" {
		// Without a call id, two identical calls in one turn would look
		// like duplicates: keep the turn as metadata only.
		md.str("agent_turn_id", turn)
	} else {
		base.TurnID = turn
	}
	base.Metadata = md.bytes()
	return []Event{base}
}

func sessionFallback(a Agent, getenv func(string) string) string {
	envs := []string{"CLAUDE_SESSION_ID"}
	if a == Codex {
		envs = []string{"CODEX_SESSION_ID", "CODEX_THREAD_ID"}
	}
	for _, e := range envs {
		if v := strings.TrimSpace(getenv(e)); v != "" {
			return v
		}
	}
	return string(a) + "-local"
}

// normalizeHookName folds "PostToolUse", "post_tool_use" and
// "agent-turn-complete" to lowercase letters and digits.
func normalizeHookName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// textOf returns the first present value of keys as content, or nil.
func (p hookPayload) textOf(keys ...string) json.RawMessage {
	_, v := p.value(keys...)
	if v == nil {
		return nil
	}
	return textValue(v)
}

// toolContent is the content of a tool event: tool name and input, and
// for results the response, as one JSON object.
func (p hookPayload) toolContent(result bool) json.RawMessage {
	o := newObject()
	if _, v := p.value("tool_name", "toolName", "tool"); v != nil {
		o.raw("tool_name", v)
	}
	if _, v := p.value("tool_input", "toolInput", "arguments", "input", "command"); v != nil {
		o.raw("tool_input", v)
	}
	if result {
		if _, v := p.value(keysResponse...); v != nil {
			o.raw("tool_response", v)
		}
	}
	if o.n == 0 {
		return nil
	}
	return textValue(o.bytes())
}

// generic is the content of an event without a better field: the payload
// minus routing fields, or the hook's name.
func (p hookPayload) generic(a Agent, hookName string) json.RawMessage {
	o := newObject()
	for _, k := range slices.Sorted(maps.Keys(p)) {
		if !slices.Contains(keysNoise, k) {
			o.raw(k, p[k])
		}
	}
	if o.n > 0 {
		return textValue(o.bytes())
	}
	if hookName == "" {
		hookName = "hook"
	}
	return hookText(a.Name() + " " + hookName)
}

// textValue turns a JSON value into string content: strings as they are,
// anything else as its JSON text after structural redaction.
func textValue(v json.RawMessage) json.RawMessage {
	v = bytes.TrimSpace(v)
	if len(v) > 0 && v[0] == '"' {
		var s string
		if json.Unmarshal(v, &s) == nil {
			if strings.TrimSpace(s) == "" {
				return nil
			}
			return hookText(s)
		}
	}
	red, err := redact.JSON(v)
	if err != nil {
		return hookText(string(v))
	}
	var buf bytes.Buffer
	if json.Compact(&buf, red) == nil {
		red = buf.Bytes()
	}
	return hookText(string(red))
}

// hookText redacts s, cuts it to MaxHookContentBytes and returns it as a
// JSON string.
func hookText(s string) json.RawMessage {
	s = truncate(redact.Text(strings.ToValidUTF8(s, "\uFFFD")), MaxHookContentBytes)
	b, _ := json.Marshal(s)
	return b
}

// truncate cuts s to at most limit bytes on a rune boundary, saying so.
func truncate(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	note := fmt.Sprintf("\n[cut by memsvc-recorder: %d more bytes]", len(s)-limit)
	cut := limit - len(note)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + note
}

// object builds a JSON object with members in insertion order.
type object struct {
	buf bytes.Buffer
	n   int
}

func newObject() *object { return &object{} }

func (o *object) raw(k string, v json.RawMessage) {
	var val bytes.Buffer
	if json.Compact(&val, v) != nil {
		return
	}
	if o.n == 0 {
		o.buf.WriteByte('{')
	} else {
		o.buf.WriteByte(',')
	}
	kb, _ := json.Marshal(k)
	o.buf.Write(kb)
	o.buf.WriteByte(':')
	o.buf.Write(val.Bytes())
	o.n++
}

func (o *object) str(k, v string) {
	b, _ := json.Marshal(truncate(v, maxHookMetaString))
	o.raw(k, b)
}

// scalar copies a string, number or boolean; other values are skipped.
func (o *object) scalar(k string, v json.RawMessage) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return
	}
	switch v[0] {
	case '"':
		var s string
		if json.Unmarshal(v, &s) == nil && strings.TrimSpace(s) != "" {
			o.str(k, s)
		}
	case '{', '[', 'n':
	default:
		o.raw(k, v)
	}
}

func (o *object) bytes() json.RawMessage {
	if o.n == 0 {
		return json.RawMessage("{}")
	}
	return append(bytes.Clone(o.buf.Bytes()), '}')
}
