package mcpproxy

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/grpcapi/memsvcpb"
	"memsvc.dev/memsvc/pkg/httpapi"
)

// The schemas' enumerations and defaults are built from pkg/memory. The
// tests in this file hold them against sources that do not share that
// code: the gRPC wire contract (the protobuf definition, a separate
// document of the same values) and what a real server does with every
// value and with every omitted argument.

// protoEnums maps the argument and field names that take an enumeration
// to the protobuf enum that defines its values on the gRPC wire.
var protoEnums = map[string]protoreflect.Name{
	"store": "StoreType", "stores": "StoreType", "stores_searched": "StoreType",
	"records_by_store": "StoreType", "avg_fidelity_by_store": "StoreType",
	"modality":         "Modality",
	"association_type": "AssociationType", "edge_type": "AssociationType",
	"origin":        "AssociationOrigin",
	"source":        "RawSource",
	"speaker":       "RawSpeaker",
	"visibility":    "Visibility",
	"secrecy_level": "SecrecyLevel", "secrecy_levels": "SecrecyLevel",
	"capture_status": "MetaCaptureStatus",
	"relation":       "MetaRelation",
	"granularity":    "TimeGranularity",
	"strategy":       "ConsolidationStrategy",
}

// wireNames returns the JSON spellings of a protobuf enum's values, in
// number order: STORE_TYPE_EPISODIC is episodic.
func wireNames(t *testing.T, name protoreflect.Name) []string {
	t.Helper()
	e := memsvcpb.File_memsvc_v1_memsvc_proto.Enums().ByName(name)
	if e == nil {
		t.Fatalf("no enum %s in the protobuf definition", name)
	}
	prefix := strings.ToUpper(snake(string(name))) + "_"
	var out []string
	for i := range e.Values().Len() {
		v := e.Values().Get(i)
		if v.Number() == 0 {
			continue // UNSPECIFIED, "absent"
		}
		out = append(out, strings.ToLower(strings.TrimPrefix(string(v.Name()), prefix)))
	}
	return out
}

// snake turns StoreType into store_type.
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToLower(b.String())
}

// schemaEnums calls visit for every enumeration in schema, with the name
// of the property (or argument) it belongs to.
func schemaEnums(schema any, prop string, visit func(prop string, values []string)) {
	switch s := schema.(type) {
	case map[string]any:
		if e, ok := s["enum"].([]any); ok {
			var values []string
			for _, v := range e {
				if v != nil { // a nullable property's null
					values = append(values, fmt.Sprint(v))
				}
			}
			visit(prop, values)
		}
		for k, v := range s {
			switch k {
			case "properties":
				for name, sub := range v.(map[string]any) {
					schemaEnums(sub, name, visit)
				}
			case "enum", "default", "description":
			default: // items, additionalProperties, propertyNames: same property
				schemaEnums(v, prop, visit)
			}
		}
	case []any:
		for _, v := range s {
			schemaEnums(v, prop, visit)
		}
	}
}

// TestSchemaEnumsMatchWire: every enumeration in every input and output
// schema lists exactly the values of the same enumeration on the gRPC
// wire, in the same order. Emotion labels are the axes of the protobuf
// EmotionVector, and the export formats are what the engine accepts
// (TestSchemaMatchesServer).
func TestSchemaEnumsMatchWire(t *testing.T) {
	p := New(newEngine(t), Options{})
	axes := memsvcpb.File_memsvc_v1_memsvc_proto.Messages().ByName("EmotionVector").Fields()
	var emotions []string
	for i := range axes.Len() {
		if n := string(axes.Get(i).Name()); n != "intensity" && n != "valence" {
			emotions = append(emotions, n)
		}
	}
	seen := map[string]bool{}
	for _, tl := range toolList(t, p) {
		name := tl["name"].(string)
		for _, which := range []string{"inputSchema", "outputSchema"} {
			schemaEnums(tl[which], "", func(prop string, values []string) {
				seen[prop] = true
				var want []string
				switch {
				case prop == "emotion":
					want = emotions
				case prop == "format" && name == "export":
					return
				case protoEnums[prop] != "":
					want = wireNames(t, protoEnums[prop])
				default:
					t.Errorf("%s %s: enumeration %q %v has no counterpart on the wire; add it to protoEnums", name, which, prop, values)
					return
				}
				if !slices.Equal(values, want) {
					t.Errorf("%s %s: %s lists %v; the wire has %v", name, which, prop, values, want)
				}
			})
		}
	}
	// The walk found the enumerations it is meant to check.
	for _, prop := range []string{"store", "stores", "emotion", "source", "speaker", "visibility", "secrecy_level", "secrecy_levels",
		"granularity", "strategy", "modality", "association_type", "capture_status", "relation", "records_by_store"} {
		if !seen[prop] {
			t.Errorf("no enumeration %s in any schema", prop)
		}
	}
}

