package mcpproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/httpapi"
)

// TestPlainCallAnswer: the proxy's own answer to a plain tool call is the
// one mcp-go's HandleMessage gives, byte for byte, for results and isError
// results alike and whatever the form of the id.
func TestPlainCallAnswer(t *testing.T) {
	p := newProxy(t, newHTTP(t, httpapi.Options{}), client.Options{}, Options{})
	for _, content := range []string{"the staging deploy failed on a missing key", "staging is back after the key rotation"} {
		if text, isErr := callTool(t, p, "store", map[string]any{"content": content}); isErr {
			t.Fatalf("store: %s", text)
		}
	}
	calls := []string{
		`"name":"recall","arguments":{"query":"staging key","limit":5,"reconsolidate":false}`,
		`"name":"recall","arguments":{"limit":2,"reconsolidate":false}`,
		`"name":"stats","arguments":{}`,
		`"name":"stats"`,
		`"name":"stats","arguments":null`,
		`"name":"recall","arguments":[1,2]`,
		`"name":"recall","arguments":{"query":"x","colour":"red"}`,
		`"name":"recall","arguments":{"limit":"ten"}`,
		`"name":"inspect","arguments":{"record_id":"0190b6a4-7c1e-7a55-9f1a-5f2b3c4d5e6f"}`,
		`"arguments":{"query":"x"},"name":"recall","extra":1`,
	}
	ids := []string{`7`, `-3`, `1.5`, `1e3`, `12345678901234567890`, `"abc"`, `""`, `"<&>"`}
	ctx := context.Background()
	for i, call := range calls {
		id := ids[i%len(ids)]
		msg := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{%s}}`, id, call))
		tc, ok := p.readToolCall(msg)
		if !ok || tc.run == nil {
			t.Errorf("%s: not read as a plain tool call", msg)
			continue
		}
		got, err := encodeMessage(p.answer(ctx, tc, msg))
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(p.server.HandleMessage(ctx, msg))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s:\nproxy:  %s\nmcp-go: %s", msg, got, want)
		}
	}
}

// TestReadToolCall: which messages are tool calls (served concurrently)
// and which of those the proxy answers itself rather than mcp-go.
func TestReadToolCall(t *testing.T) {
	p := New(nil, Options{})
	for _, tc := range []struct {
		msg         string
		call, plain bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"recall","arguments":{"query":"x"}}}`, true, true},
		{`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"stats"}}`, true, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"recall","_meta":{"progressToken":1}}}`, true, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"recall","task":{}}}`, true, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"recall","requestState":"s"}}`, true, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"recall","inputResponses":{}}}`, true, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}`, true, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, true, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"recall"}`, true, false},
		{`{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"recall"}}`, true, false},
		{`{"jsonrpc":"2.0","id":true,"method":"tools/call","params":{"name":"recall"}}`, true, false},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"tools/call","params":{"name":"recall"}}`, true, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","result":{},"params":{"name":"recall"}}`, true, false},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"recall"}}`, false, false},
		{`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"recall"}}`, false, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, false, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call"`, false, false},
	} {
		got, call := p.readToolCall([]byte(tc.msg))
		if call != tc.call || (got.run != nil) != tc.plain {
			t.Errorf("%s: tool call %v, plain %v; want %v, %v", tc.msg, call, got.run != nil, tc.call, tc.plain)
		}
	}
}
