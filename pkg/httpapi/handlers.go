package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"sync"

	"github.com/gorilla/mux"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

// apiFunc is one operation: decode the request, call the service, return
// the result to encode or the error to report.
type apiFunc func(w http.ResponseWriter, r *http.Request) (any, error)

// api is the one wrapper every JSON operation goes through: it turns
// (result, error) into the success status with a JSON body (or 204 without
// one) or into the error envelope.
func (s *Server) api(status int, f apiFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(memory.WithAnswerLimit(r.Context(), s.maxResponse))
		form, err := binaryForm(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		res, err := f(w, r)
		if err != nil {
			s.writeError(w, r, serviceError(err))
			return
		}
		if status == http.StatusNoContent {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if v := reflect.ValueOf(res); !v.IsValid() || v.Kind() == reflect.Pointer && v.IsNil() {
			s.writeError(w, r, errors.New("service returned neither a result nor an error"))
			return
		}
		b, pooled, err := s.encode(res, form)
		if err != nil {
			s.writeError(w, r, fmt.Errorf("encode response: %w", err))
			return
		}
		if pooled {
			defer s.answers.put(b)
		}
		if err := memory.AnswerBudgetOf(r.Context()).Check(len(b)); err != nil {
			s.writeError(w, r, err)
			return
		}
		writeBody(w, status, b)
	})
}

// binaryForm is the form of binary values the request asks its answer
// in (wire.QueryBinary).
func binaryForm(r *http.Request) (memory.BinaryForm, error) {
	if r.URL.RawQuery == "" {
		return memory.BinaryArrays, nil
	}
	f := memory.BinaryArrays
	for _, v := range r.URL.Query()[wire.QueryBinary] {
		if v != wire.BinaryBase64 {
			return f, memory.Invalid(wire.QueryBinary, "query value %s: want %s, or leave the parameter out for integer and number arrays",
				memory.Quote(v), wire.BinaryBase64)
		}
		f = memory.BinaryBase64
	}
	return f, nil
}

// maxPooledAnswer bounds the answer buffers kept for reuse: a rare huge
// answer is not worth holding on to.
const maxPooledAnswer = 1 << 20

// answerPool reuses the buffers answers are written into. A recall answer
// is tens of kilobytes; allocating it afresh for every request made the
// garbage collector a visible share of a recall's cost.
type answerPool struct{ p sync.Pool }

// get returns an empty buffer, with room from an earlier answer when one
// is free.
func (a *answerPool) get() []byte {
	if b, ok := a.p.Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return nil
}

// put gives back b once the answer it holds has been written; nothing
// may use b afterwards.
func (a *answerPool) put(b []byte) {
	if cap(b) == 0 || cap(b) > maxPooledAnswer {
		return
	}
	b = b[:0]
	a.p.Put(&b)
}

// serviceError keeps 401 for this server's own authentication: a service
// that reports UNAUTHORIZED (a store it cannot decrypt, an upstream server
// refusing a proxy's key) is failing, and the caller's key is not to blame.
func serviceError(err error) error {
	var me *memory.Error
	if errors.As(err, &me) && me.Code == memory.CodeUnauthorized {
		return fmt.Errorf("service refused access: %w", errors.New(me.Message))
	}
	return err
}

// jsonOp adapts a service method taking a JSON-decoded request.
func jsonOp[Req, Resp any](s *Server, call func(context.Context, *Req) (Resp, error)) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) (any, error) {
		var req Req
		if err := s.decodeJSON(w, r, &req); err != nil {
			return nil, err
		}
		return call(r.Context(), &req)
	}
}

