package memory

import (
	"unicode"
	"unicode/utf8"
)

// Request bounds. Every operation that returns a list has a documented
// maximum for its size; every free-form input that costs work in
// proportion to its size is capped like stored text. A request over a
// bound is refused (VALIDATION_ERROR, or CONTENT_TOO_LARGE for text over
// its byte limit) before any work is done; none is clamped silently.
const (
	// MaxRecallLimit bounds recall.query's limit.
	MaxRecallLimit = 1000
	// MaxRawRecallLimit bounds recall.raw_query's limit (0 is legal and
	// returns no entries).
	MaxRawRecallLimit = 1000
	// MaxTimelineLimit bounds recall.timeline's limit, the number of
	// memories returned across all buckets; it is also the default.
	MaxTimelineLimit = 1000
	// MaxGraphNodes bounds recall.graph's limit_nodes.
	MaxGraphNodes = 1000
	// MaxForecastRecords bounds the record_ids of one decay forecast.
	MaxForecastRecords = 1000

	// MaxCueTextBytes bounds a recall cue's text and a raw recall's
	// query: the limit of a stored text block.
	MaxCueTextBytes = MaxTextBlockBytes
	// MaxQueryWords bounds the words of a recall cue's text or a raw
	// recall's query (each CJK character counts as one). A search uses
	// at most the first 64 distinct terms of a query; the bound keeps a
	// huge query from costing seconds to tokenise before that.
	MaxQueryWords = 4096

	// MaxDecayTickSeconds is the longest decay tick a request may ask for
	// without allow_long: 30 days, after which a neutral episodic memory
	// is at 0.18 fidelity. A longer tick can make every memory dormant
	// in one call, so it must be asked for explicitly.
	MaxDecayTickSeconds = 30 * 24 * 60 * 60

	// MaxArchiveIDBytes bounds an import's archive_id, which the audit
	// log records.
	MaxArchiveIDBytes = 128
)

// ValidateEmotion checks an emotion vector a client sends: the eight axes
// and intensity between 0 and 1, valence between -1 and 1. Stored records
// are checked only for finite values (MemoryRecord.Validate), so archives
// written before this check still import and export.
func ValidateEmotion(field string, e *EmotionVector) error {
	if e == nil {
		return nil
	}
	if err := validateEmotion(field, e); err != nil {
		return err
	}
	names := [...]string{"joy", "trust", "fear", "surprise", "sadness", "disgust", "anger", "anticipation", "intensity"}
	for i, v := range [...]float64{e.Joy, e.Trust, e.Fear, e.Surprise, e.Sadness, e.Disgust, e.Anger, e.Anticipation, e.Intensity} {
		if v < 0 || v > 1 {
			return Invalid(field+"."+names[i], "must be between 0 and 1 (got %v)", v)
		}
	}
	if e.Valence < -1 || e.Valence > 1 {
		return Invalid(field+".valence", "must be between -1 and 1 (got %v)", e.Valence)
	}
	return nil
}

// ValidateQueryText checks the text of a recall cue or raw query: at most
// MaxCueTextBytes (CONTENT_TOO_LARGE) and MaxQueryWords words.
func ValidateQueryText(field string, s *string) error {
	if s == nil {
		return nil
	}
	if len(*s) > MaxCueTextBytes {
		return &Error{Code: CodeContentTooLarge, Message: sprintf("%s: %d bytes exceeds the %d-byte limit of a query; shorten it", field, len(*s), MaxCueTextBytes)}
	}
	if !utf8.ValidString(*s) {
		return Invalid(field, "not valid UTF-8")
	}
	if n := countWords(*s, MaxQueryWords); n > MaxQueryWords {
		return Invalid(field, "more than %d words; a search uses at most the first 64 distinct terms, so send the few words that matter", MaxQueryWords)
	}
	return nil
}

// countWords counts the runs of letters and digits in s, each CJK
// character as a word of its own, and stops counting past stop.
func countWords(s string, stop int) int {
	n, in := 0, false
	for _, r := range s {
		switch {
		case isCJK(r):
			n, in = n+1, false
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			if !in {
				n, in = n+1, true
			}
		default:
			in = false
		}
		if n > stop {
			return n
		}
	}
	return n
}

func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// checkLimit refuses a list limit over its maximum.
func checkLimit(field string, v uint32, max uint32, page string) error {
	if v > max {
		return Invalid(field, "%d exceeds the maximum of %d; %s", v, max, page)
	}
	return nil
}

// Validate checks the bounds of an encode.store request that the stored
// record's own validation does not cover.
func (r *EncodeStoreRequest) Validate() error {
	return ValidateEmotion("emotion", r.Emotion)
}

