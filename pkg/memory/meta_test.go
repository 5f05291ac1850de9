package memory

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestNormalizeMeta(t *testing.T) {
	now := time.Date(2025, 5, 6, 7, 8, 9, 0, time.FixedZone("X", -5*3600))
	nowUTC := now.UTC()

	t.Run("absent", func(t *testing.T) {
		got := NormalizeMeta(nil, TriggerEncodeStoreRaw, now)
		want := MetaMemory{SchemaVersion: 1, CaptureStatus: CaptureUnavailable,
			Rationale: ptr(UnavailableRationale), Trigger: ptr("encode.store_raw"), CapturedAt: &nowUTC}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %+v\nwant %+v", got, want)
		}
		if err := got.Validate("meta"); err != nil {
			t.Errorf("preset does not validate: %v", err)
		}
	})
	t.Run("legacy becomes provided", func(t *testing.T) {
		in := MetaMemory{SchemaVersion: 1, CaptureStatus: CaptureLegacy, Rationale: ptr(LegacyRationale), Intent: ptr("i")}
		got := NormalizeMeta(&in, TriggerEncodeStore, now)
		want := MetaMemory{SchemaVersion: 1, CaptureStatus: CaptureProvided, Intent: ptr("i"),
			Trigger: ptr("encode.store"), CapturedAt: &nowUTC}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %+v\nwant %+v", got, want)
		}
		if in.CaptureStatus != CaptureLegacy || in.Rationale == nil {
			t.Error("NormalizeMeta modified its input")
		}
	})
	t.Run("own rationale kept", func(t *testing.T) {
		got := NormalizeMeta(&MetaMemory{SchemaVersion: 1, CaptureStatus: CaptureLegacy, Rationale: ptr("because")}, TriggerEncodeStore, now)
		if got.CaptureStatus != CaptureProvided || got.Rationale == nil || *got.Rationale != "because" {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("schema 0 and unset status", func(t *testing.T) {
		got := NormalizeMeta(&MetaMemory{}, TriggerEncodeUpdate, now)
		if got.SchemaVersion != 1 || got.CaptureStatus != CaptureProvided || *got.Trigger != "encode.update" || !got.CapturedAt.Equal(now) {
			t.Errorf("got %+v", got)
		}
		if err := got.Validate("meta"); err != nil {
			t.Errorf("normalised meta does not validate: %v", err)
		}
	})
	t.Run("explicit statuses kept", func(t *testing.T) {
		for _, st := range []MetaCaptureStatus{CaptureInferred, CaptureUnavailable, CaptureProvided} {
			got := NormalizeMeta(&MetaMemory{SchemaVersion: 3, CaptureStatus: st, Rationale: ptr(LegacyRationale)}, TriggerEncodeStore, now)
			if got.CaptureStatus != st || got.SchemaVersion != 3 || got.Rationale == nil {
				t.Errorf("%s: got %+v", st, got)
			}
		}
	})
	t.Run("trigger and time kept", func(t *testing.T) {
		got := NormalizeMeta(&MetaMemory{SchemaVersion: 1, CaptureStatus: CaptureProvided, Trigger: ptr("cli"), CapturedAt: &t0}, TriggerEncodeStore, now)
		if *got.Trigger != "cli" || !got.CapturedAt.Equal(t0) {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("from JSON without status", func(t *testing.T) {
		var m MetaMemory
		mustUnmarshal(t, `{"intent":"x","rationale":"`+LegacyRationale+`"}`, &m)
		got := NormalizeMeta(&m, TriggerEncodeStore, now)
		if got.CaptureStatus != CaptureProvided || got.Rationale != nil || *got.Intent != "x" {
			t.Errorf("got %+v", got)
		}
	})
}

func TestMetaPresets(t *testing.T) {
	l := LegacyMeta()
	if l.CaptureStatus != CaptureLegacy || *l.Rationale != "No structured meta-memory was captured for this legacy record." ||
		l.Trigger != nil || l.CapturedAt != nil || l.SchemaVersion != 1 {
		t.Errorf("legacy = %+v", l)
	}
	raw := []ID{idB, idC}
	m := InferredMeta(TriggerDreamTick, "summary of 2 entries", raw, t0)
	raw[0] = idA // the preset must not alias the caller's slice
	if m.CaptureStatus != CaptureInferred || *m.Trigger != "lifecycle.dream_tick" || *m.Rationale != "summary of 2 entries" ||
		*m.Confidence != 1 || !m.CapturedAt.Equal(t0) {
		t.Errorf("inferred = %+v", m)
	}
	if !reflect.DeepEqual(m.SourceRecordIDs, []ID{idB, idC}) || len(m.Evidence) != 2 {
		t.Fatalf("inferred sources %v evidence %d", m.SourceRecordIDs, len(m.Evidence))
	}
	for i, want := range []ID{idB, idC} {
		e := m.Evidence[i]
		if *e.RawRecordID != want || *e.Label != "source_raw_record" || *e.Confidence != 1 || e.RecordID != nil {
			t.Errorf("evidence %d = %+v", i, e)
		}
	}
	if err := m.Validate("meta"); err != nil {
		t.Errorf("inferred preset does not validate: %v", err)
	}
}

func TestParseMetaJSON(t *testing.T) {
	for _, blank := range []string{"", "   ", "\n\t"} {
		m, err := ParseMetaJSON("--meta-json", blank)
		if m != nil || err != nil {
			t.Errorf("blank %q = %v, %v", blank, m, err)
		}
	}
	m, err := ParseMetaJSON("--meta-json", `{"intent":"ship","confidence":0.9,"context_edges":[{"target_id":"0196a9e25c1d7f008a000000000000bb"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if *m.Intent != "ship" || *m.Confidence != 0.9 || m.CaptureStatus != CaptureLegacy || m.SchemaVersion != 1 ||
		m.ContextEdges[0].TargetID != idB || m.ContextEdges[0].Relation != RelContextOf {
		t.Errorf("parsed %+v", m)
	}
	for _, tc := range []struct {
		in, field string
	}{
		{`{`, "meta_json"},
		{`[1]`, "meta_json"},
		{`"text"`, "meta_json"},
		{`{"capture_status":"Provided"}`, "meta_json"},
		{`{"confidence":"high"}`, "meta_json.confidence"},
		{`{"confidence":1.5}`, "meta_json.confidence"},
		{`{"context_edges":[{"relation":"supports"}]}`, "meta_json.context_edges[0].target_id"},
		{`{"evidence":[{"confidence":-1}]}`, "meta_json.evidence[0].confidence"},
	} {
		m, err := ParseMetaJSON("meta_json", tc.in)
		if m != nil {
			t.Errorf("%s: got %+v", tc.in, m)
		}
		checkErr(t, err, CodeValidation, tc.field)
	}
	// Schema version 0 is what the service normalises to 1, so the CLI
	// and MCP parsers accept it like the HTTP API does.
	m, err = ParseMetaJSON("meta_json", `{"schema_version":0,"intent":"x"}`)
	if err != nil || m == nil || *m.Intent != "x" {
		t.Fatalf("schema_version 0: %v, %v", m, err)
	}
	if n := NormalizeMeta(m, TriggerEncodeStore, t0); n.SchemaVersion != 1 || n.Validate("meta") != nil {
		t.Errorf("normalised schema %d: %v", n.SchemaVersion, n.Validate("meta"))
	}

	// A misspelt field is named, with the fields there are; unknown
	// fields are refused in text input only (the JSON API ignores them).
	_, err = ParseMetaJSON("meta_json", `{"intnet":"x"}`)
	if err == nil || !strings.Contains(err.Error(), `meta_json: unknown field "intnet"`) || !strings.Contains(err.Error(), "intent, parent_meta_ids, rationale") {
		t.Errorf("misspelt field: %v", err)
	}
	// A value of the wrong JSON type names the field and the kind of
	// value it takes, in JSON's words rather than Go's.
	for in, want := range map[string]string{
		`{"tags":"adr"}`:          "meta_json.tags: want a list of strings, got a string",
		`{"intent":5}`:            "meta_json.intent: want a string, got a number",
		`{"confidence":"high"}`:   "meta_json.confidence: want a number, got a string",
		`{"alternatives":{}}`:     "meta_json.alternatives: want a list of objects, got an object",
		`{"goals":[true]}`:        "meta_json.goals: want a string, got true or false",
		`{"schema_version":-1.5}`: "meta_json.schema_version: want a whole number, got a number (-1.5)",
	} {
		_, err := ParseMetaJSON("meta_json", in)
		if err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %q", in, err, want)
		}
		if err != nil && (strings.Contains(err.Error(), "Go struct") || strings.Contains(err.Error(), "[]string")) {
			t.Errorf("%s: the message names a Go type: %v", in, err)
		}
	}
	// A syntax error says it is not a meta-memory object.
	_, err = ParseMetaJSON("meta_json", `{`)
	if err == nil || !strings.Contains(err.Error(), "not a valid meta-memory JSON object") {
		t.Errorf("syntax error message %v", err)
	}
}
