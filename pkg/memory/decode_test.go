package memory

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestBytesDecode(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []byte
	}{
		{"ints", `[104,105]`, []byte("hi")},
		{"bounds", `[0,1,9,10,99,100,199,200,249,250,255]`, []byte{0, 1, 9, 10, 99, 100, 199, 200, 249, 250, 255}},
		{"empty", `[]`, []byte{}},
		{"empty spaced", "[ \n\t]", []byte{}},
		{"spaced", " [ 1 ,\n2\t, 3 ] ", []byte{1, 2, 3}},
		// 0xfb 0xef 0xff uses both alphabet-specific characters.
		{"base64 std", `"++//"`, []byte{0xfb, 0xef, 0xff}},
		{"base64 url", `"--__"`, []byte{0xfb, 0xef, 0xff}},
		{"base64 std padded", `"++8="`, []byte{0xfb, 0xef}},
		{"base64 std unpadded", `"++8"`, []byte{0xfb, 0xef}},
		{"base64 url padded", `"--8="`, []byte{0xfb, 0xef}},
		{"base64 url unpadded", `"--8"`, []byte{0xfb, 0xef}},
		{"base64 text", `"aGk="`, []byte("hi")},
		{"base64 empty", `""`, []byte{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b Bytes
			if err := b.UnmarshalJSON([]byte(tc.in)); err != nil {
				t.Fatalf("UnmarshalJSON(%s): %v", tc.in, err)
			}
			if !bytes.Equal(b, tc.want) || b == nil {
				t.Errorf("UnmarshalJSON(%s) = %#v, want %#v", tc.in, []byte(b), tc.want)
			}
			// Through encoding/json, inside a block.
			var blk ContentBlock
			if err := json.Unmarshal([]byte(`{"modality":"text","format":"f","data":`+tc.in+`}`), &blk); err != nil {
				t.Fatalf("block with data %s: %v", tc.in, err)
			}
			if !bytes.Equal(blk.Data, tc.want) {
				t.Errorf("block data = %v, want %v", blk.Data, tc.want)
			}
		})
	}

	var b Bytes = Bytes{1}
	if err := json.Unmarshal([]byte(`null`), &b); err != nil || b != nil {
		t.Errorf("null: %v, %v", b, err)
	}
	if err := b.UnmarshalJSON([]byte(`null`)); err != nil || b != nil {
		t.Errorf("direct null: %v, %v", b, err)
	}
}

func TestBytesDecodeRejects(t *testing.T) {
	for _, in := range []string{
		`[256]`, `[1000]`, `[99999999999999999999]`, `[-1]`, `[1.5]`, `[1.0]`, `[1e2]`, `[1E2]`,
		`[[1]]`, `[{}]`, `[01]`, `[00]`, `[007]`, `["1"]`, `[true]`, `[null]`,
		`[1,]`, `[,1]`, `[1 2]`, `[1,,2]`, `[`, `[1`, `]`, `[]]`, `[1]x`,
		`true`, `1`, `{}`, `"not base64!"`, `"a"`, `"@@@@"`, `nul`, ``,
	} {
		t.Run(in, func(t *testing.T) {
			var b Bytes
			err := b.UnmarshalJSON([]byte(in))
			if err == nil {
				t.Fatalf("UnmarshalJSON(%s) = %v, want an error", in, []byte(b))
			}
			if !errors.Is(err, errBytesShape) {
				t.Errorf("error %q does not say what shape is wanted", err)
			}
			if !strings.Contains(err.Error(), "integers 0-255") {
				t.Errorf("error %q does not name the accepted form", err)
			}
		})
	}
	// Through encoding/json the same values fail the whole document.
	for _, in := range []string{`[256]`, `[-1]`, `[1.5]`, `[[1]]`, `[01]`, `"!!"`} {
		var blk ContentBlock
		if err := json.Unmarshal([]byte(`{"data":`+in+`}`), &blk); err == nil {
			t.Errorf("block data %s accepted as %v", in, blk.Data)
		}
	}
}

