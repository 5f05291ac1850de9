package memory

import (
	"encoding"
	"slices"
	"strings"
	"testing"
)

// checkNames: Names[E] lists exactly the values that have a wire name, in
// value order, each parsing back to its value, and hands out a copy.
func checkNames[E Enum, P interface {
	*E
	encoding.TextUnmarshaler
}](t *testing.T, want ...string) {
	t.Helper()
	names := Names[E]()
	if !slices.Equal(names, want) {
		t.Errorf("Names[%T]() = %v, want %v", *new(E), names, want)
	}
	for i, n := range names {
		var v E
		if err := P(&v).UnmarshalText([]byte(n)); err != nil || uint8(v) != uint8(i+1) {
			t.Errorf("%T %q parses to %d, %v; want %d", v, n, uint8(v), err, i+1)
		}
		b, err := any(v).(encoding.TextMarshaler).MarshalText()
		if err != nil || string(b) != n {
			t.Errorf("%T %d marshals to %q, %v; want %q", v, i+1, b, err, n)
		}
	}
	// The value after the last name has none: the list is complete.
	next := E(len(names) + 1)
	if b, err := any(next).(encoding.TextMarshaler).MarshalText(); err == nil {
		t.Errorf("%T %d marshals to %q, but Names lists only %d values", next, len(names)+1, b, len(names))
	}
	names[0] = "changed"
	if Names[E]()[0] == "changed" {
		t.Errorf("Names[%T] hands out shared state", next)
	}
}

func TestNames(t *testing.T) {
	checkNames[StoreType](t, "episodic", "semantic", "procedural", "emotional", "working")
	checkNames[Modality](t, "text", "image", "audio", "video", "structured", "spatial", "temporal", "interoceptive")
	checkNames[AssociationType](t, "temporal", "spatial", "semantic", "emotional", "causal", "sequential", "cross_modal", "user_defined")
	checkNames[AssociationOrigin](t, "client", "derivation", "similarity")
	checkNames[RecallMode](t, "human", "perfect")
	checkNames[RawSource](t, "conversation", "tool_io", "scratchpad", "summary", "imported")
	checkNames[RawSpeaker](t, "user", "assistant", "system", "tool")
	checkNames[Visibility](t, "normal", "private_scratch", "sealed")
	checkNames[SecrecyLevel](t, "public", "sensitive", "secret")
	checkNames[MetaCaptureStatus](t, "provided", "inferred", "legacy", "unavailable")
	checkNames[MetaRelation](t, "motivated_by", "caused_by", "derived_from", "supports", "contradicts", "chose_over", "explains", "context_of")
	checkNames[TimeGranularity](t, "minute", "hour", "day", "week", "month")
	checkNames[ConsolidationStrategy](t, "full", "incremental", "selective")
	checkNames[ImportStrategy](t, "merge", "replace")
	checkNames[ConflictResolution](t, "keep_existing", "keep_imported", "keep_newer")
}

// TestEmotionLabelNames: one canonical label per axis, each accepted by
// ParseEmotionLabel and named back by Label, the same list as the help
// text.
func TestEmotionLabelNames(t *testing.T) {
	names := EmotionLabelNames()
	if len(names) != 8 || strings.Join(names, ", ") != EmotionLabels { // the eight Plutchik axes
		t.Fatalf("EmotionLabelNames() = %v, EmotionLabels = %q", names, EmotionLabels)
	}
	for i, n := range names {
		v, err := ParseEmotionLabel(n)
		if err != nil || v.Label() != n || v.Axes()[i] != 1 {
			t.Errorf("%q: %+v %v", n, v, err)
		}
	}
	names[0] = "changed"
	if EmotionLabelNames()[0] != "joy" {
		t.Error("EmotionLabelNames hands out shared state")
	}
}

func TestExportFormats(t *testing.T) {
	f := ExportFormats()
	if !slices.Equal(f, []string{"cma", "jsonl"}) || f[0] != DefaultExportRequest().Format {
		t.Fatalf("ExportFormats() = %v, default %q", f, DefaultExportRequest().Format)
	}
}
