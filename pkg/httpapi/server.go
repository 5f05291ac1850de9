// Package httpapi serves any memory.Service over HTTP: the CMP API of
// pkg/wire, wire-compatible with upstream clients, plus health, readiness
// and Prometheus metrics.
//
// # Request pipeline
//
// Outermost first:
//
//  1. Request id: x-request-id is echoed unchanged when present, otherwise a
//     random UUID v4 is generated; every response carries it. It is copied
//     into error envelopes only when it is a UUID.
//  2. Metrics, debug logging and panic recovery (a panic is a 500
//     INTERNAL_ERROR; the stack goes to the log).
//  3. CORS, when Options.CORSOrigins is not empty. Pre-flights are answered
//     here, before authentication and rate limiting.
//  4. Routing (gorilla/mux). On the protected routes (/v1/* and /metrics):
//     admission (authentication and rate limiting, below), then
//     confinement to a namespace (namespace.go: the route's wire.Reach
//     says which; a key that may not use it gets 403 FORBIDDEN), then the
//     handler. /health and /readiness are neither authenticated nor rate
//     limited.
//
// # Authentication and rate limiting
//
// Admission follows access.Limiter.Admit, shared with the gRPC transport:
//
//   - An authenticated request spends a token of its API key's bucket
//     (kept as a SHA-256 digest, never the key), so traffic from other
//     clients cannot drain a legitimate client's bucket. Without
//     authentication a request spends from its address's bucket, except
//     one from this host (a loopback peer that no proxy speaks for), which
//     is not limited unless RateLimit.LimitLoopback says so.
//   - A request that fails authentication (no, malformed or wrong key)
//     spends a token of its client address's bucket and answers 401, or
//     429 RATE_LIMITED (with Retry-After) once that bucket is empty.
//
// A valid key is served from its own bucket even when its address is out
// of tokens because of failures: clients behind one NAT or proxy must not
// be locked out by a neighbour sending bad keys. Limiting failures bounds
// their load, not guessing; long random keys do that.
//
// Forwarded headers name the client address only when the TCP peer is
// inside Options.TrustedProxyCIDRs; behind a reverse proxy whose network is
// not listed, every client shares the proxy's address, and so one budget
// for failed attempts. With Options.Gate the buckets are shared with the
// gRPC transport, which names addresses the same way (access.AddressKey).
//
// # Decisions where the upstream contract is silent or buggy
//
//   - Over-size bodies answer 413 CONTENT_TOO_LARGE (upstream: 400).
//   - record_id in the body of PATCH /v1/encode/{record_id} and POST
//     /v1/recall/associate/{record_id} is optional; the path id always wins.
//   - A malformed include_* query value on GET /v1/introspect/record/{id}
//     answers a 400 VALIDATION_ERROR envelope (upstream: plain text).
//   - An unknown path answers 404 and a known path with the wrong method
//     405 with an Allow header, each with a VALIDATION_ERROR envelope that
//     names the route (upstream sends empty bodies; the code is not
//     RECORD_NOT_FOUND, which would claim a record is missing, so a client
//     still tells "no such route" from "no such record": wire.IsNoRoute).
//     On protected paths authentication and rate limiting come first, as
//     upstream.
//   - GET routes also answer HEAD. Paths are not cleaned or redirected.
//   - Explicit JSON null is accepted for every field and means "absent",
//     including non-nullable fields that have a default. Duplicate object
//     keys are not rejected (the last one wins). A body must be a JSON
//     object; trailing data after it is rejected.
//   - Errors that are not *memory.Error answer 500 INTERNAL_ERROR with a
//     fixed message; the cause is logged with the request id. A
//     *memory.Error keeps its code and message, with one exception: 401 is
//     reserved for this server's own authentication, so a service that
//     reports UNAUTHORIZED (a store it cannot decrypt, an upstream server
//     refusing a proxy's key) answers 500 INTERNAL_ERROR and is logged.
//   - A streaming export that fails after its first byte aborts the
//     connection (no terminating chunk, no trailers), so neither curl nor
//     pkg/client can take a truncated archive for a whole one.
//   - CORS origin "*" reflects the caller's origin (except the opaque
//     origin "null") and allows credentials; an explicit list matches
//     origins exactly and does not allow credentials. Pre-flights echo
//     Access-Control-Request-Headers, so browsers may send Authorization.
//   - Streaming export and import routes (pkg/wire) carry archives as raw
//     bytes, because the JSON integer arrays inflate them about 3.5 times.
//   - ?binary=base64 (wire.QueryBinary) on any /v1 route writes the
//     answer's bytes and embeddings in base64 (memory.BinaryBase64); the
//     default stays the CMP arrays. Request bodies are read in either
//     form without a parameter.
package httpapi

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"memsvc.dev/memsvc/pkg/access"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/metrics"
	"memsvc.dev/memsvc/pkg/wire"
)