func TestBytesMarshal(t *testing.T) {
	for _, tc := range []struct {
		in   Bytes
		want string
	}{
		{nil, `[]`}, {Bytes{}, `[]`}, {Bytes{0}, `[0]`}, {Bytes{255, 0, 10}, `[255,0,10]`},
	} {
		if got := marshal(t, tc.in); got != tc.want {
			t.Errorf("Marshal(%#v) = %s, want %s", []byte(tc.in), got, tc.want)
		}
	}
	// Every byte value survives a round trip.
	all := make(Bytes, 256)
	for i := range all {
		all[i] = byte(i)
	}
	var back Bytes
	if err := json.Unmarshal([]byte(marshal(t, all)), &back); err != nil || !bytes.Equal(back, all) {
		t.Errorf("round trip of 0..255: %v, %v", back, err)
	}
}

func TestJSONValue(t *testing.T) {
	var j JSON
	if err := json.Unmarshal([]byte(" {\"b\" : [1, 2] ,\"a\":null} "), &j); err != nil {
		t.Fatal(err)
	}
	if string(j) != `{"b":[1,2],"a":null}` {
		t.Errorf("compact = %s (key order must be kept)", j)
	}
	if err := json.Unmarshal([]byte(`null`), &j); err != nil || j != nil {
		t.Errorf("null = %q, %v", j, err)
	}
	for _, tc := range []struct {
		in     JSON
		object bool
	}{{nil, true}, {JSON(`{}`), true}, {JSON(` {"a":1}`), true}, {JSON(`[1]`), false}, {JSON(`"s"`), false}, {JSON(`3`), false}} {
		if got := tc.in.IsObject(); got != tc.object {
			t.Errorf("IsObject(%s) = %v", tc.in, got)
		}
	}
	if got := marshal(t, JSON(nil)); got != `{}` {
		t.Errorf("empty JSON marshals as %s", got)
	}
}

func TestEnumDecoding(t *testing.T) {
	tests := []struct {
		name   string
		doc    string
		target any
		want   string // accepted values named in the error
	}{
		{"store case", `"Episodic"`, new(StoreType), "episodic, semantic, procedural, emotional, working"},
		{"store unknown", `"long_term"`, new(StoreType), "episodic, semantic, procedural, emotional, working"},
		{"store upper", `"WORKING"`, new(StoreType), "episodic, semantic, procedural, emotional, working"},
		{"store empty", `""`, new(StoreType), "episodic, semantic, procedural, emotional, working"},
		{"store padded", `" episodic"`, new(StoreType), "episodic, semantic, procedural, emotional, working"},
		{"modality", `"Text"`, new(Modality), "text, image, audio, video, structured, spatial, temporal, interoceptive"},
		{"association", `"crossModal"`, new(AssociationType), "temporal, spatial, semantic, emotional, causal, sequential, cross_modal, user_defined"},
		{"mode", `"Perfect"`, new(RecallMode), "human, perfect"},
		{"granularity", `"year"`, new(TimeGranularity), "minute, hour, day, week, month"},
		{"strategy", `"Full"`, new(ConsolidationStrategy), "full, incremental, selective"},
		{"import strategy", `"MERGE"`, new(ImportStrategy), "merge, replace"},
		{"conflict", `"keep-newer"`, new(ConflictResolution), "keep_existing, keep_imported, keep_newer"},
		{"source", `"tool-io"`, new(RawSource), "conversation, tool_io, scratchpad, summary, imported"},
		{"speaker", `"User"`, new(RawSpeaker), "user, assistant, system, tool"},
		{"visibility", `"private"`, new(Visibility), "normal, private_scratch, sealed"},
		{"secrecy", `"Secret"`, new(SecrecyLevel), "public, sensitive, secret"},
		{"capture", `"PROVIDED"`, new(MetaCaptureStatus), "provided, inferred, legacy, unavailable"},
		{"relation", `"ContextOf"`, new(MetaRelation), "motivated_by, caused_by, derived_from, supports, contradicts, chose_over, explains, context_of"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := json.Unmarshal([]byte(tc.doc), tc.target)
			if err == nil {
				t.Fatalf("%s accepted", tc.doc)
			}
			if !strings.Contains(err.Error(), "want one of "+tc.want) {
				t.Errorf("error %q does not list %q", err, tc.want)
			}
			if CodeOf(err) != CodeValidation {
				t.Errorf("code = %s, want VALIDATION_ERROR", CodeOf(err))
			}
		})
	}

	// Inside a request the enum error surfaces unchanged, as a validation
	// error.
	var req EncodeStoreRequest
	err := json.Unmarshal([]byte(`{"content":{"blocks":[]},"store":"Semantic"}`), &req)
	if !errors.Is(err, ErrValidation) {
		t.Errorf("request with bad store: %v (code %s)", err, CodeOf(err))
	}

	// Exact spellings parse.
	for _, s := range []string{"episodic", "semantic", "procedural", "emotional", "working"} {
		v, err := ParseStoreType(s)
		if err != nil || v.String() != s {
			t.Errorf("ParseStoreType(%q) = %v, %v", s, v, err)
		}
	}
	if _, err := ParseStoreType("Episodic"); !errors.Is(err, ErrValidation) {
		t.Errorf("ParseStoreType is not case-sensitive: %v", err)
	}
	if got := StoreTypeNames(); got != "episodic, semantic, procedural, emotional, working" {
		t.Errorf("StoreTypeNames = %q", got)
	}
	for _, st := range AllStores() {
		if !st.Valid() || st.Persistent() == (st == StoreWorking) {
			t.Errorf("%s: valid %v persistent %v", st, st.Valid(), st.Persistent())
		}
	}
	if StoreType(0).Valid() || StoreType(6).Valid() || StoreType(0).String() != "" || StoreType(9).String() != "" {
		t.Error("out-of-range store values are not recognised as invalid")
	}
}

