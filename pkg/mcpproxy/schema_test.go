package mcpproxy

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"memsvc.dev/memsvc/internal/testkit"
)

// toolList is the tools/list answer of p, as a client decodes it.
func toolList(t testing.TB, p *Proxy) []map[string]any {
	t.Helper()
	b, err := json.Marshal(p.server.HandleMessage(t.Context(), []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)))
	if err != nil {
		t.Fatal(err)
	}
	var ans struct {
		Result struct {
			Tools []map[string]any `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &ans); err != nil {
		t.Fatal(err)
	}
	return ans.Result.Tools
}

// toolSchemas holds one tool's outputSchema compiled for both JSON Schema
// dialects a client may read it as: draft-07 (the TypeScript SDK's
// validator) and 2020-12 (MCP's default).
type toolSchemas []*jsonschema.Schema

// outputSchema compiles the outputSchema p lists for tool, with format
// assertions on (uuid, date-time).
func outputSchema(t testing.TB, p *Proxy, tool string) toolSchemas {
	t.Helper()
	for _, tl := range toolList(t, p) {
		if tl["name"] != tool {
			continue
		}
		raw, ok := tl["outputSchema"]
		if !ok {
			t.Fatalf("%s: no outputSchema", tool)
		}
		return testkit.CompileOutputSchema(t, tool, raw)
	}
	t.Fatalf("no tool %s", tool)
	return nil
}

// checkAnswer validates one structuredContent against its tool's schemas.
func checkAnswer(t testing.TB, schemas toolSchemas, name string, answer []byte) {
	t.Helper()
	if len(schemas) == 0 {
		t.Fatalf("%s: no outputSchema", name)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(answer))
	if err != nil {
		t.Fatalf("%s: structuredContent %s: %v", name, answer, err)
	}
	for _, s := range schemas {
		if err := s.Validate(doc); err != nil {
			t.Fatalf("%s: structuredContent does not match the outputSchema: %v\n%s", name, err, answer)
		}
	}
}