// Defaults of Options.
const (
	DefaultMaxBodyBytes   = 64 << 20
	DefaultMaxImportBytes = 1 << 30
	// DefaultMaxResponseBytes bounds a JSON answer unless
	// Options.MaxResponseBytes says otherwise.
	DefaultMaxResponseBytes = 64 << 20
	DefaultReadyTimeout     = 2 * time.Second
)

// Options configure a Server. The zero value serves without
// authentication, rate limiting, CORS or metrics.
type Options struct {
	// Logger receives request failures (with their cause) and, at debug
	// level, one line per request. Nil discards.
	Logger *slog.Logger

	// AuthEnabled requires "Authorization: Bearer <key>" with one of
	// APIKeys on /v1/* and /metrics. APIKeys are ignored when it is false;
	// when it is true at least one key is required and none may be blank.
	// These keys may use every namespace; keys confined to namespaces
	// come in a Gate's keyring (access.NewScopedKeyring).
	AuthEnabled bool
	APIKeys     []string

	// RateLimit limits requests to /v1/* and /metrics per API key, and per
	// client address without authentication and for failed attempts.
	RateLimit RateLimit
	// Gate, when set, admits requests instead of one built from
	// AuthEnabled, APIKeys and RateLimit (which are then ignored). The
	// server passes the same Gate to the HTTP and gRPC transports, so a
	// client's rate is shared between them rather than granted once per
	// transport, and a configuration reload changes both at once.
	Gate *access.Gate
	// TrustedProxyCIDRs are the networks ("10.0.0.0/8") of reverse proxies
	// whose X-Forwarded-For and X-Real-IP headers are believed.
	TrustedProxyCIDRs []string

	// CORSOrigins are the browser origins allowed to call the API, matched
	// exactly; "*" allows any origin (reflected, with credentials). Empty
	// sends no CORS headers.
	CORSOrigins []string

	// MaxBodyBytes bounds JSON request bodies; 0 selects 64 MiB. Larger
	// bodies answer 413.
	MaxBodyBytes int64
	// MaxImportBytes bounds the archive of the streaming import route; 0
	// selects 1 GiB.
	MaxImportBytes int64
	// MaxResponseBytes bounds a JSON answer; 0 selects 64 MiB. The
	// service stops collecting records once their estimated size passes
	// it (memory.AnswerBudget) and the encoded answer is checked too; an
	// answer over it is 413 CONTENT_TOO_LARGE telling the client to ask
	// for fewer records. Archives (the export routes) are not answers in
	// this sense and are not bounded by it.
	MaxResponseBytes int64

	// MetricsEnabled serves GET /metrics from Gatherer (required then).
	MetricsEnabled bool
	Gatherer       prometheus.Gatherer
	// Metrics records the HTTP series; nil records nothing. Instrumenting
	// the service (encode and recall series) is the caller's business:
	// pass Metrics.Instrument(svc) as the service.
	Metrics *metrics.Metrics

	// Ready reports whether the service can answer; /readiness calls it
	// with a context bounded by ReadyTimeout (0 selects 2 s). Nil calls
	// the service's Stats, which is cheap. An error that is (or wraps) a
	// *NotReadyError gives the client its reason; any other is reported
	// generically.
	Ready        func(ctx context.Context) error
	ReadyTimeout time.Duration
	// ReadyDetail, when set, lists conditions a ready server reports
	// beside "ready" (disk space low, records quarantined): the server
	// still serves, but an operator should look. Each is a phrase fit
	// for any caller.
	ReadyDetail func() []string

	// Now is the clock of the limiter built from RateLimit; nil selects
	// time.Now.
	Now func() time.Time
	// NewRequestID makes request ids for requests that bring none; nil
	// makes random UUID v4s.
	NewRequestID func() string
}

