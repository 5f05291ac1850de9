// Package wire is the HTTP contract of the CMP API that pkg/httpapi serves
// and pkg/client speaks: route paths and methods, the error envelope, the
// one table from error codes to HTTP statuses, and the few body shapes that
// exist only over HTTP. Request and response bodies of the operations
// themselves are the pkg/memory types.
//
// The package depends on the standard library and pkg/memory only, so every
// binary that talks to a server can link it.
//
// # Routes
//
// Routes lists every route. The 21 /v1 operations, /health, /readiness and
// /metrics are wire-compatible with upstream CMP servers. Two routes are
// additions of memsvc for archives too large to travel as JSON integer
// arrays:
//
//	POST /v1/lifecycle/export/stream
//	    Request: an ExportRequest (JSON), exactly as for /v1/lifecycle/export.
//	    Response: 200 with the raw archive bytes (application/octet-stream,
//	    chunked). The ExportResponse fields follow as HTTP trailers
//	    (TrailerArchiveID, TrailerSizeBytes, TrailerRecordCount,
//	    TrailerChecksum). If the export fails before the first byte the
//	    answer is the usual error envelope; if it fails later the server
//	    aborts the connection, so a client never mistakes a truncated
//	    archive for a complete one.
//
//	POST /v1/lifecycle/import/stream?archive_id=A&strategy=S&conflict_resolution=C&preserve_namespaces=P
//	    Request: the raw archive bytes as the body
//	    (application/octet-stream); the passphrase of an encrypted archive
//	    in the HeaderDecryptionKey header, never in the URL. strategy and
//	    conflict_resolution take the ImportRequest defaults when absent;
//	    preserve_namespaces is "true" or "false" (the default).
//	    Response: 200 ImportResponse.
//
// # Namespaces
//
// Every CMP operation acts in one namespace, named by the HeaderNamespace
// header (memsvc's addition; upstream clients send none and act in the
// default namespace). Two more routes of memsvc's own list and drop
// namespaces:
//
//	GET /v1/namespaces
//	    Response: 200 memory.NamespacesResponse, the namespaces the
//	    caller's API key may see.
//
//	DELETE /v1/namespaces/{namespace}
//	    Request: memory.DropNamespaceRequest ({"confirm": true}); the
//	    path names the namespace.
//	    Response: 200 memory.DropNamespaceResponse.
//
// Route.Namespace tells for each route which namespace it acts on.
package wire

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"memsvc.dev/memsvc/pkg/memory"
)

// Paths of the HTTP API. Paths with a {record_id} segment are route
// templates; RecordPath fills them in.
const (
	PathHealth    = "/health"
	PathReadiness = "/readiness"
	PathMetrics   = "/metrics"

	PathEncode         = "/v1/encode"
	PathEncodeBatch    = "/v1/encode/batch"
	PathEncodeRaw      = "/v1/encode/raw"
	PathEncodeRawBatch = "/v1/encode/raw/batch"
	PathEncodeUpdate   = "/v1/encode/{record_id}"

	PathRecallQuery     = "/v1/recall/query"
	PathRecallRaw       = "/v1/recall/raw"
	PathRecallAssociate = "/v1/recall/associate/{record_id}"
	PathRecallTimeline  = "/v1/recall/timeline"
	PathRecallGraph     = "/v1/recall/graph"

	PathConsolidate  = "/v1/lifecycle/consolidate"
	PathExport       = "/v1/lifecycle/export"
	PathExportStream = "/v1/lifecycle/export/stream"
	PathImport       = "/v1/lifecycle/import"
	PathImportStream = "/v1/lifecycle/import/stream"
	PathDreamTick    = "/v1/lifecycle/dream-tick"
	PathDecayTick    = "/v1/lifecycle/decay-tick"
	PathMode         = "/v1/lifecycle/mode"
	PathForget       = "/v1/lifecycle/forget"

	PathStats         = "/v1/introspect/stats"
	PathRecord        = "/v1/introspect/record/{record_id}"
	PathDecayForecast = "/v1/introspect/decay-forecast"
	PathEvolution     = "/v1/introspect/evolution"

	// PathNamespaces lists the namespaces the caller's key may see;
	// PathNamespace (DELETE) drops one. memsvc's own routes.
	PathNamespaces = "/v1/namespaces"
	PathNamespace  = "/v1/namespaces/{namespace}"
)

// Path parameters of the templates above.
const (
	ParamRecordID  = "record_id"
	ParamNamespace = "namespace"
)

// RecordPath fills the {record_id} segment of a route template.
func RecordPath(template string, id memory.ID) string {
	return strings.Replace(template, "{"+ParamRecordID+"}", id.String(), 1)
}

// NamespacePath is the path of namespace name (PathNamespace). name is
// path-escaped; a valid name needs no escaping.
func NamespacePath(name string) string {
	return strings.Replace(PathNamespace, "{"+ParamNamespace+"}", url.PathEscape(name), 1)
}

