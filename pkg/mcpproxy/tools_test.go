package mcpproxy

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/httpapi"
	"memsvc.dev/memsvc/pkg/memory"
)

// store saves text through the store tool and returns the record id.
func storeMemory(t *testing.T, p *Proxy, arguments map[string]any) string {
	t.Helper()
	text, isErr := callTool(t, p, "store", arguments)
	if isErr {
		t.Fatalf("store: %s", text)
	}
	var r memory.EncodeStoreResponse
	mustJSON(t, text, &r)
	return r.RecordID.String()
}

// TestToolArguments calls every tool with valid and invalid arguments
// against a real server and checks the result text (or error text).
func TestToolArguments(t *testing.T) {
	p := newProxy(t, newHTTP(t, httpapi.Options{}), client.Options{}, Options{})
	id := storeMemory(t, p, map[string]any{"content": "the deploy key rotates on Fridays", "store": "semantic"})
	id2 := storeMemory(t, p, map[string]any{"content": "deploys need two approvals"})
	if text, isErr := callTool(t, p, "store_raw", map[string]any{"content": "user: when do keys rotate?", "session_id": "s1", "topic_id": "keys"}); isErr {
		t.Fatal(text)
	}
	missing := "0190b6a4-7c1e-7a55-9f1a-5f2b3c4d5e6f"
	many := make([]map[string]any, memory.MaxBatchRecords+1)
	for i := range many {
		many[i] = map[string]any{"content": fmt.Sprint("note ", i)}
	}
	manyJSON, _ := json.Marshal(many)

	tests := []struct {
		name    string
		tool    string
		args    any
		wantErr bool
		want    []string // substrings of the result text
	}{
		// store
		{"store minimal", "store", map[string]any{"content": "hello"}, false, []string{`"store": "episodic"`, `"initial_fidelity": 1`}},
		{"store all arguments", "store", map[string]any{"content": "we chose pebble", "store": " Semantic ", "emotion": "JOY", "meta_json": `{"intent":"choose an engine","tags":["adr"]}`}, false, []string{`"store": "semantic"`}},
		{"store meta as object", "store", map[string]any{"content": "x", "meta_json": map[string]any{"rationale": "because"}}, false, []string{`"record_id"`}},
		{"store emotion alias", "store", map[string]any{"content": "x", "emotion": "happy"}, false, []string{`"record_id"`}},
		{"store null optional", "store", map[string]any{"content": "x", "store": nil, "meta_json": ""}, false, []string{`"store": "episodic"`}},
		{"store missing content", "store", map[string]any{}, true, []string{`Invalid argument "content": required`, "Nothing was sent"}},
		{"store blank content", "store", map[string]any{"content": " \n "}, true, []string{`"content": must not be blank`}},
		{"store content not a string", "store", map[string]any{"content": 42}, true, []string{`"content": must be a string, got a number`}},
		{"store bad store", "store", map[string]any{"content": "x", "store": "epsiodic"}, true, []string{`"store": "epsiodic" is not accepted; use one of: episodic, semantic, procedural, emotional, working`}},
		{"store bad emotion", "store", map[string]any{"content": "x", "emotion": "bored"}, true, []string{`"emotion": "bored" is not an emotion label; use one of: joy, trust`}},
		{"store meta not JSON", "store", map[string]any{"content": "x", "meta_json": "{intent"}, true, []string{`"meta_json": not a valid meta-memory JSON object`}},
		{"store meta unknown field", "store", map[string]any{"content": "x", "meta_json": `{"why":"because"}`}, true, []string{`unknown field "why"`, "rationale"}},
		{"store meta confidence", "store", map[string]any{"content": "x", "meta_json": `{"confidence":2}`}, true, []string{"confidence", "between 0 and 1"}},
		{"store unknown argument", "store", map[string]any{"content": "x", "stor": "semantic"}, true, []string{`"stor": unknown argument; this tool accepts: content, emotion, meta_json, store`}},
		{"arguments not an object", "store", []any{"x"}, true, []string{`"arguments": must be a JSON object`}},
		{"store too large", "store", map[string]any{"content": strings.Repeat("x", memory.MaxTextBlockBytes+1)}, true, []string{"Too large:", "split it"}},

		// store_raw
		{"store_raw defaults", "store_raw", map[string]any{"content": "tool output", "session_id": " s2 "}, false, []string{`"session_id": "s2"`, `"visibility": "normal"`, `"secrecy_level": "public"`}},
		{"store_raw all arguments", "store_raw", map[string]any{"content": "x", "session_id": "s2", "turn_id": "t1", "topic_id": "k", "source": "tool_io", "speaker": "tool", "visibility": "sealed", "secrecy_level": "secret", "meta_json": `{"intent":"log"}`}, false, []string{`"visibility": "sealed"`, `"secrecy_level": "secret"`}},
		{"store_raw missing session", "store_raw", map[string]any{"content": "x"}, true, []string{`"session_id": required`}},
		{"store_raw blank session", "store_raw", map[string]any{"content": "x", "session_id": "  "}, true, []string{`"session_id": must not be blank`}},
		{"store_raw bad source", "store_raw", map[string]any{"content": "x", "session_id": "s", "source": "web"}, true, []string{`"source": "web" is not accepted; use one of: conversation, tool_io`}},
		{"store_raw bad visibility", "store_raw", map[string]any{"content": "x", "session_id": "s", "visibility": "hidden"}, true, []string{`"visibility"`, "private_scratch"}},

		// update
		{"update content", "update", map[string]any{"record_id": id2, "content": "deploys need three approvals"}, false, []string{"Updated record " + id2}},
		{"update emotion and meta", "update", map[string]any{"record_id": strings.ToUpper(id2), "emotion": "trust", "meta_json": `{"rationale":"policy"}`}, false, []string{"Updated record " + id2}},
		{"update nothing", "update", map[string]any{"record_id": id2}, true, []string{"nothing to update: give at least one of content, emotion, meta_json"}},
		{"update blank content", "update", map[string]any{"record_id": id2, "content": ""}, true, []string{`"content": must not be blank`}},
		{"update bad id", "update", map[string]any{"record_id": "42", "content": "x"}, true, []string{`"record_id": "42" is not a record id; want a UUID`}},
		{"update unknown id", "update", map[string]any{"record_id": missing, "content": "x"}, true, []string{"Not found: record not found: " + missing, "recall, recall_raw and timeline"}},

		// batch_store
		{"batch_store", "batch_store", map[string]any{"records_json": `[{"content":"a"},{"content":"b","store":"procedural","emotion":"fear","meta_json":"{\"intent\":\"x\"}"}]`}, false, []string{`"associations_inferred": 2`, `"store": "procedural"`}},
		{"batch_store array given directly", "batch_store", map[string]any{"records_json": []any{map[string]any{"content": "c"}}}, false, []string{`"results"`}},
		{"batch_store not JSON", "batch_store", map[string]any{"records_json": "a, b"}, true, []string{`"records_json": not a JSON array of objects`}},
		{"batch_store object", "batch_store", map[string]any{"records_json": `{"content":"a"}`}, true, []string{`"records_json": not a JSON array`}},
		{"batch_store empty", "batch_store", map[string]any{"records_json": `[]`}, true, []string{"the array is empty"}},
		{"batch_store blank content", "batch_store", map[string]any{"records_json": `[{"content":"a"},{"content":" "}]`}, true, []string{`"records_json[1].content": must not be blank`}},
		{"batch_store item not object", "batch_store", map[string]any{"records_json": `["a"]`}, true, []string{`"records_json[0]": must be an object`}},
		{"batch_store unknown field", "batch_store", map[string]any{"records_json": `[{"conetnt":"a"}]`}, true, []string{`"records_json[0].conetnt": unknown argument`}},
		{"batch_store bad store", "batch_store", map[string]any{"records_json": `[{"content":"a","store":"x"}]`}, true, []string{`"records_json[0].store"`}},
		{"batch_store too many", "batch_store", map[string]any{"records_json": string(manyJSON)}, true, []string{"1001 records exceed the maximum of 1000"}},

		// batch_store_raw
		{"batch_store_raw", "batch_store_raw", map[string]any{"records_json": `[{"content":"q","session_id":"s3"},{"content":"a","session_id":"s3","speaker":"assistant"}]`}, false, []string{`"session_id": "s3"`}},
		{"batch_store_raw missing session", "batch_store_raw", map[string]any{"records_json": `[{"content":"q"}]`}, true, []string{`"records_json[0].session_id": required`}},

		// recall
		{"recall query", "recall", map[string]any{"query": "when does the deploy key rotate"}, false, []string{`"text": "the deploy key rotates on Fridays"`, `"created_at": "2026-05-01T09:30:00+00:00"`, `"query_metadata"`}},
		{"recall recent", "recall", map[string]any{"limit": "2", "reconsolidate": "false"}, false, []string{`"memories": [`, `"total_candidates"`}},
		{"recall stores", "recall", map[string]any{"query": "deploy", "stores": "semantic, procedural", "activation_depth": 0}, false, []string{`"stores_searched": [`}},
		{"recall limit zero", "recall", map[string]any{"limit": 0}, true, []string{`"limit": must be between 1 and 1000, got 0`}},
		{"recall limit fraction", "recall", map[string]any{"limit": 1.5}, true, []string{`"limit": must be a whole number`}},
		{"recall limit word", "recall", map[string]any{"limit": "ten"}, true, []string{`"limit": must be a whole number between 1 and 1000, got "ten"`}},
		{"recall bad stores", "recall", map[string]any{"stores": "semantic,facts"}, true, []string{`"stores": "facts" is not a store`}},
		{"recall bad boolean", "recall", map[string]any{"reconsolidate": "yes"}, true, []string{`"reconsolidate": must be true or false, got "yes"`}},
		{"recall depth too deep", "recall", map[string]any{"activation_depth": 9}, true, []string{`"activation_depth": must be between 0 and 8`}},

		// recall_raw
		{"recall_raw session", "recall_raw", map[string]any{"session_id": "s1"}, false, []string{`"text": "user: when do keys rotate?"`, `"speaker": "user"`, `"total_candidates": 1`}},
		{"recall_raw range", "recall_raw", map[string]any{"start": "2026-05-01T00:00:00Z", "end": "2026-05-02T00:00:00+02:00", "secrecy_levels": "public,secret", "include_sealed": true}, false, []string{`"records": [`}},
		{"recall_raw start without end", "recall_raw", map[string]any{"start": "2026-05-01T00:00:00Z"}, true, []string{`"end": required when start is given`}},
		{"recall_raw end without start", "recall_raw", map[string]any{"end": "2026-05-01T00:00:00Z"}, true, []string{`"start": required when end is given`}},
		{"recall_raw bad time", "recall_raw", map[string]any{"start": "yesterday", "end": "2026-05-01T00:00:00Z"}, true, []string{`"start": "yesterday" is not an RFC 3339 time`}},
		{"recall_raw reversed", "recall_raw", map[string]any{"start": "2026-05-02T00:00:00Z", "end": "2026-05-01T00:00:00Z"}, true, []string{`"start": 2026-05-02T00:00:00Z is after end`}},
		{"recall_raw bad secrecy", "recall_raw", map[string]any{"secrecy_levels": "public,top"}, true, []string{`"secrecy_levels": "top" is not a secrecy level`}},

		// timeline
		{"timeline default", "timeline", map[string]any{}, false, []string{`"buckets": [`, `"text": "the deploy key rotates on Fridays"`}},
		{"timeline range", "timeline", map[string]any{"start": "2026-04-01T00:00:00Z", "end": "2026-06-01T00:00:00Z", "granularity": "Day"}, false, []string{`"start": "2026-05-01T00:00:00Z"`}},
		{"timeline bad granularity", "timeline", map[string]any{"granularity": "year"}, true, []string{`"granularity": "year" is not accepted; use one of: minute, hour, day, week, month`}},
		{"timeline limit over the maximum", "timeline", map[string]any{"limit": 1001}, true, []string{`"limit": must be between 1 and 1000, got 1001`}},
		{"timeline reversed", "timeline", map[string]any{"start": "2026-06-01T00:00:00Z", "end": "2026-05-01T00:00:00Z"}, true, []string{`"start": 2026-06-01T00:00:00Z is after end`}},

		// associate
		{"associate", "associate", map[string]any{"record_id": id}, false, []string{`"memories": [`, `"total_candidates"`}},
		{"associate depth too deep", "associate", map[string]any{"record_id": id, "depth": 9}, true, []string{`"depth": must be between 1 and 8`}},
		{"associate limit too big", "associate", map[string]any{"record_id": id, "limit": 257}, true, []string{`"limit": must be between 1 and 256`}},
		{"associate unknown id", "associate", map[string]any{"record_id": missing}, true, []string{"Not found:"}},

		// inspect
		{"inspect", "inspect", map[string]any{"record_id": id}, false, []string{`"id": "` + id + `"`, `"text": "the deploy key rotates on Fridays"`, `"fidelity": {`, `"meta": {`}},
		{"inspect missing id", "inspect", map[string]any{}, true, []string{`"record_id": required: a record id`}},
		{"inspect unknown id", "inspect", map[string]any{"record_id": missing}, true, []string{"Not found: record not found: " + missing}},

		// forget (confirmation first)
		{"forget without confirm", "forget", map[string]any{"record_ids": id}, true, []string{`"confirm": required`}},
		{"forget confirm false", "forget", map[string]any{"record_ids": id, "confirm": false}, true, []string{`"confirm": is false, so nothing was deleted`}},
		{"forget bad id", "forget", map[string]any{"record_ids": id + ",nope", "confirm": true}, true, []string{`"record_ids": "nope" is not a record id`}},
		{"forget no ids", "forget", map[string]any{"record_ids": " , ", "confirm": true}, true, []string{`"record_ids": required`}},

		// consolidate, dream_tick, stats
		{"consolidate", "consolidate", map[string]any{"strategy": "full", "dry_run": true}, false, []string{`"records_processed"`}},
		{"consolidate default", "consolidate", nil, false, []string{`"semantic_nodes_created"`}},
		{"consolidate bad strategy", "consolidate", map[string]any{"strategy": "aggressive"}, true, []string{`"strategy": "aggressive" is not accepted; use one of: incremental, full, selective`}},
		{"dream_tick", "dream_tick", map[string]any{"session_id": "s1", "max_groups": 5, "promote_semantic": false}, false, []string{`"raw_records_processed"`}},
		{"dream_tick zero groups", "dream_tick", map[string]any{"max_groups": 0}, true, []string{`"max_groups": must be between 1 and 1000`}},
		{"stats", "stats", map[string]any{}, false, []string{`"total_records"`, `"raw_journal_records"`}},
		{"stats extra argument", "stats", map[string]any{"verbose": true}, true, []string{`"verbose": unknown argument; this tool accepts: none`}},

		// forget last: it deletes id.
		{"forget", "forget", map[string]any{"record_ids": []any{id}, "confirm": "true"}, false, []string{`"records_deleted": 1`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text, isErr := callTool(t, p, tc.tool, tc.args)
			if isErr != tc.wantErr {
				t.Fatalf("isError = %v, want %v:\n%s", isErr, tc.wantErr, text)
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("result lacks %q:\n%s", w, text)
				}
			}
			if !tc.wantErr && strings.Contains(text, `"data": [`) {
				t.Errorf("result shows content as a byte array:\n%s", text)
			}
		})
	}
}

