package engine

import (
	"slices"
	"testing"
	"time"
)

// TestRecordTimeTerms: the time field holds the terms of event_time,
// else session_date, else the creation time in UTC; an unreadable value
// counts as absent.
func TestRecordTimeTerms(t *testing.T) {
	created := time.Date(2026, 3, 1, 23, 30, 0, 0, time.FixedZone("", -2*3600)) // 2026-03-02 01:30 UTC
	day := func(ymd, md, month, weekday string) []string {
		return []string{"t:" + ymd[:4], "t:" + ymd[:7], "t:" + month, "t:" + ymd, "t:" + md, "t:" + weekday}
	}
	for _, tc := range []struct {
		md   string
		want []string
	}{
		{`{"event_time":"2023-05-07T23:30:00-02:00","session_date":"2023-06-01"}`, day("2023-05-07", "05-07", "may", "sunday")}, // in its own offset
		{`{"event_time":"2023-05-07"}`, day("2023-05-07", "05-07", "may", "sunday")},
		{`{"event_time":"yesterday","session_date":"2023-06-10"}`, day("2023-06-10", "06-10", "june", "saturday")},
		{`{"session_date":"2023-06-10T09:00:00Z"}`, day("2023-06-10", "06-10", "june", "saturday")},
		{`{"event_time":1683500000,"session_date":["2023-06-10"]}`, day("2026-03-02", "03-02", "march", "monday")},
		{`{"session":"s1"}`, day("2026-03-02", "03-02", "march", "monday")},
		{`not json "event_time"`, day("2026-03-02", "03-02", "march", "monday")},
		{``, day("2026-03-02", "03-02", "march", "monday")},
	} {
		if got := recordTimeTerms(recordMetaFields([]byte(tc.md)), created); !slices.Equal(got, tc.want) {
			t.Errorf("metadata %s: %q, want %q", tc.md, got, tc.want)
		}
	}
}

// TestRecordSpeakerTerms: the speaker field holds the tokenizer's terms
// of metadata speaker, a string, at most maxSpeakerTerms of them.
func TestRecordSpeakerTerms(t *testing.T) {
	for _, tc := range []struct {
		md   string
		want []string
	}{
		{`{"speaker":"Maya"}`, []string{"s:maya"}},
		{`{"speaker":"Dr. Priya Shah"}`, []string{"s:dr", "s:priya", "s:shah"}},
		{`{"speaker":42}`, nil},
		{`{"speaker":""}`, nil},
		{`{"speaker":"a1 b2 c3 d4 e5 f6 g7 h8 i9 j10"}`, []string{"s:a1", "s:b2", "s:c3", "s:d4", "s:e5", "s:f6", "s:g7", "s:h8"}},
	} {
		if got := recordSpeakerTerms(recordMetaFields([]byte(tc.md))); !slices.Equal(got, tc.want) {
			t.Errorf("metadata %s: %q, want %q", tc.md, got, tc.want)
		}
	}
}
