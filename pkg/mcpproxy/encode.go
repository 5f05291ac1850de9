package mcpproxy

import (
	"encoding/json"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"

	"memsvc.dev/memsvc/pkg/memory"
)

// encodeMessage returns the JSON of a message to write on stdout, exactly
// as json.Marshal writes it. A tool result is put together here: through
// json.Marshal, its structured content and its text, several kilobytes
// each, would be scanned and compacted three times over (the result's
// MarshalJSON marshals a map holding the raw structured content, and the
// enclosing response compacts what that returns).
func encodeMessage(v any) ([]byte, error) {
	if r, ok := v.(mcp.JSONRPCResponse); ok {
		if res, ok := r.Result.(*mcp.CallToolResult); ok && plainResult(res) {
			return appendToolResponse(nil, r, res)
		}
	}
	return json.Marshal(v)
}

// plainResult reports whether res is made of what appendToolResponse
// writes: text content without annotations, structured content as the
// compact JSON structured made, an error flag and a result type.
func plainResult(res *mcp.CallToolResult) bool {
	if res.Meta != nil || len(res.InputRequests) > 0 || res.RequestState != "" || res.StructuredContent != nil {
		return false
	}
	for _, c := range res.Content {
		t, ok := c.(mcp.TextContent)
		if !ok || t.Annotations != nil || t.Meta != nil {
			return false
		}
	}
	return true
}

// appendToolResponse appends the JSON-RPC response r carrying res, a
// plainResult, as json.Marshal writes it: the response's fields in
// declaration order, the result's as CallToolResult.MarshalJSON writes
// them (a map, so sorted by key). res.RawStructuredContent is only ever
// set by structured, from json.Marshal, so it is compact with HTML
// characters escaped already and goes out as it is.
func appendToolResponse(dst []byte, r mcp.JSONRPCResponse, res *mcp.CallToolResult) ([]byte, error) {
	// Room for the text escaped (a JSON text has a quote to escape every
	// few bytes), the structured content and the rest, with the line's
	// end, so that the answer is written in one buffer.
	n := 96 + len(res.RawStructuredContent)
	for _, c := range res.Content {
		t := c.(mcp.TextContent)
		n += 32 + len(t.Text) + len(t.Text)/4
	}
	dst = slices.Grow(dst, n)
	dst = append(dst, `{"jsonrpc":`...)
	dst = appendString(dst, r.JSONRPC)
	dst = append(dst, `,"id":`...)
	id, err := json.Marshal(r.ID)
	if err != nil {
		return nil, err
	}
	dst = append(dst, id...)
	dst = append(dst, `,"result":{"content":[`...)
	for i, c := range res.Content {
		t := c.(mcp.TextContent)
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"type":`...)
		dst = appendString(dst, t.Type)
		dst = append(dst, `,"text":`...)
		dst = appendString(dst, t.Text)
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	if res.IsError {
		dst = append(dst, `,"isError":true`...)
	}
	if res.ResultType != "" {
		dst = append(dst, `,"resultType":`...)
		dst = appendString(dst, string(res.ResultType))
	}
	if len(res.RawStructuredContent) > 0 {
		dst = append(dst, `,"structuredContent":`...)
		dst = append(dst, res.RawStructuredContent...)
	}
	return append(dst, "}}"...), nil
}

// appendString appends json.Marshal's encoding of s.
func appendString(dst []byte, s string) []byte { return memory.AppendJSONString(dst, s) }
