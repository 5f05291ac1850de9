package e2e

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"memsvc.dev/memsvc/internal/testkit"
)

// outputSchemas compiles the outputSchema of every tool of a tools/list
// answer, for both JSON Schema dialects an MCP client may read it as
// (draft-07, as the TypeScript SDK's validator does, and 2020-12, MCP's
// default), with format assertions on. Every tool must have one.
func outputSchemas(t testing.TB, tools []map[string]any) map[string][]*jsonschema.Schema {
	t.Helper()
	out := map[string][]*jsonschema.Schema{}
	for _, tl := range tools {
		name, _ := tl["name"].(string)
		schema, ok := tl["outputSchema"]
		if !ok {
			t.Fatalf("tool %s has no outputSchema", name)
		}
		out[name] = testkit.CompileOutputSchema(t, name, schema)
	}
	return out
}

// checkStructured requires structured, a tool's structuredContent, to be a
// JSON object that validates against the tool's outputSchema, and text,
// the result's text block, to be the same JSON value, compact (a client
// library may have reordered the keys of structured).
func checkStructured(t testing.TB, schemas map[string][]*jsonschema.Schema, tool string, structured []byte, text string) {
	t.Helper()
	if len(structured) == 0 || structured[0] != '{' {
		t.Fatalf("%s: structuredContent is not a JSON object: %q", tool, structured)
	}
	var compact bytes.Buffer
	var fromText, fromStructured any
	err := json.Compact(&compact, []byte(text))
	if err == nil {
		err = json.Unmarshal([]byte(text), &fromText)
	}
	if err == nil {
		err = json.Unmarshal(structured, &fromStructured)
	}
	if err != nil || compact.String() != text || !reflect.DeepEqual(fromText, fromStructured) {
		t.Fatalf("%s: the text is not the structuredContent as compact JSON (%v):\ntext:       %s\nstructured: %s", tool, err, text, structured)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(structured))
	if err != nil {
		t.Fatal(err)
	}
	if len(schemas[tool]) == 0 {
		t.Fatalf("%s: no outputSchema", tool)
	}
	for _, s := range schemas[tool] {
		if err := s.Validate(doc); err != nil {
			t.Fatalf("%s: structuredContent does not match the outputSchema: %v\n%s", tool, err, structured)
		}
	}
}
