package memory

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// Size limits. Block limits apply to the decoded bytes of one block.
const (
	MaxTextBlockBytes  = 1 << 20  // text, structured, spatial, temporal, interoceptive
	MaxImageBlockBytes = 10 << 20 // image blocks and image cues
	MaxAudioBlockBytes = 50 << 20 // audio and video blocks, audio cues
	MaxBatchRecords    = 1000     // encode.batch and encode.batch_raw
	MaxLabelBytes      = 4096     // session, turn and topic ids
	MaxEmbeddingDims   = 65536
	MaxAssociateDepth  = 8
	MaxAssociateLimit  = 256
)

// BlockLimit returns the byte limit for one block of modality m.
func BlockLimit(m Modality) int {
	switch m {
	case ModalityImage:
		return MaxImageBlockBytes
	case ModalityAudio, ModalityVideo:
		return MaxAudioBlockBytes
	default:
		return MaxTextBlockBytes
	}
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }

// ValidateContent checks content the way every write path needs it: at
// least one block, a known modality, the size limit of that modality,
// UTF-8 text, parseable structured JSON and finite, non-empty embeddings.
// field names the content in messages, for example "content" or
// "records[3].content".
func ValidateContent(field string, c *MemoryContent) error {
	if len(c.Blocks) == 0 {
		return Invalid(field+".blocks", "at least one content block is required")
	}
	for i := range c.Blocks {
		b := &c.Blocks[i]
		f := sprintf("%s.blocks[%d]", field, i)
		if !b.Modality.Valid() {
			return Invalid(f+".modality", "required: want one of %s", modalityNames.list())
		}
		if limit := BlockLimit(b.Modality); len(b.Data) > limit {
			return &Error{Code: CodeContentTooLarge, Message: sprintf("%s.data: %d bytes exceeds the %d-byte limit for %s blocks", f, len(b.Data), limit, b.Modality)}
		}
		switch b.Modality {
		case ModalityText:
			if !utf8.Valid(b.Data) {
				return Invalid(f+".data", "text is not valid UTF-8")
			}
		case ModalityStructured:
			if !json.Valid(b.Data) {
				return Invalid(f+".data", "structured block is not valid JSON")
			}
		}
		if err := ValidateEmbedding(f+".embedding", b.Embedding); err != nil {
			return err
		}
	}
	return nil
}

// ValidateEmbedding accepts nil (no embedding) or a non-empty vector of
// finite numbers.
func ValidateEmbedding(field string, v []float32) error {
	if v == nil {
		return nil
	}
	if len(v) == 0 {
		return Invalid(field, "must not be empty (omit it or send null instead)")
	}
	if len(v) > MaxEmbeddingDims {
		return Invalid(field, "%d dimensions exceeds the limit of %d", len(v), MaxEmbeddingDims)
	}
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return Invalid(sprintf("%s[%d]", field, i), "must be a finite number (got %v)", x)
		}
	}
	return nil
}

// Validate checks a record as it is about to be stored.
func (r *MemoryRecord) Validate() error {
	if !r.Store.Valid() {
		return Invalid("store", "want one of %s", StoreTypeNames())
	}
	if err := ValidateContent("content", &r.Content); err != nil {
		return err
	}
	if err := unitInterval("fidelity.score", r.Fidelity.Score); err != nil {
		return err
	}
	if err := unitInterval("fidelity.noise_level", r.Fidelity.NoiseLevel); err != nil {
		return err
	}
	for i, a := range r.Associations {
		f := sprintf("associations[%d]", i)
		if !a.AssociationType.Valid() {
			return Invalid(f+".association_type", "want one of %s", assocNames.list())
		}
		if err := unitInterval(f+".weight", a.Weight); err != nil {
			return err
		}
	}
	if err := validateEmotion("emotion", &r.Emotion); err != nil {
		return err
	}
	return r.Meta.Validate("meta")
}

// Validate checks a raw journal entry as it is about to be stored.
func (r *RawJournalRecord) Validate() error {
	if err := ValidateSessionID("session_id", r.SessionID); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"turn_id", r.TurnID}, {"topic_id", r.TopicID}} {
		if f.v != nil && len(*f.v) > MaxLabelBytes {
			return Invalid(f.name, "%d bytes exceeds the limit of %d", len(*f.v), MaxLabelBytes)
		}
	}
	switch {
	case !r.Source.Valid():
		return Invalid("source", "want one of %s", sourceNames.list())
	case !r.Speaker.Valid():
		return Invalid("speaker", "want one of %s", speakerNames.list())
	case !r.Visibility.Valid():
		return Invalid("visibility", "want one of %s", visibilityNames.list())
	case !r.SecrecyLevel.Valid():
		return Invalid("secrecy_level", "want one of %s", secrecyNames.list())
	}
	if err := ValidateContent("content", &r.Content); err != nil {
		return err
	}
	return r.Meta.Validate("meta")
}

// ValidateSessionID requires a non-blank id of bounded size.
func ValidateSessionID(field, s string) error {
	if isBlank(s) {
		return Invalid(field, "required and must not be blank")
	}
	if len(s) > MaxLabelBytes {
		return Invalid(field, "%d bytes exceeds the limit of %d", len(s), MaxLabelBytes)
	}
	if !utf8.ValidString(s) {
		return Invalid(field, "not valid UTF-8")
	}
	return nil
}

func unitInterval(field string, v float64) error {
	if math.IsNaN(v) || v < 0 || v > 1 {
		return Invalid(field, "must be between 0 and 1 (got %v)", v)
	}
	return nil
}

func validateEmotion(field string, e *EmotionVector) error {
	for i, v := range [...]float64{e.Joy, e.Trust, e.Fear, e.Surprise, e.Sadness, e.Disgust, e.Anger, e.Anticipation, e.Intensity, e.Valence} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			names := [...]string{"joy", "trust", "fear", "surprise", "sadness", "disgust", "anger", "anticipation", "intensity", "valence"}
			return Invalid(field+"."+names[i], "must be a finite number")
		}
	}
	return nil
}

// ValidateTemporalRange requires start <= end.
func ValidateTemporalRange(field string, r *TemporalRange) error {
	if r == nil {
		return nil
	}
	if r.Start.After(r.End) {
		return Invalid(field, "start %s is after end %s", r.Start.Format(timeLayout), r.End.Format(timeLayout))
	}
	return nil
}

const timeLayout = "2006-01-02T15:04:05.999999999Z07:00"
