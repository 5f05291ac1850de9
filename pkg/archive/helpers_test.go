package archive

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// exportTime is the header timestamp of every test archive.
var exportTime = time.Date(2025, 3, 14, 15, 9, 26, 535_000_000, time.UTC)

// tinyKDF keeps Argon2 cheap in tests (64 KiB, one pass).
func tinyKDF() KDFParams { return KDFParams{MemoryKiB: 64, Iterations: 1, Parallelism: 1} }

func ptr[T any](v T) *T { return &v }

func at(sec int) time.Time { return time.Date(2025, 1, 2, 3, 4, sec, 0, time.UTC) }

// goldenRecord is the single small record of the golden archives.
func goldenRecord() *memory.MemoryRecord {
	return &memory.MemoryRecord{
		ID:             memory.MustParseID("01946a1b-2c3d-7e4f-8a5b-6c7d8e9f0a1b"),
		Store:          memory.StoreEpisodic,
		CreatedAt:      at(5),
		UpdatedAt:      at(5),
		LastAccessedAt: at(5),
		Content:        memory.TextContent("hi"),
		Fidelity:       memory.FidelityState{Score: 1, DecayRate: 0.5, EmotionalAnchor: 1, Stability: 1, LastDecayTick: at(5)},
		Metadata:       memory.JSON(`{}`),
		Version:        1,
		Meta:           memory.LegacyMeta(),
	}
}

// goldenRaw is the single raw record of the golden bundle.
func goldenRaw() *memory.RawJournalRecord {
	return &memory.RawJournalRecord{
		ID:           memory.MustParseID("01946a1b-2c3d-7e4f-8a5b-6c7d8e9f0a1c"),
		SessionID:    "s1",
		Source:       memory.SourceConversation,
		Speaker:      memory.SpeakerUser,
		Visibility:   memory.VisibilityNormal,
		SecrecyLevel: memory.SecrecySensitive,
		CreatedAt:    at(6),
		UpdatedAt:    at(6),
		Content:      memory.TextContent("yo"),
		Metadata:     memory.JSON(`{}`),
		Meta:         memory.LegacyMeta(),
	}
}

// sampleRecords exercise every shape the format must carry: unicode and
// control characters, binary blocks, embeddings, associations, emotion,
// metadata and a full meta-memory.
func sampleRecords() []*memory.MemoryRecord {
	a := goldenRecord()
	a.Content = memory.MemoryContent{
		Blocks:  []memory.ContentBlock{memory.TextBlock("café ☕ 日本語 \"quoted\" back\\slash\nnew line\ttab \u2028 <html> & 🎉")},
		Summary: ptr("unicode ✓"),
	}

	b := goldenRecord()
	b.ID = memory.MustParseID("01946a1b-2c3d-7e4f-8a5b-6c7d8e9f0a2b")
	b.Store = memory.StoreSemantic
	b.AccessCount = 7
	b.Content = memory.MemoryContent{Blocks: []memory.ContentBlock{
		{Modality: memory.ModalityImage, Format: "image/png", Data: memory.Bytes{0x89, 'P', 'N', 'G', 0, 1, 2, 127, 128, 254, 255}, Embedding: []float32{0.25, -1.5, 3.1415927, 1e-7, -0}},
		{Modality: memory.ModalityStructured, Format: "application/json", Data: memory.Bytes(`{"a":[1,2,{"b":null}]}`)},
	}}
	b.Fidelity = memory.FidelityState{Score: 0.7071067811865476, NoiseLevel: 0.2928932188134524, DecayRate: 0.5, EmotionalAnchor: 2.2, ReinforcementCount: 3, Stability: 8, LastDecayTick: at(9).Add(123456789 * time.Nanosecond)}
	b.Emotion = memory.EmotionVector{Joy: 0.9, Trust: 0.1, Intensity: 0.6, Valence: 0.8}
	b.Associations = []memory.Association{{TargetID: a.ID, AssociationType: memory.AssocSemantic, Weight: 0.5, CreatedAt: at(7), LastCoActivation: at(8)}}
	b.Metadata = memory.JSON(`{"nested":{"k":[1,"two",false]},"project":"memsvc"}`)
	b.Version = 4

	c := goldenRecord()
	c.ID = memory.MustParseID("01946a1b-2c3d-7e4f-8a5b-6c7d8e9f0a3b")
	c.Store = memory.StoreProcedural
	c.Content = memory.TextContent("run go test -race ./...")
	conf := 0.75
	captured := at(10)
	c.Meta = memory.MetaMemory{
		SchemaVersion: 1,
		CaptureStatus: memory.CaptureProvided,
		Intent:        ptr("keep the suite green"),
		Rationale:     ptr("races hide in the archive reader"),
		Trigger:       ptr(memory.TriggerEncodeStore),
		Goals:         []string{"fast", "safe"},
		Evidence:      []memory.MetaEvidenceRef{{RecordID: &a.ID, Label: ptr("note"), Excerpt: ptr("café"), URI: ptr("https://example.com/x?y=1&z=<2>"), Confidence: &conf}},
		Assumptions:   []string{"CI has two cores"},
		Alternatives:  []memory.MetaAlternative{{Option: "skip -race", Reason: ptr("too slow"), Chosen: false}, {Option: "keep -race", Chosen: true}},
		Decision:      ptr("keep -race"),
		Confidence:    &conf,
		SourceRecordIDs: []memory.ID{
			a.ID, b.ID,
		},
		ParentMetaIDs: []memory.ID{b.ID},
		ContextEdges:  []memory.MetaEdge{{SourceID: &a.ID, TargetID: b.ID, Relation: memory.RelContextOf, Rationale: ptr("same topic"), Confidence: &conf, CreatedAt: &captured}},
		Tags:          []string{"ci", "テスト"},
		CapturedAt:    &captured,
	}
	return []*memory.MemoryRecord{a, b, c}
}

