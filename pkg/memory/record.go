package memory

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// MemoryRecord is one curated memory. Field order is the wire order.
type MemoryRecord struct {
	ID             ID            `json:"id"`
	Store          StoreType     `json:"store"`
	CreatedAt      time.Time     `json:"created_at"`
	UpdatedAt      time.Time     `json:"updated_at"`
	LastAccessedAt time.Time     `json:"last_accessed_at"`
	AccessCount    uint32        `json:"access_count"`
	Content        MemoryContent `json:"content"`
	Fidelity       FidelityState `json:"fidelity"`
	Emotion        EmotionVector `json:"emotion"`
	Associations   []Association `json:"associations"`
	Metadata       JSON          `json:"metadata"`
	Version        uint32        `json:"version"`
	Meta           MetaMemory    `json:"meta"`
}

// MemoryContent is the payload of a record: one or more blocks and an
// optional summary.
type MemoryContent struct {
	Blocks  []ContentBlock `json:"blocks"`
	Summary *string        `json:"summary"`
}

// ContentBlock is one piece of content in one modality.
type ContentBlock struct {
	Modality  Modality  `json:"modality"`
	Format    string    `json:"format"`
	Data      Bytes     `json:"data"`
	Embedding []float32 `json:"embedding"`
}

// TextBlock returns a plain-text block holding s.
func TextBlock(s string) ContentBlock {
	return ContentBlock{Modality: ModalityText, Format: "text/plain", Data: Bytes(s)}
}

// TextContent returns content with a single text block.
func TextContent(s string) MemoryContent {
	return MemoryContent{Blocks: []ContentBlock{TextBlock(s)}}
}

// Text returns the record's text: the first text block that is valid UTF-8.
// Most features (summaries, previews, raw search) look only at it.
func (c MemoryContent) Text() (string, bool) {
	for _, b := range c.Blocks {
		if b.Modality == ModalityText && utf8.Valid(b.Data) {
			return string(b.Data), true
		}
	}
	return "", false
}

// Embedding returns the first embedding of any block, or nil.
func (c MemoryContent) Embedding() []float32 {
	for _, b := range c.Blocks {
		if len(b.Embedding) > 0 {
			return b.Embedding
		}
	}
	return nil
}

// FidelityState is a record's decay state. Score, NoiseLevel and
// LastDecayTick are derived by the engine from the decay clock when a record
// is read; the other fields are the record's own parameters.
type FidelityState struct {
	Score              float64   `json:"score"`
	NoiseLevel         float64   `json:"noise_level"`
	DecayRate          float64   `json:"decay_rate"`
	EmotionalAnchor    float64   `json:"emotional_anchor"`
	ReinforcementCount uint32    `json:"reinforcement_count"`
	Stability          float64   `json:"stability"`
	LastDecayTick      time.Time `json:"last_decay_tick"`

	// ClockBase is the engine's decay-clock reading, in seconds, at the
	// record's last reinforcement (or creation). The decay age of a record
	// is the current clock reading minus ClockBase. It is engine state and
	// is not part of the wire format.
	ClockBase float64 `json:"-"`
}

// EmotionVector holds the eight Plutchik axes plus intensity and valence.
// Every field is optional on input and defaults to zero.
type EmotionVector struct {
	Joy          float64 `json:"joy"`
	Trust        float64 `json:"trust"`
	Fear         float64 `json:"fear"`
	Surprise     float64 `json:"surprise"`
	Sadness      float64 `json:"sadness"`
	Disgust      float64 `json:"disgust"`
	Anger        float64 `json:"anger"`
	Anticipation float64 `json:"anticipation"`
	Intensity    float64 `json:"intensity"`
	Valence      float64 `json:"valence"`
}

// Axes returns the eight Plutchik axes in declaration order.
func (e EmotionVector) Axes() [8]float64 {
	return [8]float64{e.Joy, e.Trust, e.Fear, e.Surprise, e.Sadness, e.Disgust, e.Anger, e.Anticipation}
}

// axisFields points at the eight axes in the order of Axes.
func (e *EmotionVector) axisFields() [8]*float64 {
	return [8]*float64{&e.Joy, &e.Trust, &e.Fear, &e.Surprise, &e.Sadness, &e.Disgust, &e.Anger, &e.Anticipation}
}

type emotionLabel struct {
	names   []string
	axis    int
	valence float64
}

var emotionLabels = []emotionLabel{
	{[]string{"joy", "happy", "happiness"}, 0, 1.0},
	{[]string{"trust"}, 1, 0.7},
	{[]string{"fear"}, 2, -0.8},
	{[]string{"surprise"}, 3, 0},
	{[]string{"sadness", "sad"}, 4, -1.0},
	{[]string{"disgust"}, 5, -0.9},
	{[]string{"anger", "angry"}, 6, -0.9},
	{[]string{"anticipation", "anticipatory"}, 7, 0.4},
}

