package recorder

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"path/filepath"
	"strings"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// transcriptContext is what a transcript parser learned from earlier lines
// of a file: Codex names the session and the turn in lines of their own. It
// is kept with the file's offset, so that a restart in the middle of a file
// goes on with it.
type transcriptContext struct {
	Session string `json:"session,omitempty"`
	Turn    string `json:"turn,omitempty"`
	Model   string `json:"model,omitempty"`
	CWD     string `json:"cwd,omitempty"`
}

// transcriptEvents maps one line of an agent's session transcript (path is
// the file) to the events recorded from it: what the assistant said, and
// the tool calls it made (each with its call id as action id, so that the
// hook's tool_result of the same call joins it). What hooks deliver (user
// prompts, tool results) and what is not the assistant's (its hidden
// reasoning, bookkeeping lines) gives no events, and neither does a line
// that is not JSON of the expected shape.
//
// Every event carries a record id derived from the line, so that reading
// the line again (after a crash, a rotation, a lost offset) records
// nothing twice: the server drops an id it has already stored.
func transcriptEvents(agent Agent, path string, line []byte, ctx *transcriptContext) []Event {
	if agent == Codex {
		return codexEvents(path, line, ctx)
	}
	return claudeEvents(path, line, ctx)
}

// claudeEntry is the part of a Claude Code transcript line the recorder
// reads: one JSON object per line, "type" user or assistant for the
// conversation (each content block of an assistant message usually on a
// line of its own, sharing message.id), other types for bookkeeping.
type claudeEntry struct {
	Type        string `json:"type"`
	UUID        string `json:"uuid"`
	ParentUUID  string `json:"parentUuid"`
	SessionID   string `json:"sessionId"`
	Timestamp   string `json:"timestamp"`
	CWD         string `json:"cwd"`
	IsSidechain bool   `json:"isSidechain"`
	IsMeta      bool   `json:"isMeta"`
	AgentID     string `json:"agentId"`
	APIError    bool   `json:"isApiErrorMessage"`
	Message     struct {
		ID      string          `json:"id"`
		Model   string          `json:"model"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// contentBlock is a block of a message's content, Claude's or Codex's.
type contentBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

func claudeEvents(path string, line []byte, ctx *transcriptContext) []Event {
	var e claudeEntry
	if json.Unmarshal(line, &e) != nil || e.Type != "assistant" || e.IsMeta {
		return nil
	}
	if e.SessionID != "" {
		ctx.Session = e.SessionID
	}
	if e.CWD != "" {
		ctx.CWD = e.CWD
	}
	blocks, ok := messageBlocks(e.Message.Content)
	if !ok {
		return nil
	}
	key := e.UUID
	if key == "" {
		key = lineKey(line)
	}
	ts := parseTime(e.Timestamp)
	var events []Event
	for i, b := range blocks {
		md := transcriptMetadata(Claude, path)
		md.opt("entry_uuid", e.UUID)
		md.opt("parent_uuid", e.ParentUUID)
		md.opt("message_id", e.Message.ID)
		md.opt("agent_id", e.AgentID)
		if e.Message.Model != "<synthetic>" { // Claude Code's own notes
			md.opt("model", e.Message.Model)
		}
		if e.IsSidechain {
			md.raw("is_sidechain", json.RawMessage("true"))
		}
		ev := Event{Source: Claude.captureSource(), Timestamp: ts}
		switch {
		case b.Type == "text" && strings.TrimSpace(b.Text) != "":
			ev.Type, ev.Speaker, ev.Content = AssistantMessage, memory.SpeakerAssistant, hookText(b.Text)
			if e.APIError {
				// Claude Code's own note that the API call failed.
				ev.Type, ev.Speaker = ErrorEvent, memory.SpeakerSystem
			}
		case b.Type == "tool_use" && b.Name != "":
			ev.Type, ev.Speaker, ev.ActionID = ToolCall, memory.SpeakerAssistant, b.ID
			ev.Content = toolCallContent(b.Name, b.Input)
			md.str("tool_name", b.Name)
			md.opt("tool_use_id", b.ID)
		default:
			continue // thinking, images, empty text
		}
		events = append(events, finishTranscriptEvent(ev, Claude, path, key, i, ctx, md))
	}
	return events
}

// messageBlocks reads a message's content: an array of blocks, or a plain
// string (one text block).
func messageBlocks(raw json.RawMessage) ([]contentBlock, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false
		}
		return []contentBlock{{Type: "text", Text: s}}, true
	}
	var blocks []contentBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return nil, false
	}
	return blocks, true
}

// codexLine is a line of a Codex rollout file: {"timestamp", "type",
// "payload"}. Older rollouts hold the payload itself on each line (and a
// first line {"id", "timestamp", "instructions"}).
type codexLine struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

// codexItem is the part of a payload the recorder reads: session_meta
// (id, cwd), turn_context (turn_id, model, cwd), event_msg task_started
// (turn_id), and the response items: message (role, content), the tool
// calls (function_call: name, arguments as a JSON text, call_id;
// custom_tool_call: name, input; local_shell_call and web_search_call:
// action).
type codexItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Phase     string          `json:"phase"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Input     json.RawMessage `json:"input"`
	Action    json.RawMessage `json:"action"`
	CallID    string          `json:"call_id"`
	ID        string          `json:"id"`
	SessionID string          `json:"session_id"`
	TurnID    string          `json:"turn_id"`
	Model     string          `json:"model"`
	CWD       string          `json:"cwd"`
}

// codexWrappers are the line types of the current rollout format.
var codexWrappers = map[string]bool{"session_meta": true, "response_item": true, "turn_context": true, "event_msg": true, "compacted": true}

func codexEvents(path string, line []byte, ctx *transcriptContext) []Event {
	var l codexLine
	if json.Unmarshal(line, &l) != nil {
		return nil
	}
	kind, payload := l.Type, l.Payload
	if !codexWrappers[kind] {
		// The older format: the line is the payload.
		kind, payload = "response_item", line
		if l.Type == "" {
			kind = "session_meta"
		}
	}
	var it codexItem
	if json.Unmarshal(payload, &it) != nil {
		return nil
	}
	switch kind {
	case "session_meta":
		if s := cmp.Or(it.ID, it.SessionID); s != "" {
			ctx.Session = s
		}
		ctx.CWD = cmp.Or(it.CWD, ctx.CWD)
		return nil
	case "turn_context":
		ctx.Turn = cmp.Or(it.TurnID, ctx.Turn)
		ctx.Model = cmp.Or(it.Model, ctx.Model)
		ctx.CWD = cmp.Or(it.CWD, ctx.CWD)
		return nil
	case "event_msg":
		if it.Type == "task_started" || it.Type == "turn_started" {
			ctx.Turn = cmp.Or(it.TurnID, ctx.Turn)
		}
		return nil // agent_message repeats the response item
	case "response_item":
	default:
		return nil
	}
	ev := Event{Source: Codex.captureSource(), Timestamp: parseTime(l.Timestamp), TurnID: ctx.Turn, Speaker: memory.SpeakerAssistant}
	md := transcriptMetadata(Codex, path)
	switch it.Type {
	case "message":
		if it.Role != "assistant" {
			return nil
		}
		blocks, ok := messageBlocks(it.Content)
		if !ok {
			return nil
		}
		var parts []string
		for _, b := range blocks {
			if (b.Type == "output_text" || b.Type == "text") && strings.TrimSpace(b.Text) != "" {
				parts = append(parts, b.Text)
			}
		}
		if len(parts) == 0 {
			return nil
		}
		ev.Type, ev.Content = AssistantMessage, hookText(strings.Join(parts, "\n\n"))
		md.opt("phase", it.Phase)
	case "function_call", "custom_tool_call", "local_shell_call", "web_search_call":
		name, input := it.Name, it.Input
		switch it.Type {
		case "function_call":
			input = jsonText(it.Arguments)
		case "local_shell_call":
			name, input = cmp.Or(name, "local_shell"), it.Action
		case "web_search_call":
			name, input = cmp.Or(name, "web_search"), it.Action
		}
		if name == "" {
			return nil
		}
		ev.Type, ev.ActionID = ToolCall, cmp.Or(it.CallID, it.ID)
		ev.Content = toolCallContent(name, input)
		md.str("tool_name", name)
		md.opt("call_id", ev.ActionID)
	default:
		return nil // user and developer messages, reasoning, tool output
	}
	return []Event{finishTranscriptEvent(ev, Codex, path, lineKey(line), 0, ctx, md)}
}

// finishTranscriptEvent fills in what every transcript event has: the
// session (the file's name when no line named one), the metadata and the
// stable record id.
func finishTranscriptEvent(ev Event, agent Agent, path, key string, part int, ctx *transcriptContext, md *object) Event {
	ev.SessionID = cmp.Or(ctx.Session, sessionFromPath(path))
	if ctx.Model != "" {
		md.str("model", ctx.Model)
	}
	md.opt("cwd", ctx.CWD)
	ev.Metadata = md.bytes()
	ev.RecordID = transcriptID(agent, ev.SessionID, key, part, ev.Timestamp)
	return ev
}

// transcriptMetadata starts the capture metadata of a transcript event.
func transcriptMetadata(agent Agent, path string) *object {
	md := newObject()
	md.str("agent", string(agent))
	md.str("origin", "transcript")
	md.str("transcript_path", path)
	return md
}

// opt adds a string member unless it is empty.
func (o *object) opt(k, v string) {
	if v != "" {
		o.str(k, v)
	}
}

// toolCallContent is a tool call's content, shaped as the hooks shape it:
// {"tool_name", "tool_input"}.
func toolCallContent(name string, input json.RawMessage) json.RawMessage {
	o := newObject()
	n, _ := json.Marshal(name)
	o.raw("tool_name", n)
	if len(bytes.TrimSpace(input)) > 0 && !isNull(input) {
		o.raw("tool_input", input)
	}
	return textValue(o.bytes())
}

// jsonText turns a JSON string holding JSON (Codex's function arguments)
// into that JSON; anything else stays as it is.
func jsonText(raw json.RawMessage) json.RawMessage {
	var s string
	if json.Unmarshal(raw, &s) == nil && json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	return raw
}

// sessionFromPath is the session a file's name gives: a Claude Code
// transcript is <session>.jsonl, a Codex rollout
// rollout-<time>-<session>.jsonl, the session a UUID.
func sessionFromPath(path string) string {
	name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if len(name) >= 36 {
		if id, err := memory.ParseID(name[len(name)-36:]); err == nil {
			return id.String()
		}
	}
	return name
}

// lineKey identifies a line by its bytes.
func lineKey(line []byte) string {
	sum := sha256.Sum256(line)
	return string(sum[:])
}

func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// transcriptID is the record id of the part-th event of a transcript line:
// a hash of the agent, the session and the line's key, shaped as a version
// 7 UUID carrying the line's time (version 8 without one), so that ids
// still sort by time.
func transcriptID(agent Agent, session, key string, part int, ts time.Time) memory.ID {
	h := sha256.New()
	h.Write([]byte("memsvc-recorder transcript v1"))
	for _, s := range []string{string(agent), session, key} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	var p [8]byte
	binary.BigEndian.PutUint64(p[:], uint64(part))
	h.Write(p[:])
	var id memory.ID
	copy(id[:], h.Sum(nil))
	version := byte(8)
	if ms := ts.UnixMilli(); !ts.IsZero() && ms > 0 && ms < 1<<48 {
		for i := range 6 {
			id[i] = byte(ms >> (40 - 8*i))
		}
		version = 7
	}
	id[6] = version<<4 | id[6]&0x0f
	id[8] = 0x80 | id[8]&0x3f
	return id
}
