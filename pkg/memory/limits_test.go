package memory

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func u32(v uint32) *uint32 { return &v }
func str(s string) *string { return &s }

// TestRequestBounds: every bounded field is accepted at its maximum and
// refused one past it, with the code and field a client needs.
func TestRequestBounds(t *testing.T) {
	words := func(n int) *string { return str(strings.Repeat("word ", n)) }
	type validator interface{ Validate() error }
	for _, tc := range []struct {
		name  string
		req   validator
		code  Code   // "" means valid
		field string // expected at the start of the message
	}{
		{"recall limit at max", &RecallQueryRequest{Limit: MaxRecallLimit}, "", ""},
		{"recall limit over max", &RecallQueryRequest{Limit: 4294967295}, CodeValidation, "limit:"},
		{"recall cue text at max", &RecallQueryRequest{Cue: RecallCue{Text: str(strings.Repeat("a", MaxCueTextBytes))}}, "", ""},
		{"recall cue text over max", &RecallQueryRequest{Cue: RecallCue{Text: str(strings.Repeat("a", MaxCueTextBytes+1))}}, CodeContentTooLarge, "cue.text:"},
		{"recall cue words at max", &RecallQueryRequest{Cue: RecallCue{Text: words(MaxQueryWords)}}, "", ""},
		{"recall cue words over max", &RecallQueryRequest{Cue: RecallCue{Text: words(MaxQueryWords + 1)}}, CodeValidation, "cue.text:"},
		{"recall cue CJK characters count as words", &RecallQueryRequest{Cue: RecallCue{Text: str(strings.Repeat("記", MaxQueryWords+1))}}, CodeValidation, "cue.text:"},
		{"recall cue emotion out of range", &RecallQueryRequest{Cue: RecallCue{Emotion: &EmotionVector{Joy: 1.5}}}, CodeValidation, "cue.emotion.joy:"},
		{"raw limit 0 is legal", &RecallRawQueryRequest{Limit: 0}, "", ""},
		{"raw limit at max", &RecallRawQueryRequest{Limit: MaxRawRecallLimit}, "", ""},
		{"raw limit over max", &RecallRawQueryRequest{Limit: 4294967295}, CodeValidation, "limit:"},
		{"raw query over max", &RecallRawQueryRequest{Query: str(strings.Repeat("b", MaxCueTextBytes+1))}, CodeContentTooLarge, "query:"},
		{"raw session over max", &RecallRawQueryRequest{SessionID: str(strings.Repeat("s", MaxLabelBytes+1))}, CodeValidation, "session_id:"},
		{"associate limit over max", &RecallAssociateRequest{Limit: MaxAssociateLimit + 1}, CodeValidation, "limit:"},
		{"associate depth over max", &RecallAssociateRequest{Depth: MaxAssociateDepth + 1}, CodeValidation, "depth:"},
		{"timeline limit absent", &RecallTimelineRequest{}, "", ""},
		{"timeline limit at max", &RecallTimelineRequest{Limit: u32(MaxTimelineLimit)}, "", ""},
		{"timeline limit over max", &RecallTimelineRequest{Limit: u32(MaxTimelineLimit + 1)}, CodeValidation, "limit:"},
		{"timeline emotion filter NaN", &RecallTimelineRequest{EmotionFilter: &EmotionVector{Fear: math.NaN()}}, CodeValidation, "emotion_filter.fear:"},
		{"graph nodes at max", &RecallGraphRequest{LimitNodes: MaxGraphNodes}, "", ""},
		{"graph nodes over max", &RecallGraphRequest{LimitNodes: MaxGraphNodes + 1}, CodeValidation, "limit_nodes:"},
		{"forecast ids over max", &DecayForecastRequest{RecordIDs: make([]ID, MaxForecastRecords+1)}, CodeValidation, "record_ids:"},
		{"decay tick default", &DecayTickRequest{}, "", ""},
		{"decay tick at max", &DecayTickRequest{TickDurationSeconds: u32(MaxDecayTickSeconds)}, "", ""},
		{"decay tick over max", &DecayTickRequest{TickDurationSeconds: u32(4294967295)}, CodeValidation, "tick_duration_seconds:"},
		{"decay tick over max allowed", &DecayTickRequest{TickDurationSeconds: u32(4294967295), AllowLong: true}, "", ""},
		{"archive id at max", &ImportRequest{ArchiveID: strings.Repeat("i", MaxArchiveIDBytes)}, "", ""},
		{"archive id over max", &ImportRequest{ArchiveID: strings.Repeat("i", MaxArchiveIDBytes+1)}, CodeValidation, "archive_id:"},
		{"store emotion 1e308", &EncodeStoreRequest{Emotion: &EmotionVector{Intensity: 1e308}}, CodeValidation, "emotion.intensity:"},
		{"store emotion infinite", &EncodeStoreRequest{Emotion: &EmotionVector{Anger: math.Inf(1)}}, CodeValidation, "emotion.anger:"},
		{"store valence below -1", &EncodeStoreRequest{Emotion: &EmotionVector{Valence: -1.01}}, CodeValidation, "emotion.valence:"},
		{"store valence -1", &EncodeStoreRequest{Emotion: &EmotionVector{Valence: -1, Joy: 1, Intensity: 1}}, "", ""},
		{"batch emotion", &EncodeBatchRequest{Records: []EncodeStoreRequest{{}, {Emotion: &EmotionVector{Trust: -0.1}}}}, CodeValidation, "records[1].emotion.trust:"},
		{"batch too large", &EncodeBatchRequest{Records: make([]EncodeStoreRequest, MaxBatchRecords+1)}, CodeValidation, "records:"},
		{"update emotion", &EncodeUpdateRequest{Emotion: &EmotionVector{Surprise: 2}}, CodeValidation, "emotion.surprise:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.req.Validate()
			if tc.code == "" {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			var me *Error
			if !errors.As(err, &me) || me.Code != tc.code || !strings.HasPrefix(me.Message, tc.field) {
				t.Fatalf("got %v (%T), want %s starting %q", err, err, tc.code, tc.field)
			}
			if len(me.Message) > 400 {
				t.Errorf("message of %d bytes: %.100s…", len(me.Message), me.Message)
			}
		})
	}
}

// TestCountWords pins the word counting of query bounds.
func TestCountWords(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int
	}{
		{"", 0},
		{"  ?!  ", 0},
		{"one", 1},
		{"one two,three", 3},
		{"naïve café", 2},
		{"東京タワー", 5},
		{"go1.26 release", 3},
	} {
		if got := countWords(tc.s, 100); got != tc.want {
			t.Errorf("countWords(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
	// Counting stops past the bound.
	if got := countWords(strings.Repeat("w ", 1000), 10); got != 11 {
		t.Errorf("bounded count = %d, want 11", got)
	}
}
