package engine

import (
	"bytes"
	"encoding/json"
	"time"

	"memsvc.dev/memsvc/pkg/engine/rank"
	"memsvc.dev/memsvc/pkg/engine/textindex"
	"memsvc.dev/memsvc/pkg/memory"
)

// A record's time and speaker are searchable (docs/recall-ranking.md,
// issue 16): its time as the terms of rank.TimeTerms ("2023", "2023-05",
// "may", "2023-05-07", "05-07", "sunday"), so "What happened in May
// 2023?" finds the records of that month, and its speaker's name, so
// "What did Maya buy?" prefers Maya's turns. Both come from metadata
// keys a client sets (docs/api.md, "POST /v1/encode"):
//
//   - event_time: when what the record tells happened or was said, RFC
//     3339 ("2023-05-07T14:00:00+02:00", terms in its own offset) or a
//     date ("2023-05-07");
//   - session_date: the date of the session it belongs to, in the same
//     forms, used when event_time is absent or unreadable;
//   - otherwise the record's creation time, in UTC;
//   - speaker: who said it, a string, indexed with the text's tokenizer.

// metaFields are the metadata values the index's fields read.
type metaFields struct {
	EventTime   string `json:"event_time"`
	SessionDate string `json:"session_date"`
	Speaker     string `json:"speaker"`
}

// recordMetaFields reads the field values of metadata md; values of
// other types than strings, and unreadable metadata, count as absent.
func recordMetaFields(md memory.JSON) metaFields {
	var v metaFields
	if !bytes.Contains(md, []byte(`"event_time"`)) && !bytes.Contains(md, []byte(`"session_date"`)) &&
		!bytes.Contains(md, []byte(`"speaker"`)) {
		return v
	}
	var raw struct {
		EventTime   json.RawMessage `json:"event_time"`
		SessionDate json.RawMessage `json:"session_date"`
		Speaker     json.RawMessage `json:"speaker"`
	}
	if json.Unmarshal(md, &raw) != nil {
		return v
	}
	str := func(r json.RawMessage) string {
		var s string
		if len(r) > 0 && r[0] == '"' && json.Unmarshal(r, &s) == nil {
			return s
		}
		return ""
	}
	return metaFields{EventTime: str(raw.EventTime), SessionDate: str(raw.SessionDate), Speaker: str(raw.Speaker)}
}

// recordTimeTerms are the time-field terms of a record with metadata
// fields md created at created: those of event_time, else session_date,
// else the creation time in UTC.
func recordTimeTerms(md metaFields, created time.Time) []string {
	t, g := created.UTC(), rank.Day
	for _, s := range []string{md.EventTime, md.SessionDate} {
		if at, ok := metaTime(s); ok {
			t = at
			break
		}
	}
	if t.IsZero() {
		return nil
	}
	terms := rank.TimeTerms(t, g)
	for i, term := range terms {
		terms[i] = timePrefix + term
	}
	return terms
}

// metaTime reads a metadata time: RFC 3339 or a date (YYYY-MM-DD).
func metaTime(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, true
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, true
	}
	return time.Time{}, false
}

// maxSpeakerTerms bounds the speaker field: a name has a few words.
const maxSpeakerTerms = 8

// recordSpeakerTerms are the speaker-field terms of a record: the terms
// of its speaker's name (the first maxSpeakerTerms).
func recordSpeakerTerms(md metaFields) []string {
	if md.Speaker == "" {
		return nil
	}
	terms := textindex.Tokenize(md.Speaker)
	terms = terms[:min(len(terms), maxSpeakerTerms)]
	for i, term := range terms {
		terms[i] = speakerPrefix + term
	}
	return terms
}
