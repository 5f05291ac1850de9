package httpapi

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

// exportStream serves POST /v1/lifecycle/export/stream: the archive as raw
// bytes, its metadata as trailers. The status is committed with the first
// archive byte, so an export that fails before writing anything answers the
// usual envelope; one that fails later aborts the connection.
func (s *Server) exportStream(w http.ResponseWriter, r *http.Request) {
	var req memory.ExportRequest
	if err := s.decodeJSON(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := scopeOf(r).CheckExport(req.Namespaces); err != nil {
		s.writeError(w, r, err)
		return
	}
	out := &lazyStream{w: w}
	resp, err := s.svc.Export(r.Context(), &req, out)
	if err == nil && resp == nil {
		err = errors.New("export returned no result")
	}
	if err != nil {
		if !out.started {
			s.writeError(w, r, serviceError(err))
			return
		}
		s.log.Error("export failed after streaming began; aborting the response", "request_id", requestID(r), "bytes_sent", out.n, "err", err)
		panic(http.ErrAbortHandler)
	}
	out.start()
	h := w.Header()
	h.Set(wire.TrailerArchiveID, resp.ArchiveID)
	h.Set(wire.TrailerSizeBytes, strconv.FormatUint(resp.SizeBytes, 10))
	h.Set(wire.TrailerRecordCount, strconv.FormatUint(uint64(resp.RecordCount), 10))
	h.Set(wire.TrailerChecksum, resp.Checksum)
}

// lazyStream writes the response header with the first byte.
type lazyStream struct {
	w       http.ResponseWriter
	started bool
	n       int64
}

func (l *lazyStream) start() {
	if l.started {
		return
	}
	l.started = true
	h := l.w.Header()
	h.Set("Content-Type", wire.ContentTypeArchive)
	h.Set("Content-Disposition", `attachment; filename="memsvc-export.cma"`)
	h.Set("Trailer", strings.Join([]string{wire.TrailerArchiveID, wire.TrailerSizeBytes, wire.TrailerRecordCount, wire.TrailerChecksum}, ", "))
	l.w.WriteHeader(http.StatusOK)
}

func (l *lazyStream) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	l.start()
	n, err := l.w.Write(p)
	l.n += int64(n)
	return n, err
}

// importStream serves POST /v1/lifecycle/import/stream: the archive is the
// raw body, the options are query parameters, the passphrase a header.
func (s *Server) importStream(w http.ResponseWriter, r *http.Request) (any, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != wire.ContentTypeArchive {
			return nil, memory.Invalid("", "Content-Type %s: send the archive as %s", memory.Quote(ct), wire.ContentTypeArchive)
		}
	}
	req := memory.DefaultImportRequest()
	q := r.URL.Query()
	req.ArchiveID = q.Get(wire.QueryArchiveID)
	if v := q.Get(wire.QueryStrategy); v != "" {
		st, err := memory.ParseImportStrategy(v)
		if err != nil {
			return nil, memory.Invalid(wire.QueryStrategy, "%v", err)
		}
		req.Strategy = st
	}
	if v := q.Get(wire.QueryConflictResolution); v != "" {
		cr, err := memory.ParseConflictResolution(v)
		if err != nil {
			return nil, memory.Invalid(wire.QueryConflictResolution, "%v", err)
		}
		req.ConflictResolution = cr
	}
	switch v := q.Get(wire.QueryPreserveNamespaces); v {
	case "", "false":
	case "true":
		req.PreserveNamespaces = true
	default:
		return nil, memory.Invalid(wire.QueryPreserveNamespaces, "query value %s: want true or false", memory.Quote(v))
	}
	if err := scopeOf(r).CheckImport(req.PreserveNamespaces); err != nil {
		return nil, err
	}
	if k := r.Header.Get(wire.HeaderDecryptionKey); k != "" {
		req.DecryptionKey = &k
	}
	if r.ContentLength > s.maxImport {
		return nil, importTooLarge(s.maxImport)
	}
	if r.ContentLength == 0 {
		return nil, emptyArchive()
	}
	body := &countingReader{r: http.MaxBytesReader(baseWriter(w), r.Body, s.maxImport)}
	resp, err := s.svc.Import(r.Context(), &req, body)
	switch {
	case body.tooLarge:
		return nil, importTooLarge(s.maxImport)
	case err != nil && body.n == 0 && body.eof:
		return nil, emptyArchive()
	}
	return resp, err
}

// importTooLarge refuses an archive over the import limit, naming the
// server setting that raises it.
func importTooLarge(limit int64) error {
	return memory.Errorf(memory.CodeContentTooLarge, "the archive exceeds the import limit of %d bytes; the server's max_import_bytes setting raises it", limit)
}

func emptyArchive() error {
	return memory.Invalid("", "the request body is empty; send the archive bytes")
}

// countingReader notes how much was read and whether the limit was hit.
type countingReader struct {
	r        io.Reader
	n        int64
	eof      bool
	tooLarge bool
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err == io.EOF {
		c.eof = true
	}
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		c.tooLarge = true
	}
	return n, err
}
