package grpcapi

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	"memsvc.dev/memsvc/pkg/access"
	pb "memsvc.dev/memsvc/pkg/grpcapi/memsvcpb"
	"memsvc.dev/memsvc/pkg/memory"
)

// Defaults of Options.
const (
	DefaultMaxRecvMsgBytes = 64 << 20
	DefaultMaxImportBytes  = 1 << 30
	// DefaultMaxResponseBytes bounds an answer unless
	// Options.MaxResponseBytes says otherwise.
	DefaultMaxResponseBytes = 64 << 20
	DefaultShutdownTimeout  = 10 * time.Second
)

// ServiceName is the full name of the CMP service, as health checks and
// reflection know it.
const ServiceName = "memsvc.v1.MemsvcService"

// Options configure a Server. The zero value serves plaintext without
// authentication or rate limiting.
type Options struct {
	// Logger receives internal failures with their cause, panics, and at
	// debug level one line per call. Nil discards.
	Logger *slog.Logger

	// AuthEnabled requires "authorization: Bearer <key>" metadata with one
	// of APIKeys on every call except health checks and reflection.
	// APIKeys are ignored when it is false; when it is true at least one
	// key is required and none may be blank. These keys may use every
	// namespace; keys confined to namespaces come in a Gate's keyring
	// (access.NewScopedKeyring).
	AuthEnabled bool
	APIKeys     []string

	// RateLimit limits calls per API key, and per client address without
	// authentication and for failed attempts, as the HTTP API does.
	RateLimit RateLimit
	// Gate, when set, admits calls instead of one built from AuthEnabled,
	// APIKeys and RateLimit (which are then ignored). The server passes
	// the same Gate to the gRPC and HTTP transports, so a client's rate is
	// shared between them rather than granted once per transport, and a
	// configuration reload changes both at once.
	Gate *access.Gate

	// TLSCertFile and TLSKeyFile are PEM files; both or neither. Without
	// them the server speaks plaintext (h2c).
	TLSCertFile string
	TLSKeyFile  string

	// MaxRecvMsgBytes bounds one incoming message (a unary request or one
	// import chunk); 0 selects 64 MiB, the HTTP API's body limit, which
	// fits the largest content block (50 MiB of audio). Larger messages
	// fail with RESOURCE_EXHAUSTED.
	MaxRecvMsgBytes int
	// MaxImportBytes bounds the archive an import stream carries; 0
	// selects 1 GiB.
	MaxImportBytes int64
	// MaxResponseBytes bounds one answer message; 0 selects 64 MiB. The
	// service stops collecting records once their estimated size (that of
	// the JSON answer, larger than the protobuf one) passes it
	// (memory.AnswerBudget), answering INVALID_ARGUMENT with reason
	// CONTENT_TOO_LARGE; it is also the largest message the server sends.
	MaxResponseBytes int

	// ShutdownTimeout bounds the graceful stop of Serve; calls still
	// running then are cut off. 0 selects 10 s.
	ShutdownTimeout time.Duration

	// Now is the clock of the limiter built from RateLimit; nil selects
	// time.Now.
	Now func() time.Time
}

// RateLimit is a token bucket per client: Burst calls at once, refilled at
// RequestsPerSecond. RequestsPerSecond <= 0 disables rate limiting.
type RateLimit = access.RateLimit

// Server serves a memory.Service over gRPC, with the standard health
// service and server reflection.
type Server struct {
	svc             memory.Service
	log             *slog.Logger
	gate            *access.Gate
	maxImport       int64
	maxResponse     int
	shutdownTimeout time.Duration
	grpc            *grpc.Server
	health          *health.Server
	served          atomic.Bool
	// cert is the TLS certificate served; nil without TLS.
	cert atomic.Pointer[tls.Certificate]
}

// NewServer returns a Server for svc. It fails on options that cannot
// work: authentication without keys, a blank key, half a TLS pair, or PEM
// files that do not load.
func NewServer(svc memory.Service, opts Options) (*Server, error) {
	if svc == nil {
		return nil, errors.New("grpcapi: a service is required")
	}
	s := &Server{
		svc:             svc,
		log:             opts.Logger,
		maxImport:       opts.MaxImportBytes,
		shutdownTimeout: opts.ShutdownTimeout,
		health:          health.NewServer(),
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.maxImport <= 0 {
		s.maxImport = DefaultMaxImportBytes
	}
	s.maxResponse = opts.MaxResponseBytes
	if s.maxResponse <= 0 {
		s.maxResponse = DefaultMaxResponseBytes
	}
	if s.shutdownTimeout <= 0 {
		s.shutdownTimeout = DefaultShutdownTimeout
	}
	s.gate = opts.Gate
	if s.gate == nil {
		p := access.Policy{Rate: opts.RateLimit}
		if opts.AuthEnabled {
			k, err := access.NewKeyring(opts.APIKeys)
			if err != nil {
				return nil, fmt.Errorf("grpcapi: %w", err)
			}
			p.Keys = k
		}
		s.gate = access.NewGate(p, opts.Now)
	}
	maxRecv := opts.MaxRecvMsgBytes
	if maxRecv <= 0 {
		maxRecv = DefaultMaxRecvMsgBytes
	}
	serverOpts := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(maxRecv),
		grpc.MaxSendMsgSize(s.maxResponse),
		grpc.ChainUnaryInterceptor(s.unaryInterceptor),
		grpc.ChainStreamInterceptor(s.streamInterceptor),
	}
	switch {
	case opts.TLSCertFile != "" && opts.TLSKeyFile != "":
		cert, err := loadKeyPair(opts.TLSCertFile, opts.TLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("grpcapi: %w", err)
		}
		s.cert.Store(cert)
		// Each handshake takes the certificate in force then, so
		// ReloadTLS changes it for new connections without a restart.
		serverOpts = append(serverOpts, grpc.Creds(credentials.NewTLS(&tls.Config{
			GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return s.cert.Load(), nil },
			MinVersion:     tls.VersionTLS12,
		})))
	case opts.TLSCertFile != "" || opts.TLSKeyFile != "":
		return nil, errors.New("grpcapi: TLS needs both a certificate file and a key file")
	}
	s.grpc = grpc.NewServer(serverOpts...)
	pb.RegisterMemsvcServiceServer(s.grpc, &service{s: s})
	healthpb.RegisterHealthServer(s.grpc, healthService{s.health})
	reflection.Register(s.grpc)
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	s.health.SetServingStatus(ServiceName, healthpb.HealthCheckResponse_SERVING)
	return s, nil
}