// operation returns the apiFunc of a /v1 route.
func (s *Server) operation(path string) apiFunc {
	svc := s.svc
	switch path {
	case wire.PathEncode:
		return jsonOp(s, svc.EncodeStore)
	case wire.PathEncodeBatch:
		return jsonOp(s, svc.EncodeBatch)
	case wire.PathEncodeRaw:
		return jsonOp(s, svc.EncodeStoreRaw)
	case wire.PathEncodeRawBatch:
		return jsonOp(s, svc.EncodeBatchRaw)
	case wire.PathEncodeUpdate:
		return s.encodeUpdate
	case wire.PathRecallQuery:
		return s.recallQuery
	case wire.PathRecallRaw:
		return jsonOp(s, svc.RecallRaw)
	case wire.PathRecallAssociate:
		return s.recallAssociate
	case wire.PathRecallTimeline:
		return jsonOp(s, svc.RecallTimeline)
	case wire.PathRecallGraph:
		return jsonOp(s, svc.RecallGraph)
	case wire.PathConsolidate:
		return jsonOp(s, svc.Consolidate)
	case wire.PathExport:
		return s.export
	case wire.PathImport:
		return s.importJSON
	case wire.PathImportStream:
		return s.importStream
	case wire.PathDreamTick:
		return jsonOp(s, svc.DreamTick)
	case wire.PathDecayTick:
		return jsonOp(s, svc.DecayTick)
	case wire.PathMode:
		return func(w http.ResponseWriter, r *http.Request) (any, error) {
			var req memory.SetModeRequest
			if err := s.decodeJSON(w, r, &req); err != nil {
				return nil, err
			}
			return nil, svc.SetMode(r.Context(), &req)
		}
	case wire.PathForget:
		// DELETE /v1/lifecycle/forget: with "cascade", the listed
		// records' direct association targets go too, along links a
		// client made and derivation links (dream and consolidation
		// provenance), never along the similarity links memsvc infers
		// on its own (memory.ForgetRequest).
		return jsonOp(s, svc.Forget)
	case wire.PathStats:
		return s.stats
	case wire.PathRecord:
		return s.record
	case wire.PathDecayForecast:
		return jsonOp(s, svc.DecayForecast)
	case wire.PathEvolution:
		return func(_ http.ResponseWriter, r *http.Request) (any, error) { return svc.Evolution(r.Context()) }
	case wire.PathNamespaces:
		return s.namespaces
	case wire.PathNamespace:
		return s.dropNamespace
	}
	return nil
}

// pathID parses the {record_id} path segment.
func pathID(r *http.Request) (memory.ID, error) {
	v := mux.Vars(r)[wire.ParamRecordID]
	id, err := memory.ParseID(v)
	if err != nil {
		return memory.ID{}, memory.Invalid("record_id", "path segment %s is not a UUID", memory.Quote(v))
	}
	return id, nil
}

func (s *Server) encodeUpdate(w http.ResponseWriter, r *http.Request) (any, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	var req memory.EncodeUpdateRequest
	if err := s.decodeJSON(w, r, &req); err != nil {
		return nil, err
	}
	req.RecordID = id
	return nil, s.svc.EncodeUpdate(r.Context(), &req)
}

func (s *Server) recallAssociate(w http.ResponseWriter, r *http.Request) (any, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	var req memory.RecallAssociateRequest
	if err := s.decodeJSON(w, r, &req); err != nil {
		return nil, err
	}
	req.RecordID = id
	return s.svc.RecallAssociate(r.Context(), &req)
}

func (s *Server) record(_ http.ResponseWriter, r *http.Request) (any, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	req := memory.IntrospectRecordRequest{RecordID: id}
	q := r.URL.Query()
	for _, p := range []struct {
		name string
		dst  *bool
	}{
		{wire.QueryIncludeHistory, &req.IncludeHistory},
		{wire.QueryIncludeAssociations, &req.IncludeAssociations},
		{wire.QueryIncludeVersions, &req.IncludeVersions},
	} {
		for _, v := range q[p.name] {
			switch v {
			case "true":
				*p.dst = true
			case "false":
				*p.dst = false
			default:
				return nil, memory.Invalid(p.name, "query value %s: want true or false", memory.Quote(v))
			}
		}
	}
	return s.svc.Record(r.Context(), &req)
}