// schemaArgs returns the input schema properties of every tool p lists.
func schemaArgs(t *testing.T, p *Proxy) map[string]map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]map[string]any{}
	for _, tl := range toolList(t, p) {
		props := map[string]map[string]any{}
		for k, v := range tl["inputSchema"].(map[string]any)["properties"].(map[string]any) {
			props[k] = v.(map[string]any)
		}
		out[tl["name"].(string)] = props
	}
	return out
}

func enumOf(t *testing.T, prop map[string]any) []string {
	t.Helper()
	if items, ok := prop["items"].(map[string]any); ok {
		prop = items
	}
	var out []string
	for _, v := range prop["enum"].([]any) {
		out = append(out, v.(string))
	}
	if len(out) == 0 {
		t.Fatalf("no enum in %v", prop)
	}
	return out
}

// mustCall runs a tool that must succeed and decodes its answer.
func mustCall[T any](t *testing.T, p *Proxy, tool string, args map[string]any) T {
	t.Helper()
	text, isErr := callTool(t, p, tool, args)
	if isErr {
		t.Fatalf("%s %v: %s", tool, args, text)
	}
	var v T
	mustJSON(t, text, &v)
	return v
}

// TestSchemaMatchesServer holds the schemas against a real server behind
// the proxy: every value of every enumeration argument is accepted and
// comes back as given, and an argument left out behaves as its schema
// default says. The values and defaults are read from tools/list.
func TestSchemaMatchesServer(t *testing.T) {
	p := newProxy(t, newHTTP(t, httpapi.Options{}), client.Options{}, Options{ExportDir: t.TempDir()})
	args := schemaArgs(t, p)
	def := func(tool, arg string) any {
		d, ok := args[tool][arg]["default"]
		if !ok {
			t.Fatalf("%s.%s has no default", tool, arg)
		}
		return d
	}
	limit := func(tool, arg string) int { return int(def(tool, arg).(float64)) }

	type stored struct {
		RecordID string `json:"record_id"`
		Store    string `json:"store"`
	}
	for _, s := range enumOf(t, args["store"]["store"]) {
		if got := mustCall[stored](t, p, "store", map[string]any{"content": "kept in the " + s + " store", "store": s}); got.Store != s {
			t.Errorf("store %s: stored in %s", s, got.Store)
		}
	}
	type recalled struct {
		Memories []struct {
			RecordID string  `json:"record_id"`
			Text     string  `json:"text"`
			Emotion  *string `json:"emotion"`
		} `json:"memories"`
	}
	for _, e := range enumOf(t, args["store"]["emotion"]) {
		text := "an event that felt like " + e
		mustCall[stored](t, p, "store", map[string]any{"content": text, "emotion": e})
		r := mustCall[recalled](t, p, "recall", map[string]any{"query": text, "limit": 1, "reconsolidate": false})
		if len(r.Memories) != 1 || r.Memories[0].Text != text || r.Memories[0].Emotion == nil || *r.Memories[0].Emotion != e {
			t.Errorf("emotion %s: recalled as %+v", e, r.Memories)
		}
	}

	// Raw entries: each value of each enumeration is stored as given; an
	// entry without them gets the schema defaults.
	type rawEntry struct {
		Text         string `json:"text"`
		Source       string `json:"source"`
		Speaker      string `json:"speaker"`
		Visibility   string `json:"visibility"`
		SecrecyLevel string `json:"secrecy_level"`
	}
	type rawAnswer struct {
		Records         []rawEntry `json:"records"`
		TotalCandidates int        `json:"total_candidates"`
	}
	everything := map[string]any{"include_private_scratch": true, "include_sealed": true, "secrecy_levels": enumOf(t, args["recall_raw"]["secrecy_levels"])}
	rawField := func(e rawEntry, arg string) string {
		return map[string]string{"source": e.Source, "speaker": e.Speaker, "visibility": e.Visibility, "secrecy_level": e.SecrecyLevel}[arg]
	}
	for _, arg := range []string{"source", "speaker", "visibility", "secrecy_level"} {
		for _, v := range enumOf(t, args["store_raw"][arg]) {
			session := "enum-" + arg + "-" + v
			mustCall[map[string]any](t, p, "store_raw", map[string]any{"content": "an entry", "session_id": session, arg: v})
			q := map[string]any{"session_id": session}
			for k, x := range everything {
				q[k] = x
			}
			r := mustCall[rawAnswer](t, p, "recall_raw", q)
			if len(r.Records) != 1 || rawField(r.Records[0], arg) != v {
				t.Errorf("store_raw %s=%s: recalled as %+v", arg, v, r.Records)
			}
		}
	}
	mustCall[map[string]any](t, p, "store_raw", map[string]any{"content": "an entry with defaults", "session_id": "defaults"})
	r := mustCall[rawAnswer](t, p, "recall_raw", map[string]any{"session_id": "defaults"})
	if len(r.Records) != 1 {
		t.Fatalf("recall_raw with its defaults did not find an entry stored with the defaults: %+v", r)
	}
	for _, arg := range []string{"source", "speaker", "visibility", "secrecy_level"} {
		if got := rawField(r.Records[0], arg); got != def("store_raw", arg) {
			t.Errorf("store_raw without %s stored %s, the schema says %v", arg, got, def("store_raw", arg))
		}
	}
	// The listing defaults leave out what the schema says they leave out.
	hidden := 0
	for _, v := range enumOf(t, args["store_raw"]["visibility"]) {
		if v != "normal" {
			hidden++
		}
	}
	r = mustCall[rawAnswer](t, p, "recall_raw", map[string]any{"query": "entry", "limit": 1000})
	for _, e := range r.Records {
		if (e.Visibility == "private_scratch") != def("recall_raw", "include_private_scratch").(bool) ||
			(e.Visibility == "sealed") != def("recall_raw", "include_sealed").(bool) || e.SecrecyLevel == "secret" {
			t.Errorf("recall_raw with its defaults returned %+v", e)
		}
	}

	// Limits: one more record than the default, and the default comes back.
	n := max(limit("recall", "limit"), limit("recall_raw", "limit"), limit("timeline", "limit")) + 1
	many := make([]any, n)
	rawMany := make([]any, n)
	for i := range many {
		many[i] = map[string]any{"content": fmt.Sprint("numbered note ", i)}
		rawMany[i] = map[string]any{"content": fmt.Sprint("numbered line ", i), "session_id": "many"}
	}
	mustCall[map[string]any](t, p, "batch_store", map[string]any{"records": many})
	mustCall[map[string]any](t, p, "batch_store_raw", map[string]any{"records": rawMany})
	if got := mustCall[recalled](t, p, "recall", map[string]any{"reconsolidate": false}); len(got.Memories) != limit("recall", "limit") {
		t.Errorf("recall without limit: %d memories, the schema says %d", len(got.Memories), limit("recall", "limit"))
	}
	if got := mustCall[rawAnswer](t, p, "recall_raw", map[string]any{"session_id": "many"}); len(got.Records) != limit("recall_raw", "limit") || got.TotalCandidates != n {
		t.Errorf("recall_raw without limit: %d of %d entries, the schema says %d", len(got.Records), got.TotalCandidates, limit("recall_raw", "limit"))
	}
	type timeline struct {
		Buckets []struct {
			Start    time.Time `json:"start"`
			End      time.Time `json:"end"`
			Count    int       `json:"count"`
			Memories []any     `json:"memories"`
		} `json:"buckets"`
		Truncated bool `json:"truncated"`
	}
	got := mustCall[timeline](t, p, "timeline", map[string]any{})
	returned := 0
	for _, b := range got.Buckets {
		returned += len(b.Memories)
	}
	if returned != limit("timeline", "limit") || !got.Truncated {
		t.Errorf("timeline without limit: %d memories (truncated %v), the schema says %d", returned, got.Truncated, limit("timeline", "limit"))
	}
	// Granularity: every value is accepted; leaving it out gives the
	// buckets of the default.
	width := map[string]time.Duration{}
	for _, g := range enumOf(t, args["timeline"]["granularity"]) {
		tl := mustCall[timeline](t, p, "timeline", map[string]any{"granularity": g, "limit": 1})
		if len(tl.Buckets) != 1 {
			t.Fatalf("timeline %s: %+v", g, tl)
		}
		width[g] = tl.Buckets[0].End.Sub(tl.Buckets[0].Start)
	}
	tl := mustCall[timeline](t, p, "timeline", map[string]any{"limit": 1})
	if len(tl.Buckets) != 1 || tl.Buckets[0].End.Sub(tl.Buckets[0].Start) != width[def("timeline", "granularity").(string)] {
		t.Errorf("timeline without granularity: %+v, the schema says %v (%v)", tl.Buckets, def("timeline", "granularity"), width)
	}

	// associate: a chain of records linked only in sequence (one word
	// each, shared with nothing, so no similarity links); from its first
	// record the default depth reaches that many hops.
	chain := make([]any, 2*limit("associate", "depth")+2)
	for i := range chain {
		chain[i] = map[string]any{"content": fmt.Sprintf("chainlink%03d", i)}
	}
	batch := mustCall[struct {
		Results []stored `json:"results"`
	}](t, p, "batch_store", map[string]any{"records": chain})
	type associated struct {
		Memories []struct {
			ActivationPath []string `json:"activation_path"`
		} `json:"memories"`
	}
	a := mustCall[associated](t, p, "associate", map[string]any{"record_id": batch.Results[0].RecordID, "limit": 256})
	if len(a.Memories) != limit("associate", "depth") {
		t.Errorf("associate without depth from the end of a chain: %d memories, the schema says depth %d", len(a.Memories), limit("associate", "depth"))
	}
	// A hub that every later record sharing its words is linked to.
	hub := mustCall[stored](t, p, "store", map[string]any{"content": "hubword spokeword"})
	for i := range limit("associate", "limit") + 2 {
		mustCall[stored](t, p, "store", map[string]any{"content": fmt.Sprintf("hubword spokeword spoke%03d", i)})
	}
	all := mustCall[associated](t, p, "associate", map[string]any{"record_id": hub.RecordID, "depth": 1, "limit": 256})
	a = mustCall[associated](t, p, "associate", map[string]any{"record_id": hub.RecordID, "depth": 1})
	if len(all.Memories) <= limit("associate", "limit") || len(a.Memories) != limit("associate", "limit") {
		t.Errorf("associate without limit: %d of %d memories, the schema says %d", len(a.Memories), len(all.Memories), limit("associate", "limit"))
	}

	// dream_tick: one more session than the default group count.
	groups := limit("dream_tick", "max_groups") + 1
	for i := range groups {
		mustCall[map[string]any](t, p, "batch_store_raw", map[string]any{"records": []any{
			map[string]any{"content": "first line", "session_id": fmt.Sprint("dream-", i), "topic_id": "t"},
			map[string]any{"content": "second line", "session_id": fmt.Sprint("dream-", i), "topic_id": "t"},
		}})
	}
	type dreamt struct {
		GroupsProcessed      int `json:"groups_processed"`
		SemanticNodesCreated int `json:"semantic_nodes_created"`
	}
	if !def("dream_tick", "dry_run").(bool) && def("dream_tick", "promote_semantic").(bool) {
		d := mustCall[dreamt](t, p, "dream_tick", map[string]any{"dry_run": true})
		if d.GroupsProcessed != limit("dream_tick", "max_groups") || d.SemanticNodesCreated == 0 {
			t.Errorf("dream_tick without max_groups and promote_semantic: %+v, the schema says %d groups, promoted", d, limit("dream_tick", "max_groups"))
		}
	} else {
		t.Errorf("dream_tick defaults changed: update this test")
	}

	// consolidate and export accept every value of their enumerations.
	for _, s := range enumOf(t, args["consolidate"]["strategy"]) {
		mustCall[map[string]any](t, p, "consolidate", map[string]any{"strategy": s, "dry_run": true})
	}
	for _, f := range enumOf(t, args["export"]["format"]) {
		mustCall[map[string]any](t, p, "export", map[string]any{"output_path": "all." + f, "format": f})
	}
	if text, isErr := callTool(t, p, "export", map[string]any{"output_path": "x.zip", "format": "zip"}); !isErr {
		t.Errorf("export format zip accepted: %s", text)
	}
}