func TestParseID(t *testing.T) {
	want := MustParseID("0196a9e2-5c1d-7f00-8a00-0000000000aa")
	if want.String() != "0196a9e2-5c1d-7f00-8a00-0000000000aa" {
		t.Fatalf("String() = %s", want)
	}
	for _, in := range []string{
		"0196a9e2-5c1d-7f00-8a00-0000000000aa",
		"0196a9e25c1d7f008a000000000000aa",
		"{0196a9e2-5c1d-7f00-8a00-0000000000aa}",
		"urn:uuid:0196a9e2-5c1d-7f00-8a00-0000000000aa",
		"URN:UUID:0196a9e2-5c1d-7f00-8a00-0000000000aa",
		"0196A9E2-5C1D-7F00-8A00-0000000000AA",
		"0196A9E25C1D7F008A000000000000AA",
		"{0196A9E2-5C1D-7F00-8A00-0000000000AA}",
		"urn:uuid:0196A9E2-5c1d-7F00-8a00-0000000000Aa",
	} {
		got, err := ParseID(in)
		if err != nil || got != want {
			t.Errorf("ParseID(%q) = %v, %v", in, got, err)
		}
		var viaJSON ID
		if err := json.Unmarshal([]byte(`"`+in+`"`), &viaJSON); err != nil || viaJSON != want {
			t.Errorf("JSON %q = %v, %v", in, viaJSON, err)
		}
	}
	for _, in := range []string{
		"",
		"0196a9e2-5c1d-7f00-8a00-0000000000a",    // 35
		"0196a9e2-5c1d-7f00-8a00-0000000000aaa",  // 37
		"0196a9e25-c1d-7f00-8a00-0000000000aa",   // hyphen moved
		"0196a9e2-5c1d-7f00-8a00-0000000000-a",   // hyphen in the last group
		"0196a9e2-5c1d-7f00-8a00+0000000000aa",   // wrong separator
		"0196a9e2-5c1d-7f00-8a00-0000000000ag",   // not hex
		"0196a9e25c1d7f008a000000000000a",        // 31
		"0196a9e25c1d7f008a000000000000aaa",      // 33
		"0196a9e25c1d7f008a000000000000g0",       // not hex
		"{0196a9e2-5c1d-7f00-8a00-0000000000aa",  // open brace
		"0196a9e2-5c1d-7f00-8a00-0000000000aa}",  // close brace
		"(0196a9e2-5c1d-7f00-8a00-0000000000aa)", // wrong brackets
		"urn:uuid:",
		"urn:0196a9e2-5c1d-7f00-8a00-0000000000aa",
		"uuid:0196a9e2-5c1d-7f00-8a00-0000000000aa",
		"0x0196a9e25c1d7f008a000000000000aa",
		"0196a9e2_5c1d_7f00_8a00_0000000000aa",
	} {
		if got, err := ParseID(in); err == nil {
			t.Errorf("ParseID(%q) = %v, want an error", in, got)
		} else if !strings.Contains(err.Error(), "invalid UUID") {
			t.Errorf("ParseID(%q) error %q", in, err)
		} else if CodeOf(err) != CodeValidation {
			// A bad id from a client (path, flag, body) is a
			// validation error, not an internal one.
			t.Errorf("ParseID(%q) error code %s", in, CodeOf(err))
		}
		var viaJSON ID
		if err := json.Unmarshal([]byte(`"`+in+`"`), &viaJSON); err == nil {
			t.Errorf("JSON %q accepted", in)
		}
	}
	var zero ID
	if !zero.IsNil() || want.IsNil() || zero.String() != "00000000-0000-0000-0000-000000000000" {
		t.Error("nil id handling")
	}
	if got := marshal(t, []ID{want, zero}); got != `["0196a9e2-5c1d-7f00-8a00-0000000000aa","00000000-0000-0000-0000-000000000000"]` {
		t.Errorf("ids marshal as %s", got)
	}
	assertPanics(t, "MustParseID", func() { MustParseID("nope") })
}

