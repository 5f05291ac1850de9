package recorder

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/redact"
)

// FuzzParseEvent: ParseEvent never panics; an accepted event converts into
// a raw request the server would accept, with redacted text, that survives
// a round trip through the spool encoding.
func FuzzParseEvent(f *testing.F) {
	for _, s := range []string{
		`{"session_id":"s","event_type":"user_message","content":"hi"}`,
		`{"session_id":"s","event_type":"tool_call","content":{"token":"x","a":[1,{"password":"p"}]},"turn_id":"t","action_id":"a","timestamp":"2026-11-01T12:00:00Z","metadata":{"api_key":"k"},"meta":{"intent":"i","confidence":0.5}}`,
		`{"session_id":"s","event_type":"command","content":"Authorization: Bearer abcdefgh12345678","visibility":"sealed","secrecy_level":"secret","speaker":"tool"}`,
		`{"session_id":"s","event_type":"error","content":42}`,
		`{"session_id":"","event_type":"x"}`,
		`[]`, `null`, `{"session_id":"s","event_type":"error","content":"\u0000"}`,
	} {
		f.Add([]byte(s))
	}
	ids := memory.NewIDSource(nil, nil)
	f.Fuzz(func(t *testing.T, line []byte) {
		ev, err := ParseEvent(line)
		if err != nil {
			if !strings.Contains(err.Error(), "invalid capture event") {
				t.Fatalf("error without context: %v", err)
			}
			return
		}
		e, err := toEntry(&ev, ids.New(), "")
		if err != nil {
			return // e.g. content that redacts to something invalid
		}
		txt, ok := e.req.Content.Text()
		if !ok || !utf8.ValidString(txt) || strings.TrimSpace(txt) == "" {
			t.Fatalf("content %q", txt)
		}
		if redact.Text(txt) != txt {
			t.Fatalf("content not fully redacted: %q", txt)
		}
		rec := memory.RawJournalRecord{SessionID: e.req.SessionID, TurnID: e.req.TurnID, TopicID: e.req.TopicID, Source: e.req.Source,
			Speaker: e.req.Speaker, Visibility: e.req.Visibility, SecrecyLevel: e.req.SecrecyLevel, Content: e.req.Content,
			Meta: memory.NormalizeMeta(e.req.Meta, memory.TriggerEncodeStoreRaw, time.Now())}
		if err := rec.Validate(); err != nil {
			t.Fatalf("the server would refuse %+v: %v", e.req, err)
		}
		b, err := json.Marshal(&e.req)
		if err != nil {
			t.Fatal(err)
		}
		var back memory.EncodeStoreRawRequest
		if err := json.Unmarshal(b, &back); err != nil || *back.RecordID != *e.req.RecordID {
			t.Fatalf("spool round trip: %v", err)
		}
	})
}

// FuzzHookEvents: any payload maps to events that validate, without
// panicking.
func FuzzHookEvents(f *testing.F) {
	for _, s := range []string{
		`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t"}`,
		`{"type":"agent-turn-complete","thread-id":"t","turn-id":1,"input-messages":["a",{"x":1}],"last-assistant-message":"b"}`,
		`{"hook_event_name":"Stop"}`, `not json`, `"string"`, `{}`, `{"session_id":5,"prompt":null}`,
	} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, payload []byte, codex bool) {
		agent := Claude
		if codex {
			agent = Codex
		}
		for _, ev := range HookEvents(HookInput{Agent: agent, Payload: payload}) {
			if err := ev.Validate(); err != nil {
				t.Fatalf("invalid event from %q: %v", payload, err)
			}
			if !json.Valid(ev.Metadata) {
				t.Fatalf("metadata %q", ev.Metadata)
			}
		}
	})
}