func sampleRaw() []*memory.RawJournalRecord {
	a := goldenRaw()
	a.TurnID = ptr("t-1")
	a.TopicID = ptr("archives")
	a.Content = memory.TextContent("user: 你好, can you export? \u0000\u001f")
	a.DerivedMemoryIDs = []memory.ID{memory.MustParseID("01946a1b-2c3d-7e4f-8a5b-6c7d8e9f0a1b")}

	b := goldenRaw()
	b.ID = memory.MustParseID("01946a1b-2c3d-7e4f-8a5b-6c7d8e9f0a2c")
	b.Source = memory.SourceToolIO
	b.Speaker = memory.SpeakerTool
	b.Visibility = memory.VisibilitySealed
	b.SecrecyLevel = memory.SecrecySecret
	b.Suppressed = true
	b.Content = memory.MemoryContent{Blocks: []memory.ContentBlock{{Modality: memory.ModalityAudio, Format: "audio/wav", Data: bytes.Repeat([]byte{0, 255, 16}, 300), Embedding: []float32{1, 2, 3}}}}
	b.Metadata = memory.JSON(`{"tool":"bash"}`)
	return []*memory.RawJournalRecord{a, b}
}

// writeArchive writes recs and raws into an archive and returns its bytes.
func writeArchive(t testing.TB, version string, recs []*memory.MemoryRecord, raws []*memory.RawJournalRecord, o WriterOptions) ([]byte, Summary) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Version: version, Timestamp: exportTime, Curated: len(recs), Raw: len(raws)}, o)
	if err != nil {
		t.Fatalf("NewWriter: %v", err)
	}
	for _, r := range recs {
		if err := w.WriteRecord(r); err != nil {
			t.Fatalf("WriteRecord: %v", err)
		}
	}
	for _, r := range raws {
		if err := w.WriteRaw(r); err != nil {
			t.Fatalf("WriteRaw: %v", err)
		}
	}
	sum, err := w.Close()
	if err != nil {
		t.Fatalf("Close: %v", err)
	}
	return buf.Bytes(), sum
}

// readAll reads every entry of an archive.
func readAll(data []byte, o ReaderOptions) ([]Entry, Summary, error) {
	r, err := NewReader(bytes.NewReader(data), o)
	if err != nil {
		return nil, Summary{}, err
	}
	var out []Entry
	for range len(data) + 1 { // every entry takes at least one byte
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, r.Summary(), nil
		}
		if err != nil {
			return out, Summary{}, err
		}
		out = append(out, e)
	}
	panic("reader did not stop")
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkEntries compares what was read with what was written, by wire JSON.
func checkEntries(t *testing.T, got []Entry, recs []*memory.MemoryRecord, raws []*memory.RawJournalRecord) {
	t.Helper()
	if len(got) != len(recs)+len(raws) {
		t.Fatalf("read %d entries, want %d", len(got), len(recs)+len(raws))
	}
	for i, e := range got {
		if i < len(recs) {
			if e.Kind != KindRecord || e.Record == nil || e.Raw != nil {
				t.Fatalf("entry %d: kind %v, want a curated record", i, e.Kind)
			}
			if g, w := mustJSON(t, e.Record), mustJSON(t, recs[i]); g != w {
				t.Errorf("entry %d differs:\n got %s\nwant %s", i, g, w)
			}
			continue
		}
		if e.Kind != KindRaw || e.Raw == nil || e.Record != nil {
			t.Fatalf("entry %d: kind %v, want a raw record", i, e.Kind)
		}
		if g, w := mustJSON(t, e.Raw), mustJSON(t, raws[i-len(recs)]); g != w {
			t.Errorf("entry %d differs:\n got %s\nwant %s", i, g, w)
		}
	}
}

// errWriter fails every write after the first n bytes.
type errWriter struct {
	n   int
	err error
}

func (w *errWriter) Write(p []byte) (int, error) {
	if len(p) <= w.n {
		w.n -= len(p)
		return len(p), nil
	}
	k := w.n
	w.n = 0
	return k, w.err
}
