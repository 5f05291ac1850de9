package recorder

import (
	"cmp"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"memsvc.dev/memsvc/pkg/memory"
)

var hookNow = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func hookEvents(t *testing.T, agent Agent, payload string, env map[string]string) []Event {
	t.Helper()
	evs := HookEvents(HookInput{Agent: agent, Payload: []byte(payload), Getenv: func(k string) string { return env[k] }, Now: hookNow})
	for i := range evs {
		if err := evs[i].Validate(); err != nil {
			t.Fatalf("event %d does not validate: %v", i, err)
		}
	}
	return evs
}

func contentOf(t *testing.T, e Event) string {
	t.Helper()
	s, err := contentText(e.Content)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func metadataOf(t *testing.T, e Event) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(e.Metadata, &m); err != nil {
		t.Fatalf("metadata %s: %v", e.Metadata, err)
	}
	return m
}

// TestHookEvents maps real-shaped Claude Code and Codex payloads.
func TestHookEvents(t *testing.T) {
	const claudeBase = `"session_id":"9f1c2d3e-4b5a-6978-8a9b-0c1d2e3f4a5b","transcript_path":"/home/dev/.claude/projects/-home-dev-app/9f1c2d3e.jsonl","cwd":"/home/dev/app","permission_mode":"default"`
	const codexBase = `"session_id":"0199a7b2-1c3d-7e4f-8a9b-0c1d2e3f4a5b","turn_id":"7","transcript_path":"/home/dev/.codex/sessions/rollout.jsonl","cwd":"/home/dev/app","model":"gpt-5-codex"`
	cases := []struct {
		name     string
		agent    Agent
		payload  string
		typ      EventType
		session  string
		turn     string
		action   string
		content  string // exact, or with a leading "~" a substring
		absent   string // must not appear in content or metadata
		metadata map[string]any
		speaker  memory.RawSpeaker // 0: not checked
	}{
		{
			name: "claude UserPromptSubmit", agent: Claude,
			payload: `{` + claudeBase + `,"hook_event_name":"UserPromptSubmit","prompt":"deploy with ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345"}`,
			typ:     UserMessage, session: "9f1c2d3e-4b5a-6978-8a9b-0c1d2e3f4a5b",
			content: "deploy with ANTHROPIC_API_KEY=[REDACTED]", absent: "sk-ant-api03",
			metadata: map[string]any{"agent": "claude", "hook_event": "UserPromptSubmit", "cwd": "/home/dev/app", "permission_mode": "default",
				"transcript_path": "/home/dev/.claude/projects/-home-dev-app/9f1c2d3e.jsonl", "received_at": "2026-11-01T12:00:00Z"},
		},
		{
			name: "claude PreToolUse", agent: Claude,
			payload: `{` + claudeBase + `,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"curl -H \"Authorization: Bearer ghp_abcdefghijklmnopqrstuvwxyz0123456789\" https://api.github.com/user","description":"Who am I"},"tool_use_id":"toolu_01AbCdEf"}`,
			typ:     ToolCall, action: "toolu_01AbCdEf", session: "9f1c2d3e-4b5a-6978-8a9b-0c1d2e3f4a5b",
			content: `~{"tool_name":"Bash","tool_input":{"command":"curl -H \"Authorization: Bearer [REDACTED]\"`, absent: "ghp_",
			metadata: map[string]any{"tool_name": "Bash", "hook_event": "PreToolUse"},
		},
		{
			name: "claude PostToolUse", agent: Claude,
			payload: `{` + claudeBase + `,"hook_event_name":"PostToolUse","tool_name":"Write","tool_input":{"file_path":"/home/dev/app/.env","content":"DB_PASSWORD=correct-horse-battery-9\n"},"tool_response":{"filePath":"/home/dev/app/.env","success":true},"tool_use_id":"toolu_02"}`,
			typ:     ToolResult, action: "toolu_02",
			content: `{"tool_name":"Write","tool_input":{"file_path":"/home/dev/app/.env","content":"DB_PASSWORD=[REDACTED]\n"},"tool_response":{"filePath":"/home/dev/app/.env","success":true}}`,
			absent:  "correct-horse",
		},
		{
			name: "claude Notification", agent: Claude,
			payload: `{` + claudeBase + `,"hook_event_name":"Notification","message":"Claude needs your permission to use Bash","notification_type":"permission_prompt"}`,
			typ:     SessionSummary, content: "Claude needs your permission to use Bash", speaker: memory.SpeakerSystem,
			metadata: map[string]any{"notification_type": "permission_prompt"},
		},
		{
			name: "claude Stop", agent: Claude,
			payload: `{` + claudeBase + `,"hook_event_name":"Stop","stop_hook_active":false}`,
			typ:     SessionSummary, content: `{"stop_hook_active":false}`, speaker: memory.SpeakerSystem,
			metadata: map[string]any{"stop_hook_active": false, "hook_event": "Stop"},
		},
		{
			name: "claude SubagentStop with the last message", agent: Claude,
			payload: `{` + claudeBase + `,"hook_event_name":"SubagentStop","stop_hook_active":false,"agent_id":"a1","last_assistant_message":"Refactor done; 14 tests pass."}`,
			typ:     SessionSummary, content: "Refactor done; 14 tests pass.", speaker: memory.SpeakerAssistant,
			metadata: map[string]any{"agent_id": "a1"},
		},
		{
			name: "claude SessionStart (other events)", agent: Claude,
			payload: `{` + claudeBase + `,"hook_event_name":"SessionStart","source":"startup"}`,
			typ:     SessionSummary, content: `{"source":"startup"}`,
		},
		{
			name: "codex UserPromptSubmit", agent: Codex,
			payload: `{` + codexBase + `,"hook_event_name":"UserPromptSubmit","prompt":"fix the flaky test"}`,
			typ:     UserMessage, session: "0199a7b2-1c3d-7e4f-8a9b-0c1d2e3f4a5b", turn: "7", content: "fix the flaky test",
			metadata: map[string]any{"agent": "codex", "model": "gpt-5-codex"},
		},
		{
			name: "codex PreToolUse with argv", agent: Codex,
			payload: `{` + codexBase + `,"hook_event_name":"PreToolUse","tool_name":"shell","tool_input":{"command":["psql","--password","hunter2hunter2","-c","select 1"]},"call_id":"call_9"}`,
			typ:     ToolCall, turn: "7", action: "call_9",
			content: `{"tool_name":"shell","tool_input":{"command":["psql","--password","[REDACTED]","-c","select 1"]}}`, absent: "hunter2",
		},
		{
			name: "codex PostToolUse without a call id", agent: Codex,
			payload: `{` + codexBase + `,"hook_event_name":"PostToolUse","tool_name":"shell","tool_input":{"command":["ls"]},"tool_response":"a.go\nb.go\n"}`,
			typ:     ToolResult, turn: "", content: `{"tool_name":"shell","tool_input":{"command":["ls"]},"tool_response":"a.go\nb.go\n"}`,
			metadata: map[string]any{"agent_turn_id": "7"},
		},
		{
			name: "claude Stop with the last message", agent: Claude,
			payload: `{` + claudeBase + `,"hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"Shipped v2; the changelog is updated."}`,
			typ:     SessionSummary, content: "Shipped v2; the changelog is updated.", speaker: memory.SpeakerAssistant,
		},
		{
			name: "codex Stop", agent: Codex,
			payload: `{` + codexBase + `,"hook_event_name":"Stop","last_assistant_message":"All green."}`,
			typ:     SessionSummary, turn: "7", content: "All green.", speaker: memory.SpeakerAssistant,
		},
		{
			name: "codex Stop with a null last message", agent: Codex,
			payload: `{` + codexBase + `,"hook_event_name":"Stop","stop_hook_active":true,"last_assistant_message":null}`,
			typ:     SessionSummary, turn: "7", content: `{"last_assistant_message":null,"model":"gpt-5-codex","stop_hook_active":true,"turn_id":"7"}`, speaker: memory.SpeakerSystem,
		},
		{
			name: "codex notify agent-turn-complete", agent: Codex,
			payload: `{"type":"agent-turn-complete","thread-id":"0199b000-0000-7000-8000-000000000001","turn-id":"3","cwd":"/home/dev/app","input-messages":["rename the package"],"last-assistant-message":"Renamed pkg/util to pkg/text."}`,
			typ:     UserMessage, session: "0199b000-0000-7000-8000-000000000001", turn: "3", content: "rename the package",
			metadata: map[string]any{"hook_event": "agent-turn-complete", "cwd": "/home/dev/app"},
		},
		{
			name: "camelCase and a timestamp", agent: Claude,
			payload: `{"sessionId":"s-camel","hookEventName":"user-prompt-submit","prompt":"hi","timestamp":"2026-11-01T12:30:00+02:00"}`,
			typ:     UserMessage, session: "s-camel", content: "hi",
		},
		{
			name: "not a timestamp goes to metadata", agent: Claude,
			payload: `{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"hi","timestamp":"yesterday"}`,
			typ:     UserMessage, content: "hi", metadata: map[string]any{"agent_timestamp": "yesterday"},
		},
		{
			name: "no session anywhere", agent: Codex,
			payload: `{"hook_event_name":"Notification","message":"waiting"}`,
			typ:     SessionSummary, session: "codex-local", content: "waiting",
		},
		{
			name: "not JSON", agent: Claude,
			payload: "Traceback: password=hunter2hunter2\nsomething broke",
			typ:     SessionSummary, session: "claude-local", content: "Traceback: password=[REDACTED]\nsomething broke", absent: "hunter2",
			metadata: map[string]any{"payload_error": "hook payload is not a JSON object"},
		},
		{
			name: "JSON that is not an object", agent: Claude,
			payload: `["a", 1]`,
			typ:     SessionSummary, content: `["a", 1]`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			evs := hookEvents(t, tc.agent, tc.payload, nil)
			if len(evs) == 0 {
				t.Fatal("no events")
			}
			e := evs[0]
			if e.Type != tc.typ {
				t.Fatalf("type %v, want %v", e.Type, tc.typ)
			}
			if tc.session != "" && e.SessionID != tc.session {
				t.Fatalf("session %q, want %q", e.SessionID, tc.session)
			}
			if e.TurnID != tc.turn || e.ActionID != tc.action {
				t.Fatalf("turn %q action %q, want %q %q", e.TurnID, e.ActionID, tc.turn, tc.action)
			}
			if e.Source != tc.agent.captureSource() {
				t.Fatalf("source %q", e.Source)
			}
			if speaker := cmp.Or(e.Speaker, e.Type.Speaker()); tc.speaker != 0 && speaker != tc.speaker {
				t.Fatalf("speaker %v, want %v", speaker, tc.speaker)
			}
			c := contentOf(t, e)
			if sub, ok := strings.CutPrefix(tc.content, "~"); ok {
				if !strings.Contains(c, sub) {
					t.Fatalf("content %s lacks %s", c, sub)
				}
			} else if c != tc.content {
				t.Fatalf("content\n%s\nwant\n%s", c, tc.content)
			}
			if tc.absent != "" && (strings.Contains(c, tc.absent) || strings.Contains(string(e.Metadata), tc.absent)) {
				t.Fatalf("%q survived: %s %s", tc.absent, c, e.Metadata)
			}
			md := metadataOf(t, e)
			for k, v := range tc.metadata {
				if md[k] != v {
					t.Errorf("metadata %s = %v, want %v (%v)", k, md[k], v, md)
				}
			}
		})
	}
}