func assertPanics(t *testing.T, name string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", name)
		}
	}()
	f()
}

func TestRequestDefaults(t *testing.T) {
	t.Run("recall query", func(t *testing.T) {
		var r RecallQueryRequest
		mustUnmarshal(t, `{"cue":{}}`, &r)
		want := RecallQueryRequest{Limit: 10, Reconsolidate: true, ActivationDepth: 2}
		if !reflect.DeepEqual(r, want) {
			t.Errorf("got %+v", r)
		}
		mustUnmarshal(t, `{"cue":{"text":"x"},"limit":0,"reconsolidate":false,"activation_depth":0,"recall_mode":"perfect","stores":["working"]}`, &r)
		if r.Limit != 0 || r.Reconsolidate || r.ActivationDepth != 0 || r.RecallMode == nil || *r.RecallMode != ModePerfect ||
			!reflect.DeepEqual(r.Stores, []StoreType{StoreWorking}) || r.Cue.Text == nil || *r.Cue.Text != "x" {
			t.Errorf("explicit values: %+v", r)
		}
		if d := DefaultRecallQueryRequest(); !reflect.DeepEqual(d, want) {
			t.Errorf("DefaultRecallQueryRequest = %+v", d)
		}
	})
	t.Run("recall raw", func(t *testing.T) {
		var r RecallRawQueryRequest
		mustUnmarshal(t, `{}`, &r)
		if r.Limit != 10 || r.SecrecyLevels != nil || r.SessionID != nil || r.IncludeSealed || r.IncludePrivateScratch {
			t.Errorf("defaults: %+v", r)
		}
		r = RecallRawQueryRequest{}
		mustUnmarshal(t, `{"limit":0}`, &r)
		if r.Limit != 0 {
			t.Errorf("limit 0 became %d", r.Limit)
		}
		mustUnmarshal(t, `{"secrecy_levels":null}`, &r)
		if r.SecrecyLevels != nil {
			t.Errorf("null secrecy levels = %#v", r.SecrecyLevels)
		}
		mustUnmarshal(t, `{"secrecy_levels":[]}`, &r)
		if r.SecrecyLevels == nil || len(r.SecrecyLevels) != 0 {
			t.Errorf("[] secrecy levels = %#v, want an empty non-nil list", r.SecrecyLevels)
		}
		mustUnmarshal(t, `{"secrecy_levels":["secret","public"]}`, &r)
		if !reflect.DeepEqual(r.SecrecyLevels, []SecrecyLevel{SecrecySecret, SecrecyPublic}) {
			t.Errorf("levels = %v", r.SecrecyLevels)
		}
	})
	t.Run("associate", func(t *testing.T) {
		var r RecallAssociateRequest
		mustUnmarshal(t, `{}`, &r)
		if want := (RecallAssociateRequest{Depth: 2, MinWeight: 0.1, Limit: 10}); !reflect.DeepEqual(r, want) {
			t.Errorf("got %+v", r)
		}
	})
	t.Run("timeline", func(t *testing.T) {
		var r RecallTimelineRequest
		mustUnmarshal(t, `{"range":{"start":"2025-03-01T12:00:00Z","end":"2025-03-01T13:00:00+01:00"}}`, &r)
		if r.Granularity != GranularityHour || !r.Range.Start.Equal(t0) || !r.Range.End.Equal(t0) {
			t.Errorf("got %+v", r)
		}
	})
	t.Run("graph", func(t *testing.T) {
		var r RecallGraphRequest
		mustUnmarshal(t, `{}`, &r)
		if want := (RecallGraphRequest{Depth: 2, LimitNodes: 10}); !reflect.DeepEqual(r, want) {
			t.Errorf("got %+v", r)
		}
	})
	t.Run("consolidate", func(t *testing.T) {
		var r ConsolidateRequest
		mustUnmarshal(t, `{}`, &r)
		if r.Strategy != ConsolidateIncremental {
			t.Errorf("strategy %v", r.Strategy)
		}
	})
	t.Run("dream tick", func(t *testing.T) {
		var r DreamTickRequest
		mustUnmarshal(t, `{}`, &r)
		if want := (DreamTickRequest{MaxGroups: 10, PromoteSemantic: true}); !reflect.DeepEqual(r, want) {
			t.Errorf("got %+v", r)
		}
		mustUnmarshal(t, `{"promote_semantic":false,"max_groups":0,"secrecy_levels":[]}`, &r)
		if r.PromoteSemantic || r.MaxGroups != 0 || r.SecrecyLevels == nil {
			t.Errorf("explicit: %+v", r)
		}
	})
	t.Run("export import", func(t *testing.T) {
		var e ExportRequest
		mustUnmarshal(t, `{}`, &e)
		if e.Format != "cma" {
			t.Errorf("format %q", e.Format)
		}
		var i ImportRequest
		mustUnmarshal(t, `{"archive_id":"a"}`, &i)
		if i.Strategy != ImportMerge || i.ConflictResolution != KeepNewer || i.ArchiveData != nil {
			t.Errorf("import: %+v", i)
		}
		mustUnmarshal(t, `{"archive_id":"a","archive_data":[1,2]}`, &i)
		if !bytes.Equal(i.ArchiveData, []byte{1, 2}) {
			t.Errorf("archive data %v", i.ArchiveData)
		}
	})
	t.Run("store raw", func(t *testing.T) {
		var r EncodeStoreRawRequest
		mustUnmarshal(t, `{"session_id":"s","content":{"blocks":[{"modality":"text","format":"text/plain","data":[104]}]}}`, &r)
		if r.Source != SourceConversation || r.Speaker != SpeakerUser || r.Visibility != VisibilityNormal || r.SecrecyLevel != SecrecySensitive {
			t.Errorf("defaults: %+v", r)
		}
		if r.Metadata != nil || r.Meta != nil || r.RecordID != nil || r.TurnID != nil || r.TopicID != nil {
			t.Errorf("absent nullable fields set: %+v", r)
		}
		if d := DefaultEncodeStoreRawRequest(); d.Source != r.Source || d.Speaker != r.Speaker || d.Visibility != r.Visibility || d.SecrecyLevel != r.SecrecyLevel {
			t.Errorf("DefaultEncodeStoreRawRequest = %+v", d)
		}
		mustUnmarshal(t, `{"session_id":"s","source":"imported","speaker":"tool","visibility":"sealed","secrecy_level":"public",
			"record_id":"0196a9e25c1d7f008a000000000000aa","content":{"blocks":[]}}`, &r)
		if r.Source != SourceImported || r.Speaker != SpeakerTool || r.Visibility != VisibilitySealed || r.SecrecyLevel != SecrecyPublic ||
			r.RecordID == nil || *r.RecordID != idA {
			t.Errorf("explicit: %+v", r)
		}
	})
	t.Run("batch raw nested defaults", func(t *testing.T) {
		var r EncodeBatchStoreRawRequest
		mustUnmarshal(t, `{"records":[
			{"session_id":"a","content":{"blocks":[]}},
			{"session_id":"b","speaker":"assistant","secrecy_level":"secret","content":{"blocks":[]}}]}`, &r)
		if len(r.Records) != 2 {
			t.Fatalf("records %d", len(r.Records))
		}
		a, b := r.Records[0], r.Records[1]
		if a.Source != SourceConversation || a.Speaker != SpeakerUser || a.Visibility != VisibilityNormal || a.SecrecyLevel != SecrecySensitive {
			t.Errorf("first record defaults: %+v", a)
		}
		if b.Source != SourceConversation || b.Speaker != SpeakerAssistant || b.Visibility != VisibilityNormal || b.SecrecyLevel != SecrecySecret {
			t.Errorf("second record: %+v", b)
		}
	})
	t.Run("batch nested", func(t *testing.T) {
		var r EncodeBatchRequest
		mustUnmarshal(t, `{"records":[{"content":{"blocks":[{"modality":"text","format":"f","data":[1]}]},"meta":{"intent":"i"}}]}`, &r)
		if len(r.Records) != 1 || r.InferAssociations {
			t.Fatalf("batch: %+v", r)
		}
		m := r.Records[0].Meta
		if m == nil || m.SchemaVersion != 1 || m.CaptureStatus != CaptureLegacy || m.Intent == nil || *m.Intent != "i" {
			t.Errorf("nested meta defaults: %+v", m)
		}
	})
	t.Run("meta edge relation", func(t *testing.T) {
		var m MetaMemory
		mustUnmarshal(t, `{"context_edges":[{"target_id":"0196a9e2-5c1d-7f00-8a00-0000000000aa"},{"target_id":"0196a9e2-5c1d-7f00-8a00-0000000000bb","relation":"supports"}]}`, &m)
		if len(m.ContextEdges) != 2 || m.ContextEdges[0].Relation != RelContextOf || m.ContextEdges[1].Relation != RelSupports {
			t.Errorf("edges %+v", m.ContextEdges)
		}
		if m.SchemaVersion != 1 || m.CaptureStatus != CaptureLegacy {
			t.Errorf("meta defaults %d %v", m.SchemaVersion, m.CaptureStatus)
		}
		mustUnmarshal(t, `{"schema_version":0,"capture_status":"inferred"}`, &m)
		if m.SchemaVersion != 0 || m.CaptureStatus != CaptureInferred {
			t.Errorf("explicit meta %d %v", m.SchemaVersion, m.CaptureStatus)
		}
	})
}