// Query parameters.
const (
	// GET /v1/introspect/record/{record_id}: accepted ("true" or "false")
	// and ignored; the full record is always returned.
	QueryIncludeHistory      = "include_history"
	QueryIncludeAssociations = "include_associations"
	QueryIncludeVersions     = "include_versions"

	// POST /v1/lifecycle/import/stream.
	QueryArchiveID          = "archive_id"
	QueryStrategy           = "strategy"
	QueryConflictResolution = "conflict_resolution"
	// QueryPreserveNamespaces "true" is ImportRequest.PreserveNamespaces.
	QueryPreserveNamespaces = "preserve_namespaces"

	// POST /v1/recall/query: "brief" asks for the brief answer
	// (memory.RecallBrief), "full" (or absent) for the full one.
	QueryView = "view"

	// QueryBinary, on every /v1 route that answers JSON (all but the
	// streaming export), selects how the answer writes binary values
	// (content data, archives) and embeddings. Absent, they are the CMP
	// arrays (memory.BinaryArrays): integers 0-255 and
	// numbers. BinaryBase64 asks for memory.BinaryBase64: each bytes value
	// a standard padded base64 string, each embedding a standard padded
	// base64 string of its little-endian IEEE-754 binary32 values. Any
	// other value is refused (400 VALIDATION_ERROR). Routes whose answers
	// hold no such values answer the same either way. Requests need no
	// parameter: servers read both forms in every body.
	QueryBinary = "binary"

	// GET /v1/introspect/stats: "true" totals the statistics of every
	// namespace, for an API key that may see them all; "false" (or
	// absent) reports the namespace of the request.
	QueryAllNamespaces = "all_namespaces"
)

// BinaryBase64 is the one value of QueryBinary.
const BinaryBase64 = "base64"

// Header and trailer names.
const (
	HeaderRequestID  = "X-Request-Id"
	HeaderRetryAfter = "Retry-After"

	// HeaderNamespace names the namespace a request acts in
	// (memory.ValidateNamespace); without it the request acts in the
	// default namespace, or in the only namespace its API key is bound
	// to. See Route.Namespace for the routes that do not read it.
	HeaderNamespace = "X-Memsvc-Namespace"

	// HeaderBinary, on every answer of a server that reads binary
	// values and embeddings in base64 in every request body and writes
	// them so on request (QueryBinary), holds BinaryBase64. Clients send
	// base64 only to a server that said so: an older one reads base64
	// bytes but not base64 embeddings, an upstream one neither.
	HeaderBinary = "X-Memsvc-Binary"

	// HeaderDecryptionKey carries the passphrase of an encrypted archive
	// sent to the streaming import route.
	HeaderDecryptionKey = "Memsvc-Decryption-Key"

	// Trailers of the streaming export route: the ExportResponse fields.
	TrailerArchiveID   = "Memsvc-Archive-Id"
	TrailerSizeBytes   = "Memsvc-Size-Bytes"
	TrailerRecordCount = "Memsvc-Record-Count"
	TrailerChecksum    = "Memsvc-Checksum"
)

// Media types.
const (
	ContentTypeJSON    = "application/json"
	ContentTypeArchive = "application/octet-stream"
)

// Route is one route of the API.
type Route struct {
	// Op names the operation ("encode.store"); empty for the probes.
	Op     string
	Method string
	// Path is the route template.
	Path string
	// Status is the status of a successful answer: 200 with a JSON body
	// or 204 without one.
	Status int
	// Body reports whether the request carries a body (JSON, or the raw
	// archive for the streaming import).
	Body bool
	// Protected routes need the API key when authentication is on and are
	// rate limited; the health and readiness probes are not.
	Protected bool
	// Namespace says which namespace a protected route acts in, and so
	// which API keys may call it.
	Namespace Reach
}

// Reach is what a protected route acts on, as far as namespaces go. The
// zero value, InHeader, is that of every CMP operation, so a new route is
// confined to one namespace unless it says otherwise.
type Reach uint8

// The values of Reach.
const (
	// InHeader routes act in the namespace named by HeaderNamespace (see
	// there for the default). A key that may not use it gets 403
	// FORBIDDEN.
	InHeader Reach = iota
	// InPath routes act in the namespace named by the {namespace} path
	// segment; HeaderNamespace is not read.
	InPath
	// KeyWide routes answer for every namespace the caller's key may see
	// (GET /v1/namespaces); HeaderNamespace is not read.
	KeyWide
	// ServerWide routes report on the whole server (/metrics, whose
	// series have no namespace label): only a key that may see every
	// namespace may call them.
	ServerWide
)

// String names the reach as the API reference does.
func (r Reach) String() string {
	switch r {
	case InHeader:
		return "header"
	case InPath:
		return "path"
	case KeyWide:
		return "key's namespaces"
	case ServerWide:
		return "all namespaces"
	}
	return "unknown"
}