func TestHookEventsCodexNotifyGivesTheWholeTurn(t *testing.T) {
	evs := hookEvents(t, Codex, `{"type":"agent-turn-complete","thread-id":"t","turn-id":"3","input-messages":["one","two"],"last-assistant-message":"answer"}`, nil)
	if len(evs) != 3 {
		t.Fatalf("%d events", len(evs))
	}
	want := []struct {
		typ     EventType
		content string
	}{{UserMessage, "one"}, {UserMessage, "two"}, {AssistantMessage, "answer"}}
	for i, w := range want {
		if evs[i].Type != w.typ || contentOf(t, evs[i]) != w.content || evs[i].TurnID != "3" {
			t.Errorf("event %d: %v %q turn %q", i, evs[i].Type, contentOf(t, evs[i]), evs[i].TurnID)
		}
	}
}

func TestHookEventsSessionFromEnvironment(t *testing.T) {
	evs := hookEvents(t, Codex, `{"hook_event_name":"Stop"}`, map[string]string{"CODEX_SESSION_ID": " env-session "})
	if evs[0].SessionID != "env-session" || contentOf(t, evs[0]) != "Codex Stop" {
		t.Fatalf("%q %q", evs[0].SessionID, contentOf(t, evs[0]))
	}
}

func TestHookEventsEmptyAndHuge(t *testing.T) {
	if evs := hookEvents(t, Claude, " \n ", nil); len(evs) != 0 {
		t.Fatalf("empty payload gave %d events", len(evs))
	}
	big := strings.Repeat("é", MaxHookContentBytes) // twice the limit in bytes
	payload, _ := json.Marshal(map[string]any{"session_id": "s", "hook_event_name": "PostToolUse", "tool_name": "Read", "tool_response": big, "tool_use_id": "t"})
	evs := hookEvents(t, Claude, string(payload), nil)
	c := contentOf(t, evs[0])
	if len(c) > MaxHookContentBytes || !utf8.ValidString(c) || !strings.Contains(c, "[cut by memsvc-recorder:") {
		t.Fatalf("cut content: %d bytes, valid %v, tail %q", len(c), utf8.ValidString(c), c[len(c)-60:])
	}
}

func TestParseAgent(t *testing.T) {
	for in, want := range map[string]Agent{"claude": Claude, " Codex ": Codex} {
		if a, err := ParseAgent(in); err != nil || a != want {
			t.Errorf("ParseAgent(%q) = %q, %v", in, a, err)
		}
	}
	if _, err := ParseAgent("cursor"); err == nil {
		t.Error("unknown agent accepted")
	}
	if Claude.HiddenDir() != ".claude" || Codex.HiddenDir() != ".codex" {
		t.Error("hidden directories")
	}
}
