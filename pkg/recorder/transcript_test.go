package recorder

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// parseFixture runs every line of a transcript fixture through the
// parser, as the watcher does, and checks every event validates.
func parseFixture(t *testing.T, agent Agent, name string) ([]Event, transcriptContext) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "transcripts", name))
	if err != nil {
		t.Fatal(err)
	}
	var ctx transcriptContext
	var out []Event
	for line := range bytes.Lines(data) {
		for _, ev := range transcriptEvents(agent, "/t/"+name, bytes.TrimSuffix(line, []byte("\n")), &ctx) {
			if err := ev.Validate(); err != nil {
				t.Fatalf("event from %s does not validate: %v", line, err)
			}
			if _, err := toEntry(&ev, ev.RecordID, ""); err != nil {
				t.Fatalf("event from %s does not convert: %v", line, err)
			}
			out = append(out, ev)
		}
	}
	return out, ctx
}

// want describes one expected event.
type wantEvent struct {
	typ      EventType
	speaker  memory.RawSpeaker
	content  string // substring
	action   string
	turn     string
	metadata map[string]any
}

func checkEvents(t *testing.T, got []Event, want []wantEvent, session string, secrets ...string) {
	t.Helper()
	if len(got) != len(want) {
		for _, e := range got {
			t.Logf("%v %s", e.Type, contentOf(t, e))
		}
		t.Fatalf("%d events, want %d", len(got), len(want))
	}
	ids := map[memory.ID]bool{}
	for i, w := range want {
		e := got[i]
		c := contentOf(t, e)
		if e.Type != w.typ || e.Speaker != w.speaker || !strings.Contains(c, w.content) || e.ActionID != w.action || e.TurnID != w.turn {
			t.Errorf("event %d: %v %v action %q turn %q %s\nwant %v %v action %q turn %q containing %s", i, e.Type, e.Speaker, e.ActionID, e.TurnID, c, w.typ, w.speaker, w.action, w.turn, w.content)
		}
		if e.SessionID != session || e.Timestamp.IsZero() || e.RecordID.IsNil() || ids[e.RecordID] {
			t.Errorf("event %d: session %q time %v id %v (seen: %v)", i, e.SessionID, e.Timestamp, e.RecordID, ids[e.RecordID])
		}
		if ts, ok := e.RecordID.Time(); !ok || !ts.Equal(e.Timestamp.Truncate(time.Millisecond)) {
			t.Errorf("event %d: id %v carries %v, want the line's time %v", i, e.RecordID, ts, e.Timestamp)
		}
		ids[e.RecordID] = true
		md := metadataOf(t, e)
		if md["origin"] != "transcript" || md["transcript_path"] == nil {
			t.Errorf("event %d: metadata %v", i, md)
		}
		for k, v := range w.metadata {
			if md[k] != v {
				t.Errorf("event %d: metadata %s = %v, want %v", i, k, md[k], v)
			}
		}
		for _, s := range secrets {
			if strings.Contains(c, s) || strings.Contains(string(e.Metadata), s) {
				t.Errorf("event %d: %q survived: %s", i, s, c)
			}
		}
	}
}

func TestClaudeTranscript(t *testing.T) {
	got, ctx := parseFixture(t, Claude, "claude-session.jsonl")
	const session = "7d2f9c41-3b8e-4a65-9f0d-2c1e8b7a6d54"
	a, tool := memory.SpeakerAssistant, memory.SpeakerAssistant
	checkEvents(t, got, []wantEvent{
		{typ: AssistantMessage, speaker: a, content: "I'll run the checkout test a few times",
			metadata: map[string]any{"message_id": "msg_01Qx7RkT2vN8", "entry_uuid": "a0000000-0000-4000-8000-000000000003", "model": "claude-sonnet-4-5", "cwd": "/home/dev/shop"}},
		{typ: ToolCall, speaker: tool, action: "toolu_01HkT5cQ", content: `{"tool_name":"Bash","tool_input":{"command":"go test -count=10 -run TestCheckout ./cart/"`,
			metadata: map[string]any{"message_id": "msg_01Qx7RkT2vN8", "tool_use_id": "toolu_01HkT5cQ", "tool_name": "Bash"}},
		{typ: AssistantMessage, speaker: a, content: "STRIPE_KEY=[REDACTED]"},
		{typ: ToolCall, speaker: tool, action: "toolu_01Wq9ZpE", content: `DB_PASSWORD=[REDACTED]`},
		{typ: ErrorEvent, speaker: memory.SpeakerSystem, content: "API Error: 529 Overloaded"},
		{typ: AssistantMessage, speaker: a, content: "Subagent: cart_test.go", metadata: map[string]any{"is_sidechain": true, "agent_id": "5e1a9c07", "model": "claude-haiku-4-5"}},
		{typ: AssistantMessage, speaker: a, content: "Done: the test passed 200 runs in a row."},
	}, session, "sk_live_4eC39", "correct-horse")
	if ctx.Session != session || ctx.CWD != "/home/dev/shop" {
		t.Fatalf("context %+v", ctx)
	}
}

