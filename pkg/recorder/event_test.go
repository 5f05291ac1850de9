package recorder

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

func TestParseEventValidation(t *testing.T) {
	long := strings.Repeat("s", memory.MaxLabelBytes+1)
	cases := []struct {
		name  string
		line  string
		field string // "": valid; otherwise the field the error names ("-" for the event)
	}{
		{"minimal", `{"session_id":"s","event_type":"user_message","content":"hi"}`, ""},
		{"every field", `{"session_id":" s ","event_type":"tool_call","content":{"cmd":"ls"},"turn_id":"t","topic_id":"p","action_id":"a","source":"claude","speaker":"assistant","timestamp":"2026-11-01T13:00:00+01:00","visibility":"sealed","secrecy_level":"secret","metadata":{"k":1},"meta":{"intent":"check"}}`, ""},
		{"unknown fields ignored", `{"session_id":"s","event_type":"error","content":"x","extra":[1,2]}`, ""},
		{"null optionals", `{"session_id":"s","event_type":"command","content":"x","turn_id":null,"speaker":null,"timestamp":null,"metadata":null,"meta":null}`, ""},
		{"number content", `{"session_id":"s","event_type":"command","content":42}`, ""},
		{"empty object content", `{"session_id":"s","event_type":"command","content":{}}`, ""},
		{"metadata need not be an object", `{"session_id":"s","event_type":"command","content":"x","metadata":[1]}`, ""},

		{"not JSON", `hello`, "-"},
		{"array", `[1]`, "-"},
		{"truncated", `{"session_id":"s"`, "-"},
		{"two values", `{} {}`, "-"},
		{"invalid UTF-8", "{\"session_id\":\"s\xff\",\"event_type\":\"error\",\"content\":\"x\"}", "-"},
		{"missing session", `{"event_type":"error","content":"x"}`, "session_id"},
		{"blank session", `{"session_id":"  ","event_type":"error","content":"x"}`, "session_id"},
		{"numeric session", `{"session_id":7,"event_type":"error","content":"x"}`, "session_id"},
		{"session too long", `{"session_id":"` + long + `","event_type":"error","content":"x"}`, "session_id"},
		{"turn too long", `{"session_id":"s","turn_id":"` + long + `","event_type":"error","content":"x"}`, "turn_id"},
		{"missing type", `{"session_id":"s","content":"x"}`, "event_type"},
		{"unknown type", `{"session_id":"s","event_type":"chat","content":"x"}`, "event_type"},
		{"type in capitals", `{"session_id":"s","event_type":"USER_MESSAGE","content":"x"}`, "event_type"},
		{"missing content", `{"session_id":"s","event_type":"error"}`, "content"},
		{"null content", `{"session_id":"s","event_type":"error","content":null}`, "content"},
		{"blank content", `{"session_id":"s","event_type":"error","content":" \n "}`, "content"},
		{"bad speaker", `{"session_id":"s","event_type":"error","content":"x","speaker":"robot"}`, "speaker"},
		{"bad visibility", `{"session_id":"s","event_type":"error","content":"x","visibility":"public"}`, "visibility"},
		{"bad secrecy", `{"session_id":"s","event_type":"error","content":"x","secrecy_level":"top"}`, "secrecy_level"},
		{"bad timestamp", `{"session_id":"s","event_type":"error","content":"x","timestamp":"yesterday"}`, "timestamp"},
		{"timestamp without zone", `{"session_id":"s","event_type":"error","content":"x","timestamp":"2026-11-01T12:00:00"}`, "timestamp"},
		{"numeric turn", `{"session_id":"s","event_type":"error","content":"x","turn_id":5}`, "turn_id"},
		{"meta not an object", `{"session_id":"s","event_type":"error","content":"x","meta":"why"}`, "meta"},
		{"meta with a bad field", `{"session_id":"s","event_type":"error","content":"x","meta":{"confidence":"high"}}`, "meta"},
		{"meta out of range", `{"session_id":"s","event_type":"error","content":"x","meta":{"confidence":7}}`, "-"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := ParseEvent([]byte(tc.line))
			if tc.field == "" {
				if err != nil {
					t.Fatalf("ParseEvent: %v", err)
				}
				return
			}
			var ee *EventError
			if !errors.As(err, &ee) || !errors.Is(err, ErrInvalidEvent) {
				t.Fatalf("ParseEvent = %+v, %v; want an EventError", ev, err)
			}
			want := tc.field
			if want == "-" {
				want = ""
			}
			if ee.Field != want {
				t.Fatalf("error names field %q, want %q: %v", ee.Field, want, err)
			}
		})
	}
}