// EmotionLabels is the list of accepted emotion labels, for help texts.
const EmotionLabels = "joy, trust, fear, surprise, sadness, disgust, anger, anticipation"

// EmotionLabelNames returns the canonical emotion labels, one per axis in
// axis order, a new slice on every call: what EmotionVector.Label names
// and ParseEmotionLabel accepts (which also takes a few synonyms, such as
// "happy" for joy).
func EmotionLabelNames() []string {
	out := make([]string, len(emotionLabels))
	for i, l := range emotionLabels {
		out[i] = l.names[0]
	}
	return out
}

// ParseEmotionLabel turns a single word such as "joy" or "angry" into a
// vector with that axis at 1, intensity 1 and the label's valence.
func ParseEmotionLabel(label string) (EmotionVector, error) {
	l := strings.ToLower(strings.TrimSpace(label))
	for _, e := range emotionLabels {
		for _, n := range e.names {
			if n != l {
				continue
			}
			var v EmotionVector
			*v.axisFields()[e.axis] = 1
			v.Intensity = 1
			v.Valence = e.valence
			return v, nil
		}
	}
	return EmotionVector{}, Invalid("emotion", "unknown label %s: want one of %s", Quote(label), EmotionLabels)
}

// Label names the strongest axis, or "" when intensity is zero.
func (e EmotionVector) Label() string {
	if e.Intensity == 0 {
		return ""
	}
	axes := e.Axes()
	best := 0
	for i := 1; i < len(axes); i++ {
		if axes[i] > axes[best] {
			best = i
		}
	}
	return emotionLabels[best].names[0]
}

// Association is a directed, weighted edge from the record that holds it.
type Association struct {
	TargetID         ID                `json:"target_id"`
	AssociationType  AssociationType   `json:"association_type"`
	Weight           float64           `json:"weight"`
	CreatedAt        time.Time         `json:"created_at"`
	LastCoActivation time.Time         `json:"last_co_activation"`
	Origin           AssociationOrigin `json:"origin,omitempty"`
}

// RawJournalRecord is one verbatim entry of the raw journal. Field order is
// the wire order.
type RawJournalRecord struct {
	ID               ID            `json:"id"`
	SessionID        string        `json:"session_id"`
	TurnID           *string       `json:"turn_id"`
	TopicID          *string       `json:"topic_id"`
	Source           RawSource     `json:"source"`
	Speaker          RawSpeaker    `json:"speaker"`
	Visibility       Visibility    `json:"visibility"`
	SecrecyLevel     SecrecyLevel  `json:"secrecy_level"`
	CreatedAt        time.Time     `json:"created_at"`
	UpdatedAt        time.Time     `json:"updated_at"`
	Content          MemoryContent `json:"content"`
	Metadata         JSON          `json:"metadata"`
	DerivedMemoryIDs []ID          `json:"derived_memory_ids"`
	Suppressed       bool          `json:"suppressed"`
	Meta             MetaMemory    `json:"meta"`
}

// String is a short description for logs; it never includes content.
func (r *MemoryRecord) String() string {
	return fmt.Sprintf("%s record %s v%d", r.Store, r.ID, r.Version)
}

// MarshalJSON writes empty association and block lists as [].
func (r MemoryRecord) MarshalJSON() ([]byte, error) {
	return appendRecordJSON(make([]byte, 0, recordSizeHint(&r)), &r, BinaryArrays)
}

// AppendJSONForm appends r as MarshalJSON writes it, with its content's
// data and embeddings in form f, to dst; on an error dst's contents are
// undefined.
func (r *MemoryRecord) AppendJSONForm(dst []byte, f BinaryForm) ([]byte, error) {
	return appendRecordJSON(dst, r, f)
}

// MarshalJSON writes an empty derived-id list as [].
func (r RawJournalRecord) MarshalJSON() ([]byte, error) {
	type plain RawJournalRecord
	p := plain(r)
	if p.DerivedMemoryIDs == nil {
		p.DerivedMemoryIDs = []ID{}
	}
	p.Content = p.Content.withBlocks()
	return json.Marshal(p)
}

// withBlocks returns c with a nil block list replaced by an empty one, so
// that it marshals as []. The types that hold content call it from their
// own MarshalJSON. MemoryContent deliberately has no MarshalJSON of its own:
// encoding/json re-scans the output of every MarshalJSON once per enclosing
// one, and content (text as integer arrays, embeddings) is the bulk of every
// answer.
func (c MemoryContent) withBlocks() MemoryContent {
	if c.Blocks == nil {
		c.Blocks = []ContentBlock{}
	}
	return c
}
