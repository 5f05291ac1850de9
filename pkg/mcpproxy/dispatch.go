package mcpproxy

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
)

// toolCall is a tools/call request as Serve reads it, once. A plain call
// (JSON-RPC 2.0, a string or number id, a tool of ours, params of a name
// and arguments only) has its tool's run function: the proxy answers it
// itself, exactly as mcp-go's HandleMessage would, without decoding the
// message twice more and building the answer through reflection. Any
// other message is left to mcp-go.
type toolCall struct {
	id   any // as HandleMessage reads it, so that it is written back alike
	args any
	run  toolFunc // nil: not a plain call
}

// readToolCall reports whether data is a tools/call request (a method and
// a non-null id), the only messages that wait for the server, and reads
// it.
func (p *Proxy) readToolCall(data []byte) (toolCall, bool) {
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Result  json.RawMessage `json:"result"`
		Params  json.RawMessage `json:"params"`
	}
	if json.Unmarshal(data, &m) != nil {
		return toolCall{}, false
	}
	if m.Method != string(mcp.MethodToolsCall) || len(m.ID) == 0 || string(m.ID) == "null" {
		return toolCall{}, false
	}
	var tc toolCall
	if m.JSONRPC != mcp.JSONRPC_VERSION || len(m.Result) > 0 || !plainID(m.ID) {
		return tc, true
	}
	var params struct {
		Name      string          `json:"name"`
		Arguments any             `json:"arguments"`
		Meta      json.RawMessage `json:"_meta"`
		Task      json.RawMessage `json:"task"`
		Responses json.RawMessage `json:"inputResponses"`
		State     json.RawMessage `json:"requestState"`
	}
	if json.Unmarshal(m.Params, &params) != nil || params.Meta != nil || params.Task != nil || params.Responses != nil || params.State != nil {
		return tc, true
	}
	if json.Unmarshal(m.ID, &tc.id) != nil {
		return toolCall{}, true
	}
	tc.args, tc.run = params.Arguments, p.calls[params.Name]
	return tc, true
}

// plainID reports whether id is a JSON string or number.
func plainID(id json.RawMessage) bool {
	c := id[0]
	return c == '"' || c == '-' || ('0' <= c && c <= '9')
}

// answer returns the answer to a tools/call request read by readToolCall
// from data, or nil when it gets none. The run functions turn every
// failure into a tool result and use nothing of mcp-go's request context,
// hooks or middleware (the server has none), so a plain call's answer is
// the one HandleMessage gives.
func (p *Proxy) answer(ctx context.Context, tc toolCall, data []byte) any {
	if tc.run == nil {
		return p.server.HandleMessage(ctx, data) // a nil message is a nil any
	}
	return mcp.NewJSONRPCResultResponse(mcp.NewRequestId(tc.id), tc.run(ctx, tc.args))
}
