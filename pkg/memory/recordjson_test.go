package memory

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// The reference encodings: the same values through encoding/json's
// reflection, with the list defaults the hand-written encoders apply.
type (
	refRecord  MemoryRecord
	refContent MemoryContent
	refMemory  struct {
		Record          refRecord  `json:"record"`
		RelevanceScore  float64    `json:"relevance_score"`
		ActivationPath  []ID       `json:"activation_path"`
		RenderedContent refContent `json:"rendered_content"`
	}
)

func refRecordOf(r MemoryRecord) refRecord {
	if r.Associations == nil {
		r.Associations = []Association{}
	}
	r.Content = r.Content.withBlocks()
	return refRecord(r)
}

// jsonCorpus draws random values of every kind the encoders handle,
// edge cases included.
type jsonCorpus struct{ rng *rand.Rand }

func (c jsonCorpus) pick(n int) int { return c.rng.IntN(n) }

func (c jsonCorpus) text() string {
	parts := []string{"plain words ", "<b>&amp;</b>", "quote \" and \\ backslash", "\n\t\r\b\f\x00\x1f", "\u2028\u2029",
		"naïve café ☕ 𝄞", "\xff\xfe broken", "", " ", "ok"}
	var sb strings.Builder
	for range c.pick(5) {
		sb.WriteString(parts[c.pick(len(parts))])
	}
	return sb.String()
}

func (c jsonCorpus) float() float64 {
	switch c.pick(8) {
	case 0:
		return 0
	case 1:
		return math.Copysign(0, -1)
	case 2:
		return math.Pow(10, -4-4*c.rng.Float64()) // around the 1e-6 switch to exponents
	case 3:
		return math.Pow(10, 19+4*c.rng.Float64()) // around the 1e21 one
	case 4:
		return -c.rng.Float64()
	case 5:
		return float64(c.pick(1000))
	default:
		return c.rng.NormFloat64() * 1e3
	}
}

func (c jsonCorpus) float32s() []float32 {
	switch c.pick(4) {
	case 0:
		return nil
	case 1:
		return []float32{}
	}
	v := make([]float32, 1+c.pick(40))
	for i := range v {
		switch c.pick(6) {
		case 0:
			v[i] = float32(math.Pow(10, -4-4*c.rng.Float64()))
		case 1:
			v[i] = float32(math.Pow(10, 19+4*c.rng.Float64()))
		case 2:
			v[i] = float32(math.Copysign(0, -1))
		default:
			v[i] = c.rng.Float32()*2 - 1
		}
	}
	return v
}

func (c jsonCorpus) time() time.Time {
	zones := []*time.Location{time.UTC, time.FixedZone("x", 5*3600+1800), time.FixedZone("y", -11*3600), time.FixedZone("s", 17)}
	t := time.Unix(int64(c.rng.Uint32())*4, int64(c.pick(3))*int64(c.rng.Uint32()%1e9)).In(zones[c.pick(len(zones))])
	if c.pick(10) == 0 {
		return time.Time{}
	}
	return t
}

func (c jsonCorpus) id() ID {
	var id ID
	for i := range id {
		id[i] = byte(c.rng.Uint32())
	}
	return id
}

func (c jsonCorpus) content() MemoryContent {
	var m MemoryContent
	if c.pick(5) > 0 {
		m.Blocks = []ContentBlock{}
	}
	for range c.pick(3) {
		data := Bytes(c.text())
		if c.pick(4) == 0 {
			data = nil
		}
		m.Blocks = append(m.Blocks, ContentBlock{Modality: Modality(1 + c.pick(8)), Format: c.text(), Data: data, Embedding: c.float32s()})
	}
	if c.pick(2) == 0 {
		s := c.text()
		m.Summary = &s
	}
	return m
}

func (c jsonCorpus) record() MemoryRecord {
	r := MemoryRecord{ID: c.id(), Store: StoreType(1 + c.pick(5)), CreatedAt: c.time(), UpdatedAt: c.time(), LastAccessedAt: c.time(),
		AccessCount: c.rng.Uint32(), Content: c.content(), Version: c.rng.Uint32(),
		Fidelity: FidelityState{Score: c.float(), NoiseLevel: c.float(), DecayRate: c.float(), EmotionalAnchor: c.float(),
			ReinforcementCount: c.rng.Uint32(), Stability: c.float(), LastDecayTick: c.time(), ClockBase: c.float()},
		Emotion: EmotionVector{Joy: c.float(), Trust: c.float(), Fear: c.float(), Surprise: c.float(), Sadness: c.float(),
			Disgust: c.float(), Anger: c.float(), Anticipation: c.float(), Intensity: c.float(), Valence: c.float()},
		Meta: c.recordMeta(),
	}
	if c.pick(3) > 0 {
		r.Associations = []Association{}
	}
	for range c.pick(3) {
		r.Associations = append(r.Associations, Association{TargetID: c.id(), AssociationType: AssociationType(1 + c.pick(8)),
			Weight: c.float(), CreatedAt: c.time(), LastCoActivation: c.time(), Origin: AssociationOrigin(c.pick(4))})
	}
	switch c.pick(4) {
	case 0:
		r.Metadata = JSON(`{ "note" : "<a href='x'>&</a>", "n": [1, 2.5e3, {"deep": null}], "s": "\u2028" }`)
	case 1:
		r.Metadata = JSON(`{}`)
	case 2:
		r.Metadata = JSON(`{"session_id":"s-1","tags":["a","b"]}`)
	}
	return r
}