// Validate checks the batch size and every record's bounds.
func (r *EncodeBatchRequest) Validate() error {
	if len(r.Records) > MaxBatchRecords {
		return Invalid("records", "batch size %d exceeds the maximum of %d; split it into smaller batches", len(r.Records), MaxBatchRecords)
	}
	for i := range r.Records {
		if err := ValidateEmotion(sprintf("records[%d].emotion", i), r.Records[i].Emotion); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks the bounds of an encode.update request.
func (r *EncodeUpdateRequest) Validate() error {
	return ValidateEmotion("emotion", r.Emotion)
}

// Validate checks the limit and the cue's text and emotion.
func (r *RecallQueryRequest) Validate() error {
	if err := checkLimit("limit", r.Limit, MaxRecallLimit, "ask for fewer memories"); err != nil {
		return err
	}
	if err := ValidateQueryText("cue.text", r.Cue.Text); err != nil {
		return err
	}
	if err := validateCursor("before", r.Before); err != nil {
		return err
	}
	return ValidateEmotion("cue.emotion", r.Cue.Emotion)
}

// validateCursor checks a page cursor: it needs the creation time of the
// record it names.
func validateCursor(field string, c *PageCursor) error {
	if c != nil && c.CreatedAt.IsZero() {
		return Invalid(field+".created_at", "required: the created_at of the last record of the previous page")
	}
	return nil
}

// Validate checks the limit, the query and the session id.
func (r *RecallRawQueryRequest) Validate() error {
	if err := checkLimit("limit", r.Limit, MaxRawRecallLimit, "page with a narrower temporal range or a session_id"); err != nil {
		return err
	}
	if r.SessionID != nil && len(*r.SessionID) > MaxLabelBytes {
		return Invalid("session_id", "%d bytes exceeds the limit of %d", len(*r.SessionID), MaxLabelBytes)
	}
	if err := validateCursor("before", r.Before); err != nil {
		return err
	}
	return ValidateQueryText("query", r.Query)
}

// Validate checks the depth and the limit.
func (r *RecallAssociateRequest) Validate() error {
	if r.Depth > MaxAssociateDepth {
		return Invalid("depth", "%d exceeds the maximum of %d", r.Depth, MaxAssociateDepth)
	}
	return checkLimit("limit", r.Limit, MaxAssociateLimit, "ask for fewer memories")
}

// TimelineLimit is the request's limit, MaxTimelineLimit when absent.
func (r *RecallTimelineRequest) TimelineLimit() int {
	if r.Limit == nil {
		return MaxTimelineLimit
	}
	return int(*r.Limit)
}

// Validate checks the limit and the emotion filter.
func (r *RecallTimelineRequest) Validate() error {
	if r.Limit != nil {
		if err := checkLimit("limit", *r.Limit, MaxTimelineLimit, "page with a narrower range"); err != nil {
			return err
		}
	}
	if err := validateCursor("after", r.After); err != nil {
		return err
	}
	return ValidateEmotion("emotion_filter", r.EmotionFilter)
}

// Validate checks limit_nodes.
func (r *RecallGraphRequest) Validate() error {
	return checkLimit("limit_nodes", r.LimitNodes, MaxGraphNodes, "ask for fewer nodes")
}

// Validate caps the tick at MaxDecayTickSeconds unless AllowLong is set.
func (r *DecayTickRequest) Validate() error {
	if r.TickDurationSeconds != nil && *r.TickDurationSeconds > MaxDecayTickSeconds && !r.AllowLong {
		return Invalid("tick_duration_seconds", "%d exceeds the maximum of %d (30 days) for one tick; a longer tick can make every memory dormant at once: set allow_long to true if that is what you want",
			*r.TickDurationSeconds, MaxDecayTickSeconds)
	}
	return nil
}

// Validate checks archive_id, which the audit log records.
func (r *ImportRequest) Validate() error {
	if len(r.ArchiveID) > MaxArchiveIDBytes {
		return Invalid("archive_id", "%d bytes exceeds the limit of %d; send the id export returned", len(r.ArchiveID), MaxArchiveIDBytes)
	}
	if !utf8.ValidString(r.ArchiveID) {
		return Invalid("archive_id", "not valid UTF-8")
	}
	return nil
}

// Validate checks the number of records.
func (r *DecayForecastRequest) Validate() error {
	if len(r.RecordIDs) > MaxForecastRecords {
		return Invalid("record_ids", "%d records exceeds the maximum of %d; split the forecast", len(r.RecordIDs), MaxForecastRecords)
	}
	return nil
}