func TestNullableFieldsAcceptNull(t *testing.T) {
	var r EncodeStoreRequest
	mustUnmarshal(t, `{"header":null,"content":{"blocks":[{"modality":"text","format":"f","data":[1],"embedding":null}],"summary":null},
		"store":null,"emotion":null,"context":null,"metadata":null,"associations":null,"meta":null}`, &r)
	if r.Header != nil || r.Store != nil || r.Emotion != nil || r.Context != nil || r.Metadata != nil || r.Associations != nil || r.Meta != nil ||
		r.Content.Summary != nil || r.Content.Blocks[0].Embedding != nil {
		t.Errorf("nulls not absent: %+v", r)
	}

	var u EncodeUpdateRequest
	mustUnmarshal(t, `{"record_id":"0196a9e2-5c1d-7f00-8a00-0000000000aa","content":null,"emotion":null,"metadata":null,"meta":null}`, &u)
	if u.Content != nil || u.Emotion != nil || u.Metadata != nil || u.Meta != nil || u.RecordID != idA {
		t.Errorf("update nulls: %+v", u)
	}

	var q RecallQueryRequest
	mustUnmarshal(t, `{"cue":{"text":null,"image":null,"audio":null,"emotion":null,"temporal":null,"spatial":null,"semantic":null,"embedding":null},
		"stores":null,"min_fidelity":null,"recall_mode":null}`, &q)
	c := q.Cue
	if c.Text != nil || c.Image != nil || c.Audio != nil || c.Emotion != nil || c.Temporal != nil || c.Embedding != nil ||
		q.Stores != nil || q.MinFidelity != nil || q.RecallMode != nil {
		t.Errorf("cue nulls: %+v", q)
	}

	var raw RecallRawQueryRequest
	mustUnmarshal(t, `{"session_id":null,"query":null,"temporal":null,"secrecy_levels":null}`, &raw)
	if raw.SessionID != nil || raw.Query != nil || raw.Temporal != nil || raw.SecrecyLevels != nil || raw.Limit != 10 {
		t.Errorf("raw nulls: %+v", raw)
	}

	var f ForgetRequest
	mustUnmarshal(t, `{"record_ids":null,"store":null,"temporal_range":null}`, &f)
	if f.Confirm != nil {
		t.Errorf("missing confirm decoded as %v", *f.Confirm)
	}
	mustUnmarshal(t, `{"confirm":false}`, &f)
	if f.Confirm == nil || *f.Confirm {
		t.Errorf("confirm false decoded as %v", f.Confirm)
	}

	var d DecayTickRequest
	mustUnmarshal(t, `{"tick_duration_seconds":null}`, &d)
	if d.TickDurationSeconds != nil {
		t.Error("tick duration null")
	}
	mustUnmarshal(t, `{"tick_duration_seconds":0}`, &d)
	if d.TickDurationSeconds == nil || *d.TickDurationSeconds != 0 {
		t.Error("tick duration 0 lost")
	}
}