// TestRecordJSONMatchesReflection: records and recalled memories written
// by the hand-written encoders are byte for byte what encoding/json writes
// for the same values, on random values full of edge cases (HTML and
// control characters, invalid UTF-8, U+2028, negative zero, exponents,
// time zones, zero times, nil and empty lists, absent origins).
func TestRecordJSONMatchesReflection(t *testing.T) {
	c := jsonCorpus{rand.New(rand.NewPCG(3, 4))}
	for i := range 500 {
		r := c.record()
		want, err := json.Marshal(refRecordOf(r))
		if err != nil {
			t.Fatalf("record %d: reference: %v", i, err)
		}
		got, err := r.MarshalJSON()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("record %d (err %v):\n got %s\nwant %s", i, err, got, want)
		}
		m := RecalledMemory{Record: r, RelevanceScore: c.float(), RenderedContent: c.content()}
		switch c.pick(3) {
		case 0:
			m.RenderedContent = r.Content // rendered as stored: written once, copied
		case 1:
			// Equal but not the same value: written twice.
			m.RenderedContent = r.Content
			m.RenderedContent.Blocks = slices.Clone(r.Content.Blocks)
		}
		if c.pick(2) == 0 {
			m.ActivationPath = []ID{c.id(), c.id()}
		}
		want, err = json.Marshal(refMemory{refRecordOf(r), m.RelevanceScore, m.ActivationPath, refContent(m.RenderedContent.withBlocks())})
		if err != nil {
			t.Fatalf("memory %d: reference: %v", i, err)
		}
		got, err = json.Marshal(m)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("memory %d (err %v):\n got %s\nwant %s", i, err, got, want)
		}
	}
}

// TestRecordJSONErrors: a value JSON cannot hold fails the hand-written
// encoder as it fails encoding/json.
func TestRecordJSONErrors(t *testing.T) {
	c := jsonCorpus{rand.New(rand.NewPCG(5, 6))}
	for name, spoil := range map[string]func(r *MemoryRecord){
		"NaN embedding": func(r *MemoryRecord) {
			r.Content.Blocks = []ContentBlock{{Modality: ModalityText, Embedding: []float32{float32(math.NaN())}}}
		},
		"infinite emotion":  func(r *MemoryRecord) { r.Emotion.Anger = math.Inf(-1) },
		"NaN fidelity":      func(r *MemoryRecord) { r.Fidelity.Stability = math.NaN() },
		"unset store":       func(r *MemoryRecord) { r.Store = 0 },
		"unset modality":    func(r *MemoryRecord) { r.Content.Blocks = []ContentBlock{{}} },
		"unset assoc type":  func(r *MemoryRecord) { r.Associations = []Association{{Weight: 1}} },
		"unnamed origin":    func(r *MemoryRecord) { r.Associations = []Association{{AssociationType: 1, Origin: 9}} },
		"year 10000":        func(r *MemoryRecord) { r.UpdatedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) },
		"zone of 24 hours":  func(r *MemoryRecord) { r.Fidelity.LastDecayTick = time.Now().In(time.FixedZone("z", 24*3600)) },
		"metadata not JSON": func(r *MemoryRecord) { r.Metadata = JSON(`{"a":`) },
		"NaN assoc weight":  func(r *MemoryRecord) { r.Associations = []Association{{AssociationType: 1, Weight: math.NaN()}} },
		"negative year":     func(r *MemoryRecord) { r.CreatedAt = time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC) },
		"association's time": func(r *MemoryRecord) {
			r.Associations = []Association{{AssociationType: 1, CreatedAt: time.Date(12345, 1, 1, 0, 0, 0, 0, time.UTC)}}
		},
	} {
		r := c.record()
		spoil(&r)
		if _, err := json.Marshal(refRecordOf(r)); err == nil {
			t.Fatalf("%s: encoding/json accepts it; the case tests nothing", name)
		}
		if out, err := r.MarshalJSON(); err == nil {
			t.Errorf("%s: encoded as %s, want an error", name, out)
		}
	}
}

// recordMeta is the engine's preset half the time, a random meta-memory
// otherwise.
func (c jsonCorpus) recordMeta() MetaMemory {
	if c.pick(2) == 0 {
		return UnavailableMeta(TriggerEncodeStore, c.time())
	}
	return c.meta()
}
