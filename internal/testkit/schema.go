package testkit

import (
	"fmt"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// CompileOutputSchema compiles the outputSchema of the MCP tool name for
// both JSON Schema dialects a client may read it as, draft-07 (the
// TypeScript SDK's validator) and 2020-12 (MCP's default), with format
// assertions on (uuid, date-time). A schema that does not compile ends the
// test.
func CompileOutputSchema(t testing.TB, name string, schema any) []*jsonschema.Schema {
	t.Helper()
	var out []*jsonschema.Schema
	for _, draft := range []*jsonschema.Draft{jsonschema.Draft7, jsonschema.Draft2020} {
		c := jsonschema.NewCompiler()
		c.DefaultDraft(draft)
		c.AssertFormat()
		url := fmt.Sprintf("mem:///%s/%v.json", name, draft)
		if err := c.AddResource(url, schema); err != nil {
			t.Fatalf("%s: outputSchema: %v", name, err)
		}
		s, err := c.Compile(url)
		if err != nil {
			t.Fatalf("%s: outputSchema does not compile as %v: %v", name, draft, err)
		}
		out = append(out, s)
	}
	return out
}