func TestUnknownFieldsIgnored(t *testing.T) {
	var r EncodeStoreRawRequest
	mustUnmarshal(t, `{"session_id":"s","extra":{"deep":[1,2]},"content":{"blocks":[{"modality":"text","format":"f","data":[1],"shape":"x"}],"more":1},"zzz":null}`, &r)
	if r.SessionID != "s" || len(r.Content.Blocks) != 1 {
		t.Errorf("got %+v", r)
	}
	var m MetaMemory
	mustUnmarshal(t, `{"alternatives":[{"option":"a","reason_dropped":"x"}],"evidence":[{"kind":"log","label":"l"}]}`, &m)
	if len(m.Alternatives) != 1 || m.Alternatives[0].Option != "a" || len(m.Evidence) != 1 || *m.Evidence[0].Label != "l" {
		t.Errorf("meta with unknown fields: %+v", m)
	}
}

func TestNumbersMustFitTheirType(t *testing.T) {
	for _, doc := range []string{`{"limit":-1}`, `{"limit":1.5}`, `{"limit":4294967296}`, `{"limit":"10"}`} {
		var r RecallRawQueryRequest
		if err := json.Unmarshal([]byte(doc), &r); err == nil {
			t.Errorf("%s accepted as limit %d", doc, r.Limit)
		}
	}
}