// BeginShutdown makes the health service report NOT_SERVING, for the
// server and for the CMP service, from now on, so load balancers and
// clients watching health stop sending calls while running ones finish.
// Everything else keeps working. Serve calls it when its context ends.
func (s *Server) BeginShutdown() { s.health.Shutdown() }

// Serve answers calls on ln until ctx ends, then reports NOT_SERVING,
// stops taking new calls and waits for running ones up to the shutdown
// timeout, after which it closes every connection. It returns nil after
// such a shutdown and the error of the listener otherwise. A Server serves
// once; Serve closes ln.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if !s.served.CompareAndSwap(false, true) {
		_ = ln.Close()
		return errors.New("grpcapi: Serve called twice")
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- s.grpc.Serve(ln) }()
	select {
	case err := <-serveErr:
		s.grpc.Stop()
		return fmt.Errorf("grpc serve: %w", err)
	case <-ctx.Done():
	}
	s.BeginShutdown()
	stopped := make(chan struct{})
	go func() {
		s.grpc.GracefulStop()
		close(stopped)
	}()
	timer := time.NewTimer(s.shutdownTimeout)
	defer timer.Stop()
	select {
	case <-stopped:
	case <-timer.C:
		s.log.Warn("gRPC calls still running at the shutdown deadline were cut off", "timeout", s.shutdownTimeout)
		s.grpc.Stop()
		<-stopped
	}
	if err := <-serveErr; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return fmt.Errorf("grpc serve: %w", err)
	}
	return nil
}

// exempt reports whether a method needs neither a key nor a token: the
// health service and reflection, as /health over HTTP.
func exempt(fullMethod string) bool {
	return strings.HasPrefix(fullMethod, "/grpc.health.v1.Health/") ||
		strings.HasPrefix(fullMethod, "/grpc.reflection.v1.ServerReflection/") ||
		strings.HasPrefix(fullMethod, "/grpc.reflection.v1alpha.ServerReflection/")
}

// admit authenticates and rate limits a call through access.Limiter.Admit,
// as the HTTP transport does: an authenticated call spends from its key's
// bucket, a failed one from its address's. Then it confines the call to
// its namespace (confine). It returns the context the handler runs with.
func (s *Server) admit(ctx context.Context, fullMethod string) (context.Context, error) {
	if exempt(fullMethod) {
		return ctx, nil
	}
	id, err := s.gate.Admit(func() access.Caller {
		a := peerAddr(ctx)
		return access.Caller{Addr: a, Local: a.IsLoopback()}
	}, credential(ctx), msgMissingAuth)
	if err != nil {
		return nil, s.status(ctx, err)
	}
	confined, err := confine(ctx, fullMethod, id)
	if err != nil {
		return nil, s.status(ctx, err)
	}
	return confined, nil
}

func (s *Server) unaryInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	start := time.Now()
	defer func() {
		if v := recover(); v != nil {
			err = s.panicked(ctx, info.FullMethod, v)
		}
		s.debugLog(ctx, info.FullMethod, start, err)
	}()
	ctx, err = s.admit(ctx, info.FullMethod)
	if err != nil {
		return nil, err
	}
	return handler(memory.WithAnswerLimit(ctx, int64(s.maxResponse)), req)
}

func (s *Server) streamInterceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
	ctx := ss.Context()
	start := time.Now()
	defer func() {
		if v := recover(); v != nil {
			err = s.panicked(ctx, info.FullMethod, v)
		}
		s.debugLog(ctx, info.FullMethod, start, err)
	}()
	confined, err := s.admit(ctx, info.FullMethod)
	if err != nil {
		return err
	}
	return handler(srv, &confinedStream{ServerStream: ss, ctx: confined})
}

// panicked logs a recovered panic and answers INTERNAL; the server goes
// on.
func (s *Server) panicked(ctx context.Context, method string, v any) error {
	s.log.LogAttrs(ctx, slog.LevelError, "grpc handler panicked", slog.String("method", method), slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
	return status.Error(codes.Internal, msgInternal)
}

func (s *Server) debugLog(ctx context.Context, method string, start time.Time, err error) {
	if !s.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	s.log.LogAttrs(ctx, slog.LevelDebug, "grpc request", slog.String("method", method),
		slog.String("code", status.Code(err).String()), slog.Duration("duration", time.Since(start)))
}
