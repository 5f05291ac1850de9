package client

import (
	"context"
	"net/http"
	"net/url"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

// RecallQueryBriefDecode sends a recall as RecallQueryDecode does but asks
// for the brief answer (?view=brief, memory.RecallBrief), and hands its
// JSON to decode. A server older than the brief view answers in full, so
// decode must read both forms.
func (c *Client) RecallQueryBriefDecode(ctx context.Context, req *memory.RecallQueryRequest, decode func(data []byte) error) error {
	q := url.Values{wire.QueryView: {memory.ViewBrief}}
	return c.call(ctx, repeat, http.MethodPost, wire.PathRecallQuery, q, req, answerDecoder(decode))
}