func TestParseEventValues(t *testing.T) {
	ev, err := ParseEvent([]byte(`  {"session_id":" s1 ","event_type":"tool_result","content":{"b":1, "a":2},"turn_id":" t ","topic_id":"","action_id":"a1","source":" hook ","timestamp":"2026-11-01T13:00:00.5+01:00"}  `))
	if err != nil {
		t.Fatal(err)
	}
	if ev.SessionID != "s1" || ev.TurnID != "t" || ev.TopicID != "" || ev.ActionID != "a1" || ev.Source != "hook" || ev.Type != ToolResult {
		t.Fatalf("fields: %+v", ev)
	}
	if want := time.Date(2026, 11, 1, 12, 0, 0, 5e8, time.UTC); !ev.Timestamp.Equal(want) || ev.Timestamp.Location() != time.UTC {
		t.Fatalf("timestamp %v, want %v in UTC", ev.Timestamp, want)
	}
	if string(ev.Content) != `{"b":1, "a":2}` {
		t.Fatalf("content kept as %s", ev.Content)
	}
	e := &EventError{Line: 7, Field: "content", Msg: "must not be blank"}
	if e.Error() != "line 7: invalid capture event: content: must not be blank" {
		t.Fatalf("error text %q", e)
	}
}

// TestEventTypeMapping is the spec's table: raw source and inferred
// speaker per event type.
func TestEventTypeMapping(t *testing.T) {
	cases := []struct {
		name    string
		source  memory.RawSource
		speaker memory.RawSpeaker
	}{
		{"user_message", memory.SourceConversation, memory.SpeakerUser},
		{"assistant_message", memory.SourceConversation, memory.SpeakerAssistant},
		{"tool_call", memory.SourceToolIO, memory.SpeakerTool},
		{"tool_result", memory.SourceToolIO, memory.SpeakerTool},
		{"command", memory.SourceToolIO, memory.SpeakerTool},
		{"file_change", memory.SourceToolIO, memory.SpeakerSystem},
		{"error", memory.SourceToolIO, memory.SpeakerSystem},
		{"session_summary", memory.SourceSummary, memory.SpeakerSystem},
	}
	if len(cases) != len(eventTypeNames)-1 {
		t.Fatalf("table covers %d of %d event types", len(cases), len(eventTypeNames)-1)
	}
	for _, tc := range cases {
		ty, err := ParseEventType(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if ty.String() != tc.name || ty.Source() != tc.source || ty.Speaker() != tc.speaker {
			t.Errorf("%s: source %v speaker %v", tc.name, ty.Source(), ty.Speaker())
		}
		// Through the whole conversion, with and without an explicit
		// speaker.
		for _, explicit := range []string{"", "assistant"} {
			line := `{"session_id":"s","event_type":"` + tc.name + `","content":"x"`
			want := tc.speaker
			if explicit != "" {
				line += `,"speaker":"` + explicit + `"`
				want = memory.SpeakerAssistant
			}
			e := mustEntry(t, line+"}")
			if e.req.Speaker != want || e.req.Source != tc.source {
				t.Errorf("%s speaker %q: got %v/%v", tc.name, explicit, e.req.Source, e.req.Speaker)
			}
		}
	}
}

func mustEntry(t *testing.T, line string) entry {
	t.Helper()
	ev, err := ParseEvent([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	e, err := toEntry(&ev, memory.NewIDSource(nil, nil).New(), "/work/dir")
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func text(t *testing.T, req *memory.EncodeStoreRawRequest) string {
	t.Helper()
	s, ok := req.Content.Text()
	if !ok {
		t.Fatalf("content is not text: %+v", req.Content)
	}
	return s
}

// TestToEntry: defaults, the metadata object, and redaction of content,
// metadata and meta before anything leaves the process.
func TestToEntry(t *testing.T) {
	e := mustEntry(t, `{"session_id":"s1","event_type":"tool_call","content":{"cmd":"curl","headers":{"Authorization":"Bearer abcdefgh12345678"},"token":{"x":1}},`+
		`"action_id":"a1","source":"claude","timestamp":"2026-11-01T13:00:00+01:00","turn_id":"t1","topic_id":"deploy",`+
		`"metadata":{"api_key":"k-123456789","note":"password=hunter2hunter2","n":3},"meta":{"intent":"ship it","rationale":"token=sk-abcdefghijklmnopqrstuvwxyz"}}`)
	req := &e.req
	if req.RecordID == nil || req.RecordID.IsNil() {
		t.Fatal("no client-generated record id")
	}
	if req.Visibility != memory.VisibilityNormal || req.SecrecyLevel != memory.SecrecySensitive {
		t.Fatalf("defaults: %v %v", req.Visibility, req.SecrecyLevel)
	}
	if req.SessionID != "s1" || *req.TurnID != "t1" || *req.TopicID != "deploy" {
		t.Fatalf("ids: %q %q %q", req.SessionID, *req.TurnID, *req.TopicID)
	}
	got := text(t, req)
	if want := `{"cmd":"curl","headers":{"Authorization":"[REDACTED]"},"token":"[REDACTED]"}`; got != want {
		t.Fatalf("content %s, want %s", got, want)
	}
	var md map[string]any
	if err := json.Unmarshal(req.Metadata, &md); err != nil {
		t.Fatal(err)
	}
	if md["recorder"] != "memsvc-recorder" || md["event_type"] != "tool_call" || md["action_id"] != "a1" || md["capture_source"] != "claude" ||
		md["observed_at"] != "2026-11-01T12:00:00Z" || md["recorder_cwd"] != "/work/dir" {
		t.Fatalf("metadata %v", md)
	}
	cm := md["capture_metadata"].(map[string]any)
	if cm["api_key"] != "[REDACTED]" || cm["note"] != "password=[REDACTED]" || cm["n"] != float64(3) {
		t.Fatalf("capture_metadata %v", cm)
	}
	if req.Meta == nil || *req.Meta.Intent != "ship it" || strings.Contains(*req.Meta.Rationale, "sk-") {
		t.Fatalf("meta %+v", req.Meta)
	}
	if e.key == (dedupeKey{}) {
		t.Fatal("an event with ids has no dedupe key")
	}

	// A plain event: no optional metadata keys, no meta, no identity.
	e = mustEntry(t, `{"session_id":"s1","event_type":"user_message","content":"my password is: hunter2hunter2 ok","visibility":"private_scratch","secrecy_level":"public"}`)
	md = nil
	_ = json.Unmarshal(e.req.Metadata, &md)
	if len(md) != 3 || e.req.Meta != nil || e.req.TurnID != nil || e.key != (dedupeKey{}) {
		t.Fatalf("plain event: metadata %v meta %v key %v", md, e.req.Meta, e.key)
	}
	if e.req.Visibility != memory.VisibilityPrivateScratch || e.req.SecrecyLevel != memory.SecrecyPublic {
		t.Fatalf("explicit visibility and secrecy: %v %v", e.req.Visibility, e.req.SecrecyLevel)
	}

	// Text content keeps everything but the secret; JSON content keeps
	// its member order and spacing.
	e = mustEntry(t, `{"session_id":"s","event_type":"command","content":"export OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx\nls -la"}`)
	if got := text(t, &e.req); got != "export OPENAI_API_KEY=[REDACTED]\nls -la" {
		t.Fatalf("text content %q", got)
	}
	e = mustEntry(t, `{"session_id":"s","event_type":"command","content":{"z":1, "a":[true,null]}}`)
	if got := text(t, &e.req); got != `{"z":1, "a":[true,null]}` {
		t.Fatalf("JSON content %q", got)
	}
}