func mustUnmarshal(t *testing.T, doc string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(doc), v); err != nil {
		t.Fatalf("Unmarshal(%s): %v", doc, err)
	}
}

// The request examples of the contract decode to what they say.
func TestDecodeContractExamples(t *testing.T) {
	var s EncodeStoreRequest
	mustUnmarshal(t, `{"header":{"protocol":"cmp","version":"1.0","request_id":"0196a9e2-5c1d-7f00-8a00-0000000000cc","timestamp":"2025-03-01T13:00:00+01:00"},
	 "content":{"blocks":[{"modality":"text","format":"text/plain","data":[104,105],"embedding":null}],"summary":null},
	 "store":"semantic","emotion":{"joy":0.6,"intensity":0.5,"valence":0.4},"metadata":{"src":"chat"},
	 "context":{"source":"cli","session_id":"s1","spatial":{"x":1},"temporal":null},
	 "associations":[{"target_id":"0196a9e2-5c1d-7f00-8a00-0000000000bb","association_type":"causal","weight":0.4}],
	 "meta":{"intent":"greet"}}`, &s)
	if s.Header == nil || s.Header.Protocol != "cmp" || s.Header.RequestID != idC || !s.Header.Timestamp.Equal(t0) {
		t.Errorf("header %+v", s.Header)
	}
	if len(s.Content.Blocks) != 1 || string(s.Content.Blocks[0].Data) != "hi" || s.Content.Blocks[0].Modality != ModalityText {
		t.Errorf("content %+v", s.Content)
	}
	if s.Store == nil || *s.Store != StoreSemantic {
		t.Errorf("store %v", s.Store)
	}
	if want := (EmotionVector{Joy: 0.6, Intensity: 0.5, Valence: 0.4}); s.Emotion == nil || *s.Emotion != want {
		t.Errorf("emotion %+v", s.Emotion)
	}
	if string(s.Metadata) != `{"src":"chat"}` {
		t.Errorf("metadata %s", s.Metadata)
	}
	// json.RawMessage keeps a null as the text "null" (it marshals back
	// the same, so the stored _context is unaffected).
	if c := s.Context; c == nil || *c.Source != "cli" || *c.SessionID != "s1" || string(c.Spatial) != `{"x":1}` || string(c.Temporal) != "null" {
		t.Errorf("context %+v", s.Context)
	}
	if want := []ManualAssociation{{TargetID: idB, AssociationType: AssocCausal, Weight: 0.4}}; !reflect.DeepEqual(s.Associations, want) {
		t.Errorf("associations %+v", s.Associations)
	}
	if s.Meta == nil || *s.Meta.Intent != "greet" || s.Meta.CaptureStatus != CaptureLegacy {
		t.Errorf("meta %+v", s.Meta)
	}

	var f ForgetRequest
	mustUnmarshal(t, `{"record_ids":["0196a9e25c1d7f008a000000000000aa"],"store":"working",
	 "temporal_range":{"start":"2025-03-01T12:00:00Z","end":"2025-03-01T12:30:15.5Z"},"cascade":true,"confirm":true}`, &f)
	if !reflect.DeepEqual(f.RecordIDs, []ID{idA}) || *f.Store != StoreWorking || !f.TemporalRange.End.Equal(t1) || !f.Cascade || !*f.Confirm {
		t.Errorf("forget %+v", f)
	}

	var m SetModeRequest
	mustUnmarshal(t, `{"mode":"perfect","scope":["episodic","semantic"]}`, &m)
	if m.Mode != ModePerfect || !reflect.DeepEqual(m.Scope, []StoreType{StoreEpisodic, StoreSemantic}) {
		t.Errorf("set mode %+v", m)
	}

	var d DecayForecastRequest
	mustUnmarshal(t, `{"record_ids":["0196a9e2-5c1d-7f00-8a00-0000000000aa"],"forecast_at":"2025-03-02T08:00:00.123456789Z"}`, &d)
	if !d.ForecastAt.Equal(t2) || len(d.RecordIDs) != 1 {
		t.Errorf("forecast %+v", d)
	}
	// Timestamps must be RFC 3339.
	if err := json.Unmarshal([]byte(`{"record_ids":[],"forecast_at":"2025-03-02 08:00:00"}`), &d); err == nil {
		t.Error("non-RFC 3339 timestamp accepted")
	}
}

