package mcpproxy

import (
	"encoding/json"
	"testing"
)

// FuzzToolArguments sends arbitrary arguments to every tool but export
// (which writes files) and requires a tool result every time: never a
// panic, never a JSON-RPC error.
func FuzzToolArguments(f *testing.F) {
	p := New(newEngine(f), Options{})
	var names []string
	for _, t := range p.tools() {
		if t.def.Name != "export" {
			names = append(names, t.def.Name)
		}
	}
	seeds := []struct {
		tool uint8
		args string
	}{
		{0, `{"record_id":"0190b6a4-7c1e-7a55-9f1a-5f2b3c4d5e6f","depth":3}`},
		{1, `{"records_json":"[{\"content\":\"a\",\"meta_json\":{\"tags\":[\"x\"]}}]"}`},
		{2, `{"records_json":[{"content":"a","session_id":"s"}]}`},
		{7, `{"query":"x","limit":"5","stores":["semantic"]}`},
		{8, `{"start":"2026-05-01T00:00:00Z","end":"2026-05-02T00:00:00Z","secrecy_levels":"secret"}`},
		{10, `{"content":"x","store":"working","emotion":"sad","meta_json":"{\"confidence\":0.5}"}`},
		{11, `{"content":"x","session_id":"s","visibility":"sealed"}`},
		{13, `{"record_id":"x","content":""}`},
		{5, `{"record_ids":"a,b","confirm":true}`},
		{3, `[1,2]`},
		{9, `null`},
	}
	for _, s := range seeds {
		f.Add(s.tool, s.args)
	}
	f.Fuzz(func(t *testing.T, tool uint8, arguments string) {
		var v any
		if json.Unmarshal([]byte(arguments), &v) != nil {
			return
		}
		callTool(t, p, names[int(tool)%len(names)], v)
	})
}