// RateLimit is a token bucket per client: Burst requests at once, refilled
// at RequestsPerSecond. RequestsPerSecond <= 0 disables rate limiting.
type RateLimit = access.RateLimit

// Server is the HTTP handler. It is safe for concurrent use.
type Server struct {
	svc          memory.Service
	log          *slog.Logger
	metrics      *metrics.Metrics
	gate         *access.Gate
	trusted      []netip.Prefix
	cors         *corsPolicy
	maxBody      int64
	maxImport    int64
	maxResponse  int64
	ready        func(ctx context.Context) error
	readyTimeout time.Duration
	readyDetail  func() []string
	newID        func() string
	router       *mux.Router
	answers      answerPool
}

var _ http.Handler = (*Server)(nil)

// New returns a Server for svc. It fails on options that cannot work: auth
// without keys, a blank key, a malformed CIDR, metrics without a gatherer.
func New(svc memory.Service, opts Options) (*Server, error) {
	if svc == nil {
		return nil, errors.New("httpapi: a service is required")
	}
	s := &Server{
		svc:          svc,
		log:          opts.Logger,
		metrics:      opts.Metrics,
		maxBody:      opts.MaxBodyBytes,
		maxImport:    opts.MaxImportBytes,
		maxResponse:  opts.MaxResponseBytes,
		ready:        opts.Ready,
		readyTimeout: opts.ReadyTimeout,
		readyDetail:  opts.ReadyDetail,
		newID:        opts.NewRequestID,
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	if s.maxImport <= 0 {
		s.maxImport = DefaultMaxImportBytes
	}
	if s.maxResponse <= 0 {
		s.maxResponse = DefaultMaxResponseBytes
	}
	if s.ready == nil {
		s.ready = func(ctx context.Context) error {
			_, err := svc.Stats(ctx)
			return err
		}
	}
	if s.readyTimeout <= 0 {
		s.readyTimeout = DefaultReadyTimeout
	}
	if s.newID == nil {
		s.newID = newUUIDv4
	}
	s.gate = opts.Gate
	if s.gate == nil {
		p := access.Policy{Rate: opts.RateLimit}
		if opts.AuthEnabled {
			k, err := access.NewKeyring(opts.APIKeys)
			if err != nil {
				return nil, fmt.Errorf("httpapi: %w", err)
			}
			p.Keys = k
		}
		s.gate = access.NewGate(p, opts.Now)
	}
	for _, c := range opts.TrustedProxyCIDRs {
		p, err := netip.ParsePrefix(strings.TrimSpace(c))
		if err != nil {
			return nil, fmt.Errorf("trusted proxy network %q: want CIDR form such as 10.0.0.0/8: %w", c, err)
		}
		s.trusted = append(s.trusted, p.Masked())
	}
	s.cors = newCORSPolicy(opts.CORSOrigins)
	if opts.MetricsEnabled && opts.Gatherer == nil {
		return nil, errors.New("httpapi: metrics enabled without a gatherer")
	}
	s.router = s.buildRouter(opts)
	return s, nil
}

// buildRouter registers every route of wire.Routes. Each path gets its
// method routes and then a catch-all that answers 405 with Allow, behind the
// same authentication and rate limiting.
func (s *Server) buildRouter(opts Options) *mux.Router {
	r := mux.NewRouter()
	r.SkipClean(true)
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeStatus(w, r, http.StatusNotFound, wire.NoRoute(r.Method, r.URL.EscapedPath()))
	})
	var order []string
	byPath := map[string][]wire.Route{}
	for _, rt := range wire.Routes() {
		if rt.Path == wire.PathMetrics && !opts.MetricsEnabled {
			continue
		}
		if _, ok := byPath[rt.Path]; !ok {
			order = append(order, rt.Path)
		}
		byPath[rt.Path] = append(byPath[rt.Path], rt)
	}
	for _, path := range order {
		var allow []string
		protected := false
		for _, rt := range byPath[path] {
			methods := []string{rt.Method}
			if rt.Method == http.MethodGet {
				methods = append(methods, http.MethodHead)
			}
			allow = append(allow, methods...)
			protected = protected || rt.Protected
			h := s.handler(rt, opts)
			if rt.Protected {
				h = s.confine(rt.Namespace, h)
			}
			r.Handle(path, s.guard(rt.Path, rt.Protected, h)).Methods(methods...)
		}
		allowed := strings.Join(allow, ", ")
		r.Handle(path, s.guard(path, protected, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allowed)
			s.writeStatus(w, r, http.StatusMethodNotAllowed, wire.WrongMethod(r.Method, path, allowed))
		})))
	}
	return r
}

