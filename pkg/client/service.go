package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

// do performs a JSON call and returns the decoded answer.
func do[Resp any](ctx context.Context, c *Client, r retryable, method, path string, in any) (*Resp, error) {
	var out Resp
	if err := c.call(ctx, r, method, path, nil, in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// doBinary is do for the answers that hold binary values (content,
// archives): it asks for them in base64 (wire.QueryBinary), about a third
// the size of the integer arrays and half that of the number arrays (of
// embeddings). A server that does
// not know the parameter answers in arrays, which decode the same.
func doBinary[Resp any](ctx context.Context, c *Client, r retryable, method, path string, in any) (*Resp, error) {
	var out Resp
	if err := c.call(ctx, r, method, path, binaryQuery(), in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// binaryQuery asks for an answer's binary values in base64.
func binaryQuery() url.Values { return url.Values{wire.QueryBinary: {wire.BinaryBase64}} }

// EncodeStore implements memory.Service.
func (c *Client) EncodeStore(ctx context.Context, req *memory.EncodeStoreRequest) (*memory.EncodeStoreResponse, error) {
	return do[memory.EncodeStoreResponse](ctx, c, once, http.MethodPost, wire.PathEncode, req)
}

// EncodeBatch implements memory.Service.
func (c *Client) EncodeBatch(ctx context.Context, req *memory.EncodeBatchRequest) (*memory.EncodeBatchResponse, error) {
	return do[memory.EncodeBatchResponse](ctx, c, once, http.MethodPost, wire.PathEncodeBatch, req)
}

// EncodeUpdate implements memory.Service.
func (c *Client) EncodeUpdate(ctx context.Context, req *memory.EncodeUpdateRequest) error {
	return c.call(ctx, once, http.MethodPatch, wire.RecordPath(wire.PathEncodeUpdate, req.RecordID), nil, req, nil)
}

// EncodeStoreRaw implements memory.Service.
func (c *Client) EncodeStoreRaw(ctx context.Context, req *memory.EncodeStoreRawRequest) (*memory.EncodeStoreRawResponse, error) {
	return do[memory.EncodeStoreRawResponse](ctx, c, rawRetry(req), http.MethodPost, wire.PathEncodeRaw, req)
}

// EncodeBatchRaw implements memory.Service.
func (c *Client) EncodeBatchRaw(ctx context.Context, req *memory.EncodeBatchStoreRawRequest) (*memory.EncodeBatchStoreRawResponse, error) {
	return do[memory.EncodeBatchStoreRawResponse](ctx, c, batchRawRetry(req), http.MethodPost, wire.PathEncodeRawBatch, req)
}

// RecallQuery implements memory.Service.
func (c *Client) RecallQuery(ctx context.Context, req *memory.RecallQueryRequest) (*memory.RecallQueryResponse, error) {
	return doBinary[memory.RecallQueryResponse](ctx, c, repeat, http.MethodPost, wire.PathRecallQuery, req)
}

// RecallRaw implements memory.Service.
func (c *Client) RecallRaw(ctx context.Context, req *memory.RecallRawQueryRequest) (*memory.RecallRawQueryResponse, error) {
	return doBinary[memory.RecallRawQueryResponse](ctx, c, repeat, http.MethodPost, wire.PathRecallRaw, req)
}

// RecallAssociate implements memory.Service.
func (c *Client) RecallAssociate(ctx context.Context, req *memory.RecallAssociateRequest) (*memory.RecallAssociateResponse, error) {
	return doBinary[memory.RecallAssociateResponse](ctx, c, repeat, http.MethodPost, wire.RecordPath(wire.PathRecallAssociate, req.RecordID), req)
}

// RecallTimeline implements memory.Service.
func (c *Client) RecallTimeline(ctx context.Context, req *memory.RecallTimelineRequest) (*memory.RecallTimelineResponse, error) {
	return doBinary[memory.RecallTimelineResponse](ctx, c, repeat, http.MethodPost, wire.PathRecallTimeline, req)
}

// RecallGraph implements memory.Service.
func (c *Client) RecallGraph(ctx context.Context, req *memory.RecallGraphRequest) (*memory.RecallGraphResponse, error) {
	return do[memory.RecallGraphResponse](ctx, c, repeat, http.MethodPost, wire.PathRecallGraph, req)
}

// Consolidate implements memory.Service.
func (c *Client) Consolidate(ctx context.Context, req *memory.ConsolidateRequest) (*memory.ConsolidateResponse, error) {
	return do[memory.ConsolidateResponse](ctx, c, once, http.MethodPost, wire.PathConsolidate, req)
}

// DreamTick implements memory.Service.
func (c *Client) DreamTick(ctx context.Context, req *memory.DreamTickRequest) (*memory.DreamTickResponse, error) {
	return do[memory.DreamTickResponse](ctx, c, once, http.MethodPost, wire.PathDreamTick, req)
}

// DecayTick implements memory.Service.
func (c *Client) DecayTick(ctx context.Context, req *memory.DecayTickRequest) (*memory.DecayTickResponse, error) {
	return do[memory.DecayTickResponse](ctx, c, once, http.MethodPost, wire.PathDecayTick, req)
}

// SetMode implements memory.Service.
func (c *Client) SetMode(ctx context.Context, req *memory.SetModeRequest) error {
	return c.call(ctx, repeat, http.MethodPut, wire.PathMode, nil, req, nil)
}

// Forget implements memory.Service.
func (c *Client) Forget(ctx context.Context, req *memory.ForgetRequest) (*memory.ForgetResponse, error) {
	return do[memory.ForgetResponse](ctx, c, once, http.MethodDelete, wire.PathForget, req)
}

// Stats implements memory.Service.
func (c *Client) Stats(ctx context.Context) (*memory.Stats, error) {
	return do[memory.Stats](ctx, c, repeat, http.MethodGet, wire.PathStats, nil)
}

// StatsAll implements memory.Service: GET /v1/introspect/stats with
// all_namespaces=true, which the server refuses to a key bound to
// namespaces.
func (c *Client) StatsAll(ctx context.Context) (*memory.Stats, error) {
	var out memory.Stats
	if err := c.call(ctx, repeat, http.MethodGet, wire.PathStats, url.Values{wire.QueryAllNamespaces: {"true"}}, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Record implements memory.Service. The include flags are not sent; the
// server returns the full record regardless.
func (c *Client) Record(ctx context.Context, req *memory.IntrospectRecordRequest) (*memory.MemoryRecord, error) {
	return doBinary[memory.MemoryRecord](ctx, c, repeat, http.MethodGet, wire.RecordPath(wire.PathRecord, req.RecordID), nil)
}

// DecayForecast implements memory.Service.
func (c *Client) DecayForecast(ctx context.Context, req *memory.DecayForecastRequest) (*memory.DecayForecastResponse, error) {
	return do[memory.DecayForecastResponse](ctx, c, repeat, http.MethodPost, wire.PathDecayForecast, req)
}

// Evolution implements memory.Service.
func (c *Client) Evolution(ctx context.Context) (*memory.EvolutionMetrics, error) {
	return do[memory.EvolutionMetrics](ctx, c, repeat, http.MethodGet, wire.PathEvolution, nil)
}

// Namespaces implements memory.Service: the namespaces the client's API
// key may see.
func (c *Client) Namespaces(ctx context.Context) (*memory.NamespacesResponse, error) {
	return do[memory.NamespacesResponse](ctx, c, repeat, http.MethodGet, wire.PathNamespaces, nil)
}

// DropNamespace implements memory.Service.
func (c *Client) DropNamespace(ctx context.Context, req *memory.DropNamespaceRequest) (*memory.DropNamespaceResponse, error) {
	if err := memory.ValidateNamespace(req.Name); err != nil {
		return nil, err
	}
	return do[memory.DropNamespaceResponse](ctx, c, once, http.MethodDelete, wire.NamespacePath(req.Name), req)
}

// Export implements memory.Service: it streams the archive into w. What
// reached w before an error is not a usable archive.
func (c *Client) Export(ctx context.Context, req *memory.ExportRequest, w io.Writer) (*memory.ExportResponse, error) {
	if c.opts.NoStreaming {
		return c.exportJSON(ctx, req, w)
	}
	ctx2, cancel := c.context(ctx)
	defer cancel()
	b, err := json.Marshal(req)
	if err != nil {
		return nil, invalidRequest(err)
	}
	// Nothing reaches w before a 200, so a refusal can be retried.
	var resp *http.Response
	err = c.withRetries(ctx2, repeat, func() error {
		hr, err := c.newRequest(ctx2, http.MethodPost, wire.PathExportStream, nil, bytes.NewReader(b), wire.ContentTypeJSON, true)
		if err != nil {
			return err
		}
		hr.Header.Set("Accept", wire.ContentTypeArchive+", "+wire.ContentTypeJSON)
		r, err := c.send(ctx, hr)
		if err != nil {
			return err
		}
		if r.StatusCode == http.StatusOK {
			resp = r
			return nil
		}
		defer r.Body.Close()
		data, err := io.ReadAll(io.LimitReader(r.Body, maxErrorBody))
		if err != nil {
			return c.transportError(ctx, err)
		}
		if noRoute(r, data) {
			return errNoStreamRoute
		}
		return answerError(hr, r, data)
	})
	if errors.Is(err, errNoStreamRoute) {
		// A server without the streaming route: use the JSON one.
		return c.exportJSON(ctx, req, w)
	}
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body := &readTracker{r: resp.Body}
	n, err := io.Copy(w, body)
	if err != nil {
		if body.err != nil {
			return nil, fmt.Errorf("export stream cut after %d bytes: %w", n, c.transportError(ctx, body.err))
		}
		return nil, fmt.Errorf("write archive: %w", err)
	}
	id := resp.Trailer.Get(wire.TrailerArchiveID)
	if id == "" {
		return nil, fmt.Errorf("export stream from %s ended without its metadata trailers after %d bytes; a reverse proxy may drop HTTP trailers (use the NoStreaming option)", c.base.Redacted(), n)
	}
	out := &memory.ExportResponse{ArchiveID: id, Checksum: resp.Trailer.Get(wire.TrailerChecksum)}
	size, err1 := strconv.ParseUint(resp.Trailer.Get(wire.TrailerSizeBytes), 10, 64)
	count, err2 := strconv.ParseUint(resp.Trailer.Get(wire.TrailerRecordCount), 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("export stream trailers: %w", err)
	}
	out.SizeBytes, out.RecordCount = size, uint32(count)
	return out, nil
}

// errNoStreamRoute reports a server without the streaming export route.
var errNoStreamRoute = errors.New("no streaming export route")

func (c *Client) exportJSON(ctx context.Context, req *memory.ExportRequest, w io.Writer) (*memory.ExportResponse, error) {
	out, err := doBinary[wire.ExportArchiveResponse](ctx, c, repeat, http.MethodPost, wire.PathExport, req)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(out.ArchiveData); err != nil {
		return nil, fmt.Errorf("write archive: %w", err)
	}
	return &out.ExportResponse, nil
}

// Import implements memory.Service: it streams the archive from r.
// req.ArchiveData is not used.
func (c *Client) Import(ctx context.Context, req *memory.ImportRequest, r io.Reader) (*memory.ImportResponse, error) {
	if c.opts.NoStreaming {
		data, err := io.ReadAll(r)
		if err != nil {
			return nil, fmt.Errorf("read archive: %w", err)
		}
		jr := *req
		jr.ArchiveData = data
		return do[memory.ImportResponse](ctx, c, once, http.MethodPost, wire.PathImport, &jr)
	}
	ctx2, cancel := c.context(ctx)
	defer cancel()
	q := url.Values{}
	q.Set(wire.QueryArchiveID, req.ArchiveID)
	if req.Strategy.Valid() {
		q.Set(wire.QueryStrategy, req.Strategy.String())
	}
	if req.ConflictResolution.Valid() {
		q.Set(wire.QueryConflictResolution, req.ConflictResolution.String())
	}
	if req.PreserveNamespaces {
		q.Set(wire.QueryPreserveNamespaces, "true")
	}
	src := &readTracker{r: r}
	hr, err := c.newRequest(ctx2, http.MethodPost, wire.PathImportStream, q, src, wire.ContentTypeArchive, true)
	if err != nil {
		return nil, err
	}
	if l, ok := r.(interface{ Len() int }); ok {
		hr.ContentLength = int64(l.Len())
		if hr.ContentLength == 0 {
			hr.Body = http.NoBody
		}
	}
	if req.DecryptionKey != nil {
		hr.Header.Set(wire.HeaderDecryptionKey, *req.DecryptionKey)
	}
	resp, err := c.http.Do(hr)
	if err != nil {
		if src.err != nil {
			return nil, fmt.Errorf("read archive: %w", src.err)
		}
		return nil, c.transportError(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		if err != nil {
			return nil, c.transportError(ctx, err)
		}
		if noRoute(resp, data) {
			return nil, &memory.Error{Code: memory.CodeInternal, Message: fmt.Sprintf("server at %s has no streaming import route; use the NoStreaming option", c.base.Redacted())}
		}
		return nil, answerError(hr, resp, data)
	}
	var out memory.ImportResponse
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, c.transportError(ctx, err)
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, &memory.Error{Code: memory.CodeInternal, Message: fmt.Sprintf("decode import answer: %v", err)}
	}
	return &out, nil
}

// readTracker remembers the first read error other than io.EOF.
type readTracker struct {
	r   io.Reader
	err error
}

func (t *readTracker) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil && err != io.EOF && t.err == nil {
		t.err = err
	}
	return n, err
}

// rawRetry: a raw store may be repeated when it names its record id.
func rawRetry(req *memory.EncodeStoreRawRequest) retryable { return req.RecordID != nil }

// batchRawRetry: a raw batch may be repeated when every entry names its
// record id.
func batchRawRetry(req *memory.EncodeBatchStoreRawRequest) retryable {
	for i := range req.Records {
		if req.Records[i].RecordID == nil {
			return once
		}
	}
	return repeat
}