// TestToolCatalogue checks tools/list: fifteen tools in order, each with
// a description, typed and described arguments, enums and defaults where
// the argument has them, and no undeclared arguments allowed.
func TestToolCatalogue(t *testing.T) {
	p := New(newEngine(t), Options{})
	b, err := json.Marshal(p.server.HandleMessage(t.Context(), []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)))
	if err != nil {
		t.Fatal(err)
	}
	var ans struct {
		Result struct {
			Tools []struct {
				Name        string `json:"name"`
				Description string `json:"description"`
				InputSchema struct {
					Type                 string                    `json:"type"`
					Properties           map[string]map[string]any `json:"properties"`
					Required             []string                  `json:"required"`
					AdditionalProperties *bool                     `json:"additionalProperties"`
				} `json:"inputSchema"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &ans); err != nil {
		t.Fatal(err)
	}
	want := []string{"associate", "batch_store", "batch_store_raw", "consolidate", "dream_tick", "export", "forget",
		"inspect", "recall", "recall_raw", "stats", "store", "store_raw", "timeline", "update"}
	var got []string
	for _, tl := range ans.Result.Tools {
		got = append(got, tl.Name)
	}
	if !slices.Equal(got, want) || ans.Result.NextCursor != "" {
		t.Fatalf("tools %v (next %q), want %v", got, ans.Result.NextCursor, want)
	}

	// What each argument must declare: type, and enum/default where given.
	type argSpec struct {
		typ      string
		required bool
		enum     []string
		def      any
	}
	specs := map[string]map[string]argSpec{
		"store":           {"content": {typ: "string", required: true}, "store": {typ: "string", enum: storeNames}, "emotion": {typ: "string", enum: emotionNames}, "meta_json": {typ: "string"}},
		"store_raw":       {"content": {typ: "string", required: true}, "session_id": {typ: "string", required: true}, "turn_id": {typ: "string"}, "topic_id": {typ: "string"}, "source": {typ: "string", enum: sourceNames, def: "conversation"}, "speaker": {typ: "string", enum: speakerNames, def: "user"}, "visibility": {typ: "string", enum: visibilityNames, def: "normal"}, "secrecy_level": {typ: "string", enum: secrecyNames, def: "public"}, "meta_json": {typ: "string"}},
		"update":          {"record_id": {typ: "string", required: true}, "content": {typ: "string"}, "emotion": {typ: "string", enum: emotionNames}, "meta_json": {typ: "string"}},
		"batch_store":     {"records_json": {typ: "string", required: true}},
		"batch_store_raw": {"records_json": {typ: "string", required: true}},
		"recall":          {"query": {typ: "string"}, "limit": {typ: "integer", def: 10.0}, "stores": {typ: "string"}, "reconsolidate": {typ: "boolean", def: true}, "activation_depth": {typ: "integer", def: 2.0}},
		"recall_raw":      {"session_id": {typ: "string"}, "query": {typ: "string"}, "start": {typ: "string"}, "end": {typ: "string"}, "limit": {typ: "integer", def: 10.0}, "include_private_scratch": {typ: "boolean", def: false}, "include_sealed": {typ: "boolean", def: false}, "secrecy_levels": {typ: "string"}},
		"timeline":        {"start": {typ: "string"}, "end": {typ: "string"}, "granularity": {typ: "string", enum: granularityNames, def: "hour"}, "limit": {typ: "integer", def: 100.0}},
		"associate":       {"record_id": {typ: "string", required: true}, "depth": {typ: "integer", def: 2.0}, "limit": {typ: "integer", def: 10.0}},
		"inspect":         {"record_id": {typ: "string", required: true}},
		"forget":          {"record_ids": {typ: "string", required: true}, "cascade": {typ: "boolean", def: false}, "confirm": {typ: "boolean", required: true}},
		"consolidate":     {"strategy": {typ: "string", enum: strategyNames, def: "incremental"}, "dry_run": {typ: "boolean", def: false}},
		"dream_tick":      {"session_id": {typ: "string"}, "dry_run": {typ: "boolean", def: false}, "max_groups": {typ: "integer", def: 10.0}, "promote_semantic": {typ: "boolean", def: true}, "include_private_scratch": {typ: "boolean", def: false}, "include_sealed": {typ: "boolean", def: false}, "secrecy_levels": {typ: "string"}},
		"stats":           {},
		"export":          {"output_path": {typ: "string", required: true}, "format": {typ: "string", enum: formatNames, def: "cma"}, "encrypt": {typ: "boolean", def: false}, "encryption_key": {typ: "string"}, "include_sealed": {typ: "boolean", def: false}, "include_secret": {typ: "boolean", def: false}},
	}
	for _, tl := range ans.Result.Tools {
		s := tl.InputSchema
		if len(tl.Description) < 60 || s.Type != "object" || s.AdditionalProperties == nil || *s.AdditionalProperties {
			t.Errorf("%s: description %q, type %q, additionalProperties %v", tl.Name, tl.Description, s.Type, s.AdditionalProperties)
		}
		spec := specs[tl.Name]
		if len(s.Properties) != len(spec) {
			t.Errorf("%s: %d arguments, want %d", tl.Name, len(s.Properties), len(spec))
		}
		var required []string
		for name, as := range spec {
			prop, ok := s.Properties[name]
			if !ok {
				t.Errorf("%s: no argument %s", tl.Name, name)
				continue
			}
			if prop["type"] != as.typ {
				t.Errorf("%s.%s: type %v, want %s", tl.Name, name, prop["type"], as.typ)
			}
			if d, _ := prop["description"].(string); len(d) < 10 {
				t.Errorf("%s.%s: description %q", tl.Name, name, d)
			}
			if as.enum != nil {
				var enum []string
				for _, e := range prop["enum"].([]any) {
					enum = append(enum, e.(string))
				}
				if !slices.Equal(enum, as.enum) {
					t.Errorf("%s.%s: enum %v, want %v", tl.Name, name, enum, as.enum)
				}
			}
			if prop["default"] != as.def {
				t.Errorf("%s.%s: default %v, want %v", tl.Name, name, prop["default"], as.def)
			}
			if as.typ == "integer" && (prop["minimum"] == nil || prop["maximum"] == nil) {
				t.Errorf("%s.%s: integer without minimum and maximum", tl.Name, name)
			}
			if as.required {
				required = append(required, name)
			}
		}
		slices.Sort(required)
		got := slices.Sorted(slices.Values(s.Required))
		if !slices.Equal(got, required) {
			t.Errorf("%s: required %v, want %v", tl.Name, got, required)
		}
	}

	// An unknown tool is a protocol error, the one failure that is not a
	// tool result.
	b, _ = json.Marshal(p.server.HandleMessage(t.Context(), []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"remember","arguments":{}}}`)))
	if !strings.Contains(string(b), `"code":-32602`) {
		t.Errorf("unknown tool: %s", b)
	}
}