// handler returns the handler of one route.
func (s *Server) handler(rt wire.Route, opts Options) http.Handler {
	switch rt.Path {
	case wire.PathHealth:
		return http.HandlerFunc(s.health)
	case wire.PathReadiness:
		return http.HandlerFunc(s.readiness)
	case wire.PathMetrics:
		return promhttp.HandlerFor(opts.Gatherer, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	case wire.PathExportStream:
		return http.HandlerFunc(s.exportStream)
	}
	f := s.operation(rt.Path)
	if f == nil {
		// wire.Routes and operation disagree: a programming error that
		// every test catches at once.
		panic("httpapi: no handler for " + rt.Method + " " + rt.Path)
	}
	return s.api(rt.Status, f)
}

// guard labels the request with its route template and, on protected
// routes, authenticates and rate limits it and records the caller's
// identity for confine.
func (s *Server) guard(template string, protected bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rec, ok := w.(*recorder); ok {
			rec.route = template
		}
		if protected {
			// The order of authentication and rate limiting is
			// access.Limiter.Admit's; the package comment tells it.
			id, err := s.gate.Admit(func() access.Caller { return s.caller(r) }, r.Header.Get("Authorization"), msgMissingAuth)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			r = withIdentity(r, id)
		}
		next.ServeHTTP(w, r)
	})
}

type requestIDKey struct{}

// requestID returns the request id of r: the client's x-request-id or the
// generated one.
func requestID(r *http.Request) string {
	id, _ := r.Context().Value(requestIDKey{}).(string)
	return id
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := r.Header.Get(wire.HeaderRequestID)
	if id == "" {
		id = s.newID()
	}
	w.Header().Set(wire.HeaderRequestID, id)
	w.Header().Set(wire.HeaderBinary, wire.BinaryBase64)
	r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
	rec := &recorder{ResponseWriter: w}
	defer func() {
		v := recover()
		if v != nil && v != http.ErrAbortHandler {
			s.log.Error("handler panicked", "method", r.Method, "path", r.URL.Path, "request_id", id, "panic", v, "stack", string(debug.Stack()))
			if !rec.wrote {
				s.writeError(rec, r, fmt.Errorf("panic: %v", v))
			}
		}
		s.observe(rec, r, time.Since(start))
		if v == http.ErrAbortHandler {
			panic(v)
		}
	}()
	if s.cors != nil && s.cors.handle(rec, r) {
		return
	}
	s.router.ServeHTTP(rec, r)
}

// observe records the HTTP metrics and the debug log line of a request.
func (s *Server) observe(rec *recorder, r *http.Request, d time.Duration) {
	debugOn := s.log.Enabled(r.Context(), slog.LevelDebug)
	if s.metrics == nil && !debugOn {
		return
	}
	route := rec.route
	if route == "" {
		route = s.template(r)
	}
	status := rec.statusCode()
	s.metrics.ObserveHTTP(r.Method, route, status, d)
	if debugOn {
		s.log.Debug("http request", "method", r.Method, "route", route, "status", status, "duration", d, "request_id", requestID(r))
	}
}

// template finds the route template of a request no route handler saw
// (CORS pre-flights, 404s).
func (s *Server) template(r *http.Request) string {
	var m mux.RouteMatch
	if s.router.Match(r, &m) && m.Route != nil && m.MatchErr == nil {
		if t, err := m.Route.GetPathTemplate(); err == nil {
			return t
		}
	}
	return metrics.PathUnknown
}

// recorder remembers the status and route of a response.
type recorder struct {
	http.ResponseWriter
	status int
	wrote  bool
	route  string
}

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if !r.wrote {
		r.status, r.wrote = http.StatusOK, true
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the real writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (r *recorder) statusCode() int {
	if !r.wrote {
		return http.StatusOK
	}
	return r.status
}

// newUUIDv4 returns a random version 4 UUID.
func newUUIDv4() string {
	var id memory.ID
	_, _ = rand.Read(id[:]) // crypto/rand.Read does not fail
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	return id.String()
}