func (s *Server) export(w http.ResponseWriter, r *http.Request) (any, error) {
	var req memory.ExportRequest
	if err := s.decodeJSON(w, r, &req); err != nil {
		return nil, err
	}
	if err := scopeOf(r).CheckExport(req.Namespaces); err != nil {
		return nil, err
	}
	// The archive travels as an integer array, up to four bytes per
	// archive byte, or in base64, four bytes per three: stop writing it
	// once that would pass the answer limit.
	buf, as := &cappedBuffer{max: s.maxResponse / 4}, "as a JSON integer array"
	if form, _ := binaryForm(r); form == memory.BinaryBase64 { // checked by api
		buf.max, as = s.maxResponse/4*3, "in base64"
	}
	resp, err := s.svc.Export(r.Context(), &req, buf)
	if buf.over {
		return nil, memory.Errorf(memory.CodeContentTooLarge, "%s: the archive passes %d bytes, which %s exceeds the server's limit of %d bytes for one answer; use the streaming route %s (memsvc clients do by default)",
			memory.AnswerTooLarge, buf.max, as, s.maxResponse, wire.PathExportStream)
	}
	if err != nil {
		return nil, err
	}
	if resp == nil {
		return nil, errors.New("export returned no result")
	}
	return &wire.ExportArchiveResponse{ExportResponse: *resp, ArchiveData: buf.Bytes()}, nil
}

// errArchiveTooLarge stops an export whose archive does not fit an answer.
var errArchiveTooLarge = errors.New("archive exceeds the answer limit")

// cappedBuffer is a buffer that refuses to grow past max bytes.
type cappedBuffer struct {
	bytes.Buffer
	max  int64
	over bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if int64(c.Len()+len(p)) > c.max {
		c.over = true
		return 0, errArchiveTooLarge
	}
	return c.Buffer.Write(p)
}

func (s *Server) importJSON(w http.ResponseWriter, r *http.Request) (any, error) {
	var req memory.ImportRequest
	if err := s.decodeJSON(w, r, &req); err != nil {
		return nil, err
	}
	if req.ArchiveData == nil {
		return nil, memory.Invalid("archive_data", "import requires archive_data (the archive as an array of byte values), or send the raw archive to %s", wire.PathImportStream)
	}
	if err := scopeOf(r).CheckImport(req.PreserveNamespaces); err != nil {
		return nil, err
	}
	data := req.ArchiveData
	req.ArchiveData = nil
	return s.svc.Import(r.Context(), &req, bytes.NewReader(data))
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	s.writeJSON(w, r, http.StatusOK, wire.Health{Status: wire.HealthOK})
}

// readinessRetryAfter is the Retry-After of a not-ready answer, in seconds.
const readinessRetryAfter = 5

func (s *Server) readiness(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), s.readyTimeout)
	err := s.ready(ctx)
	cancel()
	reason := ""
	var nre *NotReadyError
	switch {
	case err == nil:
	case errors.As(err, &nre):
		reason = nre.Reason
	case errors.Is(err, context.DeadlineExceeded):
		reason = "engine check timed out"
	case memory.CodeOf(err) == memory.CodeDecayEngineBusy:
		reason = "decay engine busy"
	default:
		reason = "engine check failed"
	}
	if err != nil {
		s.log.Warn("readiness check failed", "err", err, "request_id", requestID(r))
	}
	var detail []string
	if s.readyDetail != nil {
		detail = s.readyDetail()
	}
	if reason == "" {
		s.writeJSON(w, r, http.StatusOK, wire.Health{Status: wire.HealthReady, Detail: detail})
		return
	}
	w.Header().Set(wire.HeaderRetryAfter, strconv.Itoa(readinessRetryAfter))
	s.writeJSON(w, r, http.StatusServiceUnavailable, wire.Health{Status: wire.HealthNotReady, Reason: reason, Detail: detail})
}

