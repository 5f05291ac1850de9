package client

import (
	"context"
	"net/http"
	"net/url"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

// RecallQueryDecode sends a recall as RecallQuery does and hands the
// answer's JSON to decode instead of decoding it into a
// RecallQueryResponse, for a caller that needs only part of it. A view
// other than "" asks for that form of the answer (memory.ViewBrief:
// ?view=brief, memory.RecallBrief); a server older than the view answers
// in full, so decode must then read both forms. No wire.QueryBinary is
// sent: bytes and embeddings come as the CMP arrays, the form one-pass
// readers of the answer expect. decode may keep data. An error from
// decode is reported as RecallQuery reports an answer it cannot decode.
func (c *Client) RecallQueryDecode(ctx context.Context, req *memory.RecallQueryRequest, view string, decode func(data []byte) error) error {
	var q url.Values
	if view != "" {
		q = url.Values{wire.QueryView: {view}}
	}
	return c.call(ctx, repeat, http.MethodPost, wire.PathRecallQuery, q, req, answerDecoder(decode))
}