// TestRecallFlattened pins the flattened recall and recall_raw shapes.
func TestRecallFlattened(t *testing.T) {
	p := newProxy(t, newHTTP(t, httpapi.Options{}), client.Options{}, Options{})
	id := storeMemory(t, p, map[string]any{"content": "pebble is our storage engine", "emotion": "trust"})
	text, isErr := callTool(t, p, "recall", map[string]any{"query": "storage engine"})
	if isErr {
		t.Fatal(text)
	}
	var got struct {
		Memories        []map[string]any `json:"memories"`
		QueryMetadata   map[string]any   `json:"query_metadata"`
		TotalCandidates *float64         `json:"total_candidates"`
	}
	mustJSON(t, text, &got)
	if len(got.Memories) != 1 || got.TotalCandidates == nil || got.QueryMetadata == nil {
		t.Fatalf("recall: %s", text)
	}
	m := got.Memories[0]
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	})
	if want := []string{"created_at", "emotion", "fidelity", "record_id", "relevance_score", "store", "text"}; !slices.Equal(keys, want) {
		t.Errorf("memory fields %v, want %v", keys, want)
	}
	if m["record_id"] != id || m["emotion"] != "trust" || m["store"] != "episodic" || m["text"] != "pebble is our storage engine" || m["created_at"] != "2026-05-01T09:30:00+00:00" {
		t.Errorf("memory %v", m)
	}
	// No emotion: null.
	storeMemory(t, p, map[string]any{"content": "the cache bucket is ci-cache-eu"})
	text, _ = callTool(t, p, "recall", map[string]any{"query": "cache bucket"})
	if !strings.Contains(text, `"emotion": null`) {
		t.Errorf("recall without emotion: %s", text)
	}
}