// Routes returns every route, static paths before the templates that could
// also match them.
func Routes() []Route {
	post := func(op, path string) Route {
		return Route{Op: op, Method: http.MethodPost, Path: path, Status: http.StatusOK, Body: true, Protected: true}
	}
	get := func(op, path string) Route {
		return Route{Op: op, Method: http.MethodGet, Path: path, Status: http.StatusOK, Protected: true}
	}
	return []Route{
		{Method: http.MethodGet, Path: PathHealth, Status: http.StatusOK},
		{Method: http.MethodGet, Path: PathReadiness, Status: http.StatusOK},
		{Op: "metrics", Method: http.MethodGet, Path: PathMetrics, Status: http.StatusOK, Protected: true, Namespace: ServerWide},

		post("encode.store", PathEncode),
		post("encode.batch", PathEncodeBatch),
		post("encode.store_raw", PathEncodeRaw),
		post("encode.batch_raw", PathEncodeRawBatch),
		{Op: "encode.update", Method: http.MethodPatch, Path: PathEncodeUpdate, Status: http.StatusNoContent, Body: true, Protected: true},

		post("recall.query", PathRecallQuery),
		post("recall.raw_query", PathRecallRaw),
		post("recall.associate", PathRecallAssociate),
		post("recall.timeline", PathRecallTimeline),
		post("recall.graph", PathRecallGraph),

		post("lifecycle.consolidate", PathConsolidate),
		post("lifecycle.export", PathExport),
		post("lifecycle.export", PathExportStream),
		post("lifecycle.import", PathImport),
		post("lifecycle.import", PathImportStream),
		post("lifecycle.dream_tick", PathDreamTick),
		post("lifecycle.decay_tick", PathDecayTick),
		{Op: "lifecycle.set_mode", Method: http.MethodPut, Path: PathMode, Status: http.StatusNoContent, Body: true, Protected: true},
		{Op: "lifecycle.forget", Method: http.MethodDelete, Path: PathForget, Status: http.StatusOK, Body: true, Protected: true},

		get("introspect.stats", PathStats),
		get("introspect.record", PathRecord),
		post("introspect.decay_forecast", PathDecayForecast),
		get("introspect.evolution", PathEvolution),

		{Op: "namespaces.list", Method: http.MethodGet, Path: PathNamespaces, Status: http.StatusOK, Protected: true, Namespace: KeyWide},
		{Op: "namespaces.drop", Method: http.MethodDelete, Path: PathNamespace, Status: http.StatusOK, Body: true, Protected: true, Namespace: InPath},
	}
}

// Status is the one table from CMP error codes to HTTP statuses. Unknown
// codes are 500.
func Status(code memory.Code) int {
	switch code {
	case memory.CodeNotFound:
		return http.StatusNotFound
	case memory.CodeContentTooLarge:
		return http.StatusRequestEntityTooLarge
	case memory.CodeValidation, memory.CodeStoreInvalid, memory.CodeModalityUnsupported,
		memory.CodeForgetUnconfirmed, memory.CodeVersionMismatch:
		return http.StatusBadRequest
	case memory.CodeUnauthorized:
		return http.StatusUnauthorized
	case memory.CodeRateLimited:
		return http.StatusTooManyRequests
	case memory.CodeImportConflict:
		return http.StatusConflict
	case memory.CodeWorkingMemoryFull, memory.CodeDecayEngineBusy, memory.CodeConsolidationInProgress:
		return http.StatusServiceUnavailable
	case memory.CodeInsufficientStorage:
		return http.StatusInsufficientStorage
	case memory.CodeForbidden:
		return http.StatusForbidden
	default: // EXPORT_FAILED, INTERNAL_ERROR and anything unknown
		return http.StatusInternalServerError
	}
}

// ExportArchiveResponse is the answer of POST /v1/lifecycle/export: the
// ExportResponse fields and the archive itself as an integer array (or,
// with QueryBinary, a base64 string).
type ExportArchiveResponse struct {
	memory.ExportResponse
	ArchiveData memory.Bytes `json:"archive_data"`
}

// AppendJSONForm appends the answer to dst as json.Marshal writes it, with
// the archive in form f.
func (r *ExportArchiveResponse) AppendJSONForm(dst []byte, f memory.BinaryForm) ([]byte, error) {
	var b []byte
	var err error
	if f == memory.BinaryBase64 {
		// encoding/json writes []byte in standard padded base64.
		b, err = json.Marshal(struct {
			memory.ExportResponse
			ArchiveData []byte `json:"archive_data"`
		}{r.ExportResponse, orEmpty(r.ArchiveData)})
	} else {
		b, err = json.Marshal(r)
	}
	return append(dst, b...), err
}

// orEmpty returns b, or an empty slice for nil: the integer-array form
// writes both as [], so the base64 form writes both as "".
func orEmpty(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// Health is the body of /health and /readiness.
type Health struct {
	// Status is "ok" (/health), "ready" or "not_ready" (/readiness).
	Status string `json:"status"`
	// Reason says why the server is not ready.
	Reason string `json:"reason,omitempty"`
	// Detail lists what the server wants an operator to know, ready or
	// not: disk space below the floor (writes refused, reads go on),
	// records quarantined as unreadable.
	Detail []string `json:"detail,omitempty"`
}

// Values of Health.Status.
const (
	HealthOK       = "ok"
	HealthReady    = "ready"
	HealthNotReady = "not_ready"
)