type enumValue interface {
	~uint8
	String() string
	Valid() bool
}

// checkEnum checks String, Valid, the Parse function (when there is one)
// and JSON decoding of every value of one enumeration, plus the unset and
// out-of-range values.
func checkEnum[T enumValue](t *testing.T, names string, parse func(string) (T, error)) {
	t.Helper()
	list := strings.Fields(names)
	for i, name := range list {
		v := T(i + 1)
		if v.String() != name || !v.Valid() {
			t.Errorf("%T(%d): String %q Valid %v, want %q", v, i+1, v.String(), v.Valid(), name)
		}
		var dec T
		if err := json.Unmarshal([]byte(`"`+name+`"`), &dec); err != nil || dec != v {
			t.Errorf("JSON %q = %v, %v", name, dec, err)
		}
		if parse != nil {
			if got, err := parse(name); err != nil || got != v {
				t.Errorf("Parse(%q) = %v, %v", name, got, err)
			}
			if _, err := parse(strings.ToUpper(name)); !errors.Is(err, ErrValidation) {
				t.Errorf("Parse(%q) accepted or wrong error: %v", strings.ToUpper(name), err)
			}
		}
	}
	for _, bad := range []T{0, T(len(list) + 1), 255} {
		if bad.Valid() || bad.String() != "" {
			t.Errorf("%T(%d): Valid %v String %q", bad, uint8(bad), bad.Valid(), bad.String())
		}
		if _, err := json.Marshal(bad); err == nil {
			t.Errorf("%T(%d) marshalled", bad, uint8(bad))
		}
	}
}

func TestEnums(t *testing.T) {
	checkEnum(t, "episodic semantic procedural emotional working", ParseStoreType)
	checkEnum[Modality](t, "text image audio video structured spatial temporal interoceptive", nil)
	checkEnum(t, "temporal spatial semantic emotional causal sequential cross_modal user_defined", ParseAssociationType)
	checkEnum[AssociationOrigin](t, "client derivation similarity", nil)
	checkEnum(t, "human perfect", ParseRecallMode)
	checkEnum(t, "conversation tool_io scratchpad summary imported", ParseRawSource)
	checkEnum(t, "user assistant system tool", ParseRawSpeaker)
	checkEnum(t, "normal private_scratch sealed", ParseVisibility)
	checkEnum(t, "public sensitive secret", ParseSecrecyLevel)
	checkEnum[MetaCaptureStatus](t, "provided inferred legacy unavailable", nil)
	checkEnum[MetaRelation](t, "motivated_by caused_by derived_from supports contradicts chose_over explains context_of", nil)
	checkEnum(t, "minute hour day week month", ParseTimeGranularity)
	checkEnum(t, "full incremental selective", ParseConsolidationStrategy)
	checkEnum(t, "merge replace", ParseImportStrategy)
	checkEnum(t, "keep_existing keep_imported keep_newer", ParseConflictResolution)
}
