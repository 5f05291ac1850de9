package mcpproxy

import (
	"encoding/json"
	"fmt"
	"reflect"
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
		{"store minimal", "store", map[string]any{"content": "hello"}, false, []string{`"store":"episodic"`, `"initial_fidelity":1`}},
		{"store all arguments", "store", map[string]any{"content": "we chose pebble", "store": " Semantic ", "emotion": "JOY", "meta_json": `{"intent":"choose an engine","tags":["adr"]}`}, false, []string{`"store":"semantic"`}},
		{"store meta as object", "store", map[string]any{"content": "x", "meta_json": map[string]any{"rationale": "because"}}, false, []string{`"record_id"`}},
		{"store emotion alias", "store", map[string]any{"content": "x", "emotion": "happy"}, false, []string{`"record_id"`}},
		{"store null optional", "store", map[string]any{"content": "x", "store": nil, "meta_json": ""}, false, []string{`"store":"episodic"`}},
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
		{"store_raw defaults", "store_raw", map[string]any{"content": "tool output", "session_id": " s2 "}, false, []string{`"session_id":"s2"`, `"visibility":"normal"`, `"secrecy_level":"public"`}},
		{"store_raw all arguments", "store_raw", map[string]any{"content": "x", "session_id": "s2", "turn_id": "t1", "topic_id": "k", "source": "tool_io", "speaker": "tool", "visibility": "sealed", "secrecy_level": "secret", "meta_json": `{"intent":"log"}`}, false, []string{`"visibility":"sealed"`, `"secrecy_level":"secret"`}},
		{"store_raw missing session", "store_raw", map[string]any{"content": "x"}, true, []string{`"session_id": required`}},
		{"store_raw blank session", "store_raw", map[string]any{"content": "x", "session_id": "  "}, true, []string{`"session_id": must not be blank`}},
		{"store_raw bad source", "store_raw", map[string]any{"content": "x", "session_id": "s", "source": "web"}, true, []string{`"source": "web" is not accepted; use one of: conversation, tool_io`}},
		{"store_raw bad visibility", "store_raw", map[string]any{"content": "x", "session_id": "s", "visibility": "hidden"}, true, []string{`"visibility"`, "private_scratch"}},

		// update
		{"update content", "update", map[string]any{"record_id": id2, "content": "deploys need three approvals"}, false, []string{`{"record_id":"` + id2 + `","updated":["content"]}`}},
		{"update emotion and meta as a string", "update", map[string]any{"record_id": strings.ToUpper(id2), "emotion": "trust", "meta_json": `{"rationale":"policy"}`}, false, []string{`"updated":["emotion","meta_json"]`}},
		{"update meta as an object", "update", map[string]any{"record_id": id2, "meta_json": map[string]any{"rationale": "policy", "tags": []any{"ops"}}}, false, []string{`"updated":["meta_json"]`}},
		{"update meta not an object", "update", map[string]any{"record_id": id2, "meta_json": 3}, true, []string{`"meta_json": must be a JSON object or array, got a number`}},
		{"update nothing", "update", map[string]any{"record_id": id2}, true, []string{"nothing to update: give at least one of content, emotion, meta_json"}},
		{"update blank content", "update", map[string]any{"record_id": id2, "content": ""}, true, []string{`"content": must not be blank`}},
		{"update bad id", "update", map[string]any{"record_id": "42", "content": "x"}, true, []string{`"record_id": "42" is not a record id; want a UUID`}},
		{"update unknown id", "update", map[string]any{"record_id": missing, "content": "x"}, true, []string{"Not found: record not found: " + missing, "recall, recall_raw and timeline"}},

		// batch_store
		{"batch_store", "batch_store", map[string]any{"records": []any{map[string]any{"content": "a"}, map[string]any{"content": "b", "store": "procedural", "emotion": "fear", "meta_json": map[string]any{"intent": "x"}}}}, false, []string{`"associations_inferred":2`, `"store":"procedural"`}},
		{"batch_store records_json as a string", "batch_store", map[string]any{"records_json": `[{"content":"a"},{"content":"b","store":"procedural","emotion":"fear","meta_json":"{\"intent\":\"x\"}"}]`}, false, []string{`"associations_inferred":2`, `"store":"procedural"`}},
		{"batch_store records_json as an array", "batch_store", map[string]any{"records_json": []any{map[string]any{"content": "c"}}}, false, []string{`"results":[{`}},
		{"batch_store records as a string", "batch_store", map[string]any{"records": `[{"content":"d"}]`}, false, []string{`"results":[{`}},
		{"batch_store both names", "batch_store", map[string]any{"records": []any{map[string]any{"content": "c"}}, "records_json": `[{"content":"c"}]`}, true, []string{`"records_json": given together with records`}},
		{"batch_store missing records", "batch_store", map[string]any{}, true, []string{`"records": required: an array of record objects`}},
		{"batch_store records not an array", "batch_store", map[string]any{"records": map[string]any{"content": "a"}}, true, []string{`"records": not a JSON array of objects`}},
		{"batch_store not JSON", "batch_store", map[string]any{"records_json": "a, b"}, true, []string{`"records_json": not a JSON array of objects`}},
		{"batch_store object", "batch_store", map[string]any{"records_json": `{"content":"a"}`}, true, []string{`"records_json": not a JSON array`}},
		{"batch_store empty", "batch_store", map[string]any{"records_json": `[]`}, true, []string{"the array is empty"}},
		{"batch_store blank content", "batch_store", map[string]any{"records_json": `[{"content":"a"},{"content":" "}]`}, true, []string{`"records_json[1].content": must not be blank`}},
		{"batch_store item not object", "batch_store", map[string]any{"records_json": `["a"]`}, true, []string{`"records_json[0]": must be an object`}},
		{"batch_store unknown field", "batch_store", map[string]any{"records_json": `[{"conetnt":"a"}]`}, true, []string{`"records_json[0].conetnt": unknown argument`}},
		{"batch_store bad store", "batch_store", map[string]any{"records_json": `[{"content":"a","store":"x"}]`}, true, []string{`"records_json[0].store"`}},
		{"batch_store too many", "batch_store", map[string]any{"records_json": string(manyJSON)}, true, []string{"1001 records exceed the maximum of 1000"}},

		// batch_store_raw
		{"batch_store_raw", "batch_store_raw", map[string]any{"records": []any{map[string]any{"content": "q", "session_id": "s3"}, map[string]any{"content": "a", "session_id": "s3", "speaker": "assistant", "meta_json": map[string]any{"intent": "answer"}}}}, false, []string{`"session_id":"s3"`}},
		{"batch_store_raw records_json", "batch_store_raw", map[string]any{"records_json": `[{"content":"q","session_id":"s3"},{"content":"a","session_id":"s3","speaker":"assistant"}]`}, false, []string{`"session_id":"s3"`}},
		{"batch_store_raw item without session", "batch_store_raw", map[string]any{"records": []any{map[string]any{"content": "q"}}}, true, []string{`"records[0].session_id": required`}},
		{"batch_store_raw missing session", "batch_store_raw", map[string]any{"records_json": `[{"content":"q"}]`}, true, []string{`"records_json[0].session_id": required`}},

		// recall
		{"recall query", "recall", map[string]any{"query": "when does the deploy key rotate"}, false, []string{`"text":"the deploy key rotates on Fridays"`, `"created_at":"2026-05-01T09:30:00+00:00"`, `"query_metadata"`}},
		{"recall recent", "recall", map[string]any{"limit": "2", "reconsolidate": "false"}, false, []string{`"memories":[`, `"total_candidates"`}},
		{"recall stores", "recall", map[string]any{"query": "deploy", "stores": []any{"semantic", "Procedural"}, "activation_depth": 0}, false, []string{`"stores_searched":["semantic","procedural"]`}},
		{"recall stores as a comma list", "recall", map[string]any{"query": "deploy", "stores": "semantic, procedural", "activation_depth": 0}, false, []string{`"stores_searched":["semantic","procedural"]`}},
		{"recall stores empty", "recall", map[string]any{"query": "deploy", "stores": []any{}}, false, []string{`"stores_searched":["episodic","semantic","procedural","emotional","working"]`}},
		{"recall stores not strings", "recall", map[string]any{"stores": []any{"semantic", 3}}, true, []string{`"stores": item 1 must be a string, got a number`}},
		{"recall stores an object", "recall", map[string]any{"stores": map[string]any{"semantic": true}}, true, []string{`"stores": must be an array of strings, got an object`}},
		{"recall limit zero", "recall", map[string]any{"limit": 0}, true, []string{`"limit": must be between 1 and 1000, got 0`}},
		{"recall limit fraction", "recall", map[string]any{"limit": 1.5}, true, []string{`"limit": must be a whole number`}},
		{"recall limit word", "recall", map[string]any{"limit": "ten"}, true, []string{`"limit": must be a whole number between 1 and 1000, got "ten"`}},
		{"recall bad stores", "recall", map[string]any{"stores": "semantic,facts"}, true, []string{`"stores": "facts" is not accepted; give a list of: episodic, semantic, procedural, emotional, working`}},
		{"recall bad stores array", "recall", map[string]any{"stores": []any{"facts"}}, true, []string{`"stores": "facts" is not accepted`}},
		{"recall bad boolean", "recall", map[string]any{"reconsolidate": "yes"}, true, []string{`"reconsolidate": must be true or false, got "yes"`}},
		{"recall depth too deep", "recall", map[string]any{"activation_depth": 9}, true, []string{`"activation_depth": must be between 0 and 8`}},

		// recall_raw
		{"recall_raw session", "recall_raw", map[string]any{"session_id": "s1"}, false, []string{`"text":"user: when do keys rotate?"`, `"speaker":"user"`, `"total_candidates":1`}},
		{"recall_raw range", "recall_raw", map[string]any{"start": "2026-05-01T00:00:00Z", "end": "2026-05-02T00:00:00+02:00", "secrecy_levels": []any{"public", "secret"}, "include_sealed": true}, false, []string{`"records":[{`}},
		{"recall_raw secrecy as a comma list", "recall_raw", map[string]any{"session_id": "s1", "secrecy_levels": "public,secret"}, false, []string{`"records":[{`}},
		{"recall_raw secrecy excluding the entry", "recall_raw", map[string]any{"session_id": "s1", "secrecy_levels": []any{"secret"}}, false, []string{`{"records":[],"total_candidates":0}`}},
		{"recall_raw start without end", "recall_raw", map[string]any{"start": "2026-05-01T00:00:00Z"}, true, []string{`"end": required when start is given`}},
		{"recall_raw end without start", "recall_raw", map[string]any{"end": "2026-05-01T00:00:00Z"}, true, []string{`"start": required when end is given`}},
		{"recall_raw bad time", "recall_raw", map[string]any{"start": "yesterday", "end": "2026-05-01T00:00:00Z"}, true, []string{`"start": "yesterday" is not an RFC 3339 time`}},
		{"recall_raw reversed", "recall_raw", map[string]any{"start": "2026-05-02T00:00:00Z", "end": "2026-05-01T00:00:00Z"}, true, []string{`"start": 2026-05-02T00:00:00Z is after end`}},
		{"recall_raw bad secrecy", "recall_raw", map[string]any{"secrecy_levels": "public,top"}, true, []string{`"secrecy_levels": "top" is not accepted; give a list of: public, sensitive, secret`}},

		// timeline
		{"timeline default", "timeline", map[string]any{}, false, []string{`"buckets":[`, `"text":"the deploy key rotates on Fridays"`}},
		{"timeline range", "timeline", map[string]any{"start": "2026-04-01T00:00:00Z", "end": "2026-06-01T00:00:00Z", "granularity": "Day"}, false, []string{`"start":"2026-05-01T00:00:00Z"`}},
		{"timeline bad granularity", "timeline", map[string]any{"granularity": "year"}, true, []string{`"granularity": "year" is not accepted; use one of: minute, hour, day, week, month`}},
		{"timeline limit over the maximum", "timeline", map[string]any{"limit": 1001}, true, []string{`"limit": must be between 1 and 1000, got 1001`}},
		{"timeline reversed", "timeline", map[string]any{"start": "2026-06-01T00:00:00Z", "end": "2026-05-01T00:00:00Z"}, true, []string{`"start": 2026-06-01T00:00:00Z is after end`}},

		// associate
		{"associate", "associate", map[string]any{"record_id": id}, false, []string{`"memories":[`, `"total_candidates"`}},
		{"associate depth too deep", "associate", map[string]any{"record_id": id, "depth": 9}, true, []string{`"depth": must be between 1 and 8`}},
		{"associate limit too big", "associate", map[string]any{"record_id": id, "limit": 257}, true, []string{`"limit": must be between 1 and 256`}},
		{"associate unknown id", "associate", map[string]any{"record_id": missing}, true, []string{"Not found:"}},

		// inspect
		{"inspect", "inspect", map[string]any{"record_id": id}, false, []string{`"id":"` + id + `"`, `"text":"the deploy key rotates on Fridays"`, `"fidelity":{`, `"meta":{`}},
		{"inspect missing id", "inspect", map[string]any{}, true, []string{`"record_id": required: a record id`}},
		{"inspect unknown id", "inspect", map[string]any{"record_id": missing}, true, []string{"Not found: record not found: " + missing}},

		// forget (confirmation first)
		{"forget without confirm", "forget", map[string]any{"record_ids": id}, true, []string{`"confirm": required`}},
		{"forget confirm false", "forget", map[string]any{"record_ids": id, "confirm": false}, true, []string{`"confirm": is false, so nothing was deleted`}},
		{"forget bad id", "forget", map[string]any{"record_ids": id + ",nope", "confirm": true}, true, []string{`"record_ids": "nope" is not a record id`}},
		{"forget no ids", "forget", map[string]any{"record_ids": " , ", "confirm": true}, true, []string{`"record_ids": required`}},
		{"forget empty array", "forget", map[string]any{"record_ids": []any{}, "confirm": true}, true, []string{`"record_ids": required`}},
		{"forget bad id in an array", "forget", map[string]any{"record_ids": []any{id, "nope"}, "confirm": true}, true, []string{`"record_ids": "nope" is not a record id`}},
		{"forget unknown ids as a comma list", "forget", map[string]any{"record_ids": missing + ", " + missing, "confirm": true}, false, []string{`{"records_deleted":0}`}},

		// consolidate, dream_tick, stats
		{"consolidate", "consolidate", map[string]any{"strategy": "full", "dry_run": true}, false, []string{`"records_processed"`}},
		{"consolidate default", "consolidate", nil, false, []string{`"semantic_nodes_created"`}},
		{"consolidate bad strategy", "consolidate", map[string]any{"strategy": "aggressive"}, true, []string{`"strategy": "aggressive" is not accepted; use one of: full, incremental, selective`}},
		{"dream_tick", "dream_tick", map[string]any{"session_id": "s1", "max_groups": 5, "promote_semantic": false}, false, []string{`"raw_records_processed"`}},
		{"dream_tick zero groups", "dream_tick", map[string]any{"max_groups": 0}, true, []string{`"max_groups": must be between 1 and 1000`}},
		{"stats", "stats", map[string]any{}, false, []string{`"total_records"`, `"raw_journal_records"`}},
		{"stats extra argument", "stats", map[string]any{"verbose": true}, true, []string{`"verbose": unknown argument; this tool accepts: none`}},

		// forget last: it deletes id.
		{"forget", "forget", map[string]any{"record_ids": []any{id}, "confirm": "true"}, false, []string{`"records_deleted":1`}},
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
// the argument has them, no undeclared arguments allowed, and an
// outputSchema that is an object schema. The expected types and defaults
// are the contract, written out here; the enum values are checked against
// the wire contract in TestSchemaEnumsMatchWire.
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
				OutputSchema struct {
					Type                 string         `json:"type"`
					Properties           map[string]any `json:"properties"`
					Required             []string       `json:"required"`
					AdditionalProperties *bool          `json:"additionalProperties"`
				} `json:"outputSchema"`
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

	// What each argument must declare: type, enum (items' enum for
	// arrays) when it takes names, and its default.
	type argSpec struct {
		typ      string
		required bool
		enum     bool
		def      any
	}
	var (
		str    = argSpec{typ: "string"}
		reqStr = argSpec{typ: "string", required: true}
		names  = argSpec{typ: "string", enum: true}
		list   = argSpec{typ: "array", enum: true}
		object = argSpec{typ: "object"}
	)
	specs := map[string]map[string]argSpec{
		"store":           {"content": reqStr, "store": names, "emotion": names, "meta_json": object},
		"store_raw":       {"content": reqStr, "session_id": reqStr, "turn_id": str, "topic_id": str, "source": {typ: "string", enum: true, def: "conversation"}, "speaker": {typ: "string", enum: true, def: "user"}, "visibility": {typ: "string", enum: true, def: "normal"}, "secrecy_level": {typ: "string", enum: true, def: "public"}, "meta_json": object},
		"update":          {"record_id": reqStr, "content": str, "emotion": names, "meta_json": object},
		"batch_store":     {"records": {typ: "array", required: true}},
		"batch_store_raw": {"records": {typ: "array", required: true}},
		"recall":          {"query": str, "limit": {typ: "integer", def: 10.0}, "stores": list, "reconsolidate": {typ: "boolean", def: true}, "activation_depth": {typ: "integer", def: 2.0}},
		"recall_raw":      {"session_id": str, "query": str, "start": str, "end": str, "limit": {typ: "integer", def: 10.0}, "include_private_scratch": {typ: "boolean", def: false}, "include_sealed": {typ: "boolean", def: false}, "secrecy_levels": list},
		"timeline":        {"start": str, "end": str, "granularity": {typ: "string", enum: true, def: "hour"}, "limit": {typ: "integer", def: 100.0}},
		"associate":       {"record_id": reqStr, "depth": {typ: "integer", def: 2.0}, "limit": {typ: "integer", def: 10.0}},
		"inspect":         {"record_id": reqStr},
		"forget":          {"record_ids": {typ: "array", required: true}, "cascade": {typ: "boolean", def: false}, "confirm": {typ: "boolean", required: true}},
		"consolidate":     {"strategy": {typ: "string", enum: true, def: "incremental"}, "dry_run": {typ: "boolean", def: false}},
		"dream_tick":      {"session_id": str, "dry_run": {typ: "boolean", def: false}, "max_groups": {typ: "integer", def: 10.0}, "promote_semantic": {typ: "boolean", def: true}, "include_private_scratch": {typ: "boolean", def: false}, "include_sealed": {typ: "boolean", def: false}, "secrecy_levels": list},
		"stats":           {},
		"export":          {"output_path": reqStr, "format": {typ: "string", enum: true, def: "cma"}, "encrypt": {typ: "boolean", def: false}, "encryption_key": str, "include_sealed": {typ: "boolean", def: false}, "include_secret": {typ: "boolean", def: false}},
	}
	for _, tl := range ans.Result.Tools {
		s := tl.InputSchema
		if len(tl.Description) < 60 || s.Type != "object" || s.AdditionalProperties == nil || *s.AdditionalProperties {
			t.Errorf("%s: description %q, type %q, additionalProperties %v", tl.Name, tl.Description, s.Type, s.AdditionalProperties)
		}
		o := tl.OutputSchema
		if o.Type != "object" || len(o.Properties) == 0 || len(o.Required) == 0 || o.AdditionalProperties == nil || *o.AdditionalProperties {
			t.Errorf("%s: outputSchema %+v", tl.Name, o)
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
			enumOf := prop
			if items, ok := prop["items"].(map[string]any); ok {
				enumOf = items
			}
			if values, _ := enumOf["enum"].([]any); (len(values) > 0) != as.enum {
				t.Errorf("%s.%s: enum %v, want one: %v", tl.Name, name, enumOf["enum"], as.enum)
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

	// The batch tools take records with the arguments of their single
	// tools.
	tools := map[string]map[string]any{}
	for _, tl := range toolList(t, p) {
		tools[tl["name"].(string)] = tl
	}
	for batch, single := range map[string]string{"batch_store": "store", "batch_store_raw": "store_raw"} {
		items := tools[batch]["inputSchema"].(map[string]any)["properties"].(map[string]any)["records"].(map[string]any)["items"]
		in := tools[single]["inputSchema"].(map[string]any)
		want := map[string]any{"type": "object", "properties": in["properties"], "required": in["required"], "additionalProperties": false}
		if !reflect.DeepEqual(items, want) {
			t.Errorf("%s: records items %v, want %s's arguments %v", batch, items, single, want)
		}
	}
	// meta_json lists the fields of a meta-memory and no others.
	meta := tools["store"]["inputSchema"].(map[string]any)["properties"].(map[string]any)["meta_json"].(map[string]any)
	props, _ := meta["properties"].(map[string]any)
	for _, f := range []string{"intent", "rationale", "decision", "trigger", "goals", "assumptions", "tags", "alternatives", "evidence", "confidence"} {
		if props[f] == nil {
			t.Errorf("meta_json: no property %s in %v", f, meta)
		}
	}
	if meta["additionalProperties"] != false {
		t.Errorf("meta_json: additionalProperties %v", meta["additionalProperties"])
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
	if !strings.Contains(text, `"emotion":null`) {
		t.Errorf("recall without emotion: %s", text)
	}
}