func TestCodexTranscript(t *testing.T) {
	got, ctx := parseFixture(t, Codex, "codex-rollout.jsonl")
	const session, turn = "0199f2a4-6b1c-7d3e-8f50-a1b2c3d4e5f6", "019a0b1c-2d3e-7f40-8a51-b2c3d4e5f607"
	a := memory.SpeakerAssistant
	checkEvents(t, got, []wantEvent{
		{typ: ToolCall, speaker: a, action: "call_Jx81bQ2m", turn: turn, content: `{"tool_name":"shell_command","tool_input":{"command":"rg -n 'expiry' cart/"`,
			metadata: map[string]any{"call_id": "call_Jx81bQ2m", "model": "gpt-5.1-codex", "cwd": "/home/dev/shop"}},
		{typ: ToolCall, speaker: a, action: "call_Pa55wd9z", turn: turn, content: `{"tool_name":"apply_patch","tool_input":"*** Begin Patch`},
		{typ: AssistantMessage, speaker: a, turn: turn, content: "The expiry is now a variable", metadata: map[string]any{"phase": "final_answer"}},
	}, session, "sk-proj-Zx81")
	if ctx.Session != session || ctx.Turn != turn || ctx.Model != "gpt-5.1-codex" {
		t.Fatalf("context %+v", ctx)
	}
}

func TestCodexLegacyTranscript(t *testing.T) {
	got, _ := parseFixture(t, Codex, "codex-rollout-legacy.jsonl")
	for i := range got {
		got[i].Timestamp = time.Date(2025, 4, 22, 17, 2, 5, 0, time.UTC) // the old format has no line times
		got[i].RecordID = transcriptID(Codex, got[i].SessionID, "x", i, got[i].Timestamp)
	}
	checkEvents(t, got, []wantEvent{
		{typ: ToolCall, speaker: memory.SpeakerAssistant, action: "call_legacy1", content: `{"tool_name":"shell","tool_input":{"command":["ls","-la"]}}`},
		{typ: AssistantMessage, speaker: memory.SpeakerAssistant, content: "There is one file, README.md."},
	}, "5973b6c0-94b8-487b-a530-2aeb6098ae0e")
}

// TestTranscriptIDs: a line gives the same ids whenever it is read; the
// blocks of a line, lines, sessions and agents give different ones; a line
// without a time still gets a stable id.
func TestTranscriptIDs(t *testing.T) {
	line := []byte(`{"type":"assistant","sessionId":"s","uuid":"u1","timestamp":"2026-11-03T09:14:05.611Z","message":{"content":[{"type":"text","text":"a"},{"type":"tool_use","id":"t1","name":"Bash","input":{}}]}}`)
	first := transcriptEvents(Claude, "/a/s.jsonl", line, &transcriptContext{})
	again := transcriptEvents(Claude, "/elsewhere/copy.jsonl", line, &transcriptContext{})
	if len(first) != 2 || first[0].RecordID == first[1].RecordID || first[0].RecordID != again[0].RecordID || first[1].RecordID != again[1].RecordID {
		t.Fatalf("ids %v then %v", ids(first), ids(again))
	}
	other := transcriptEvents(Claude, "/a/s.jsonl", bytes.Replace(line, []byte(`"u1"`), []byte(`"u2"`), 1), &transcriptContext{})
	if other[0].RecordID == first[0].RecordID {
		t.Fatal("two lines share an id")
	}
	noTime := transcriptEvents(Codex, "/c/rollout-x.jsonl", []byte(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi"}]}`), &transcriptContext{})
	noTime2 := transcriptEvents(Codex, "/c/rollout-x.jsonl", []byte(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi"}]}`), &transcriptContext{})
	if len(noTime) != 1 || noTime[0].RecordID != noTime2[0].RecordID || noTime[0].RecordID[6]>>4 != 8 {
		t.Fatalf("id without a time: %v %v", ids(noTime), ids(noTime2))
	}
	if noTime[0].SessionID != "rollout-x" {
		t.Fatalf("session from the file name: %q", noTime[0].SessionID)
	}
	if s := sessionFromPath("/x/rollout-2026-11-03T10-02-11-0199f2a4-6b1c-7d3e-8f50-a1b2c3d4e5f6.jsonl"); s != "0199f2a4-6b1c-7d3e-8f50-a1b2c3d4e5f6" {
		t.Fatalf("session of a rollout name: %q", s)
	}
}

func ids(evs []Event) []memory.ID {
	var out []memory.ID
	for _, e := range evs {
		out = append(out, e.RecordID)
	}
	return out
}

// FuzzTranscriptEvents: no line, of either agent, makes the parsers panic
// or produce an event the pipeline would refuse.
func FuzzTranscriptEvents(f *testing.F) {
	for _, name := range []string{"claude-session.jsonl", "codex-rollout.jsonl", "codex-rollout-legacy.jsonl"} {
		data, err := os.ReadFile(filepath.Join("testdata", "transcripts", name))
		if err != nil {
			f.Fatal(err)
		}
		for line := range bytes.Lines(data) {
			f.Add(bytes.TrimSuffix(line, []byte("\n")))
		}
	}
	f.Add([]byte(`{"type":"assistant","message":{"content":"\u0000"}}`))
	f.Add([]byte(`{"type":"response_item","payload":{"type":"function_call","name":"x","arguments":"\"{\\\"a\\\":1}\""}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		for _, agent := range Agents() {
			ctx := transcriptContext{}
			for _, ev := range transcriptEvents(agent, "/f/x.jsonl", line, &ctx) {
				if err := ev.Validate(); err != nil {
					t.Fatalf("%s: invalid event from %q: %v", agent, line, err)
				}
				if _, err := toEntry(&ev, ev.RecordID, ""); err != nil {
					t.Fatalf("%s: event from %q does not convert: %v", agent, line, err)
				}
				if !json.Valid(ev.Metadata) {
					t.Fatalf("metadata %s", ev.Metadata)
				}
			}
		}
	})
}