// internalMessage is all a client learns about an internal failure.
const internalMessage = "internal server error; the server log has the details"

// writeError answers err as the error envelope. Errors that are not
// *memory.Error are internal: logged with their cause, reported
// generically.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var me *memory.Error
	if !errors.As(err, &me) {
		if r.Context().Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			s.log.Info("request abandoned by the client", "method", r.Method, "path", r.URL.Path, "request_id", requestID(r), "err", err)
		} else {
			s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "request_id", requestID(r), "err", err)
		}
		me = &memory.Error{Code: memory.CodeInternal, Message: internalMessage}
	}
	s.writeStatus(w, r, wire.Status(me.Code), me)
}

// writeStatus answers me as the error envelope with the given status.
func (s *Server) writeStatus(w http.ResponseWriter, r *http.Request, status int, me *memory.Error) {
	if status >= 500 && me.Message != internalMessage {
		s.log.Warn("request failed", "method", r.Method, "path", r.URL.Path, "request_id", requestID(r), "code", me.Code, "err", me.Message)
	}
	if me.RetryAfter > 0 {
		w.Header().Set(wire.HeaderRetryAfter, strconv.FormatUint(uint64(me.RetryAfter), 10))
	}
	s.writeJSON(w, r, status, wire.NewEnvelope(me, requestID(r)))
}

// writeJSON writes v as the JSON body with the given status.
func (s *Server) writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	b, err := marshal(v)
	if err != nil {
		s.log.Error("encode response", "method", r.Method, "path", r.URL.Path, "request_id", requestID(r), "err", err)
		status = http.StatusInternalServerError
		b, _ = json.Marshal(wire.NewEnvelope(&memory.Error{Code: memory.CodeInternal, Message: internalMessage}, requestID(r)))
	}
	writeBody(w, status, b)
}

// writeBody writes the JSON body b with the given status.
func writeBody(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h.Set("Content-Type", wire.ContentTypeJSON)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// formAppender is an answer that holds binary values: it writes them in
// either memory.BinaryForm.
type formAppender interface {
	AppendJSONForm(dst []byte, f memory.BinaryForm) ([]byte, error)
}

// encode encodes an answer (not a nil pointer) with its binary values in
// form f, in a buffer of s.answers when it reports true: the buffer goes
// back with s.answers.put once written.
func (s *Server) encode(v any, f memory.BinaryForm) ([]byte, bool, error) {
	app := appenderOf(v, f)
	if app == nil {
		b, err := json.Marshal(v)
		return b, false, err
	}
	b, err := app(s.answers.get())
	return b, true, err
}

// marshal encodes a response body in a new slice.
func marshal(v any) ([]byte, error) {
	if app := appenderOf(v, memory.BinaryArrays); app != nil {
		return app(nil)
	}
	return json.Marshal(v)
}

// appenderOf returns the appender of v in form f, or nil for json.Marshal.
// The answers that carry recalled memories (recall, brief recall,
// associate, timeline) assemble their JSON compact and escaped, and
// json.Marshal would scan all of it once more (for a recall answer, a
// third of its encoding time), so they are always written directly. In
// BinaryBase64 every answer that holds binary values is written by its
// AppendJSONForm. Everything else goes through json.Marshal, which checks
// and escapes what a Marshaler returns.
func appenderOf(v any, f memory.BinaryForm) func([]byte) ([]byte, error) {
	var fa formAppender
	switch a := v.(type) {
	case *memory.RecallQueryResponse:
		if a != nil {
			fa = a
		}
	case *memory.RecallAssociateResponse:
		if a != nil {
			fa = a
		}
	case *memory.RecallTimelineResponse:
		if a != nil {
			fa = a
		}
	case memory.RecallBrief:
		return a.AppendJSON
	case formAppender:
		if f != memory.BinaryArrays {
			fa = a
		}
	}
	if fa == nil {
		return nil
	}
	return func(dst []byte) ([]byte, error) { return fa.AppendJSONForm(dst, f) }
}
