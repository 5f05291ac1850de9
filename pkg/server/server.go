// Package server assembles a running memsvc: configuration, the audit
// log, the data directory, the engine, metrics, the HTTP API and the
// background loops. Run starts everything and blocks until its context is
// cancelled, then shuts down in order within a bounded time.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"memsvc.dev/memsvc/pkg/access"
	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/config"
	"memsvc.dev/memsvc/pkg/engine"
	"memsvc.dev/memsvc/pkg/grpcapi"
	"memsvc.dev/memsvc/pkg/httpapi"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/metrics"
	"memsvc.dev/memsvc/pkg/store"
)

// Options are what the command layer provides besides the configuration.
type Options struct {
	// Logger for everything the server logs. Nil discards.
	Logger *slog.Logger
	// Banner receives the start-up lines (version, data directory,
	// addresses). Nil discards.
	Banner io.Writer
	// Version is printed in the banner.
	Version string
	// Now is the clock; nil selects time.Now.
	Now func() time.Time
}

// Server is one memsvc server.
type Server struct {
	cfg  *config.Config
	opts Options
	log  *slog.Logger

	mu       sync.Mutex
	httpAddr string
	grpcAddr string
	ready    chan struct{}
}

// New returns a server for a validated configuration.
func New(cfg *config.Config, opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Banner == nil {
		opts.Banner = io.Discard
	}
	return &Server{cfg: cfg, opts: opts, log: opts.Logger, ready: make(chan struct{})}
}

// HTTPAddr is the address the HTTP API listens on, once Ready is closed.
func (s *Server) HTTPAddr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.httpAddr
}

// Ready is closed when the server accepts requests.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// ErrUnsafeBind is returned when the HTTP API would listen beyond loopback
// without authentication, or gRPC would carry keys or leave loopback
// without TLS.
var ErrUnsafeBind = errors.New("refusing to serve")

// Run serves until ctx is cancelled, then shuts down: the API stops taking
// requests and in-flight ones get http.shutdown_timeout_secs to finish,
// the background loops stop, and the engine, data directory and audit log
// are closed. Everything acknowledged before is durable.
func (s *Server) Run(ctx context.Context) (err error) {
	cfg := s.cfg
	if !cfg.Auth.Enabled && !config.IsLoopback(cfg.HTTP.BindAddress) {
		return fmt.Errorf("%w without authentication on %s: set auth.enabled = true with auth.api_keys (and put a TLS proxy in front), or bind to 127.0.0.1", ErrUnsafeBind, cfg.HTTP.BindAddress)
	}
	// Off loopback, auth is on (the rule above), so API keys cover both.
	if cfg.GRPC.Port != nil && cfg.GRPC.TLSCertPath == nil && cfg.Auth.Enabled {
		return fmt.Errorf("%w gRPC without TLS: API keys or a non-loopback address need grpc.tls_cert_path and grpc.tls_key_path", ErrUnsafeBind)
	}
	warnShortKeys(s.log, cfg)
	var closers []func() error
	defer func() {
		for i := len(closers) - 1; i >= 0; i-- {
			if cerr := closers[i](); cerr != nil && err == nil {
				err = cerr
			}
		}
	}()

	db, err := store.Open(cfg.DataDir, StoreOptions(cfg, s.log))
	if err != nil {
		return err
	}
	closers = append(closers, db.Close)
	var auditLog *audit.Log
	if cfg.Security.AuditLogEnabled {
		auditLog, err = audit.Open(cfg.AuditLogPath(), audit.Options{Logger: s.log})
		if err != nil {
			return fmt.Errorf("open audit log: %w", err)
		}
		closers = append(closers, auditLog.Close)
	}
	eng, err := engine.Open(ctx, db, EngineOptions(cfg, s.log, auditLog, s.opts.Now))
	if err != nil {
		return fmt.Errorf("open engine: %w", err)
	}
	closers = append(closers, eng.Close)
	// Opening decodes every record once to build the in-memory state; that
	// garbage would otherwise stay resident until the runtime's scavenger
	// gets to it, which at 100,000 records is hundreds of MiB. Return it
	// now, off the start-up path.
	go debug.FreeOSMemory()

	// The registry holds memsvc's own series and nothing else: /metrics
	// exposes exactly the spec's set, so no Go runtime or process
	// collectors.
	var (
		reg = prometheus.NewRegistry()
		met *metrics.Metrics
		svc memory.Service = eng
	)
	if cfg.HTTP.MetricsEnabled {
		if met, err = metrics.New(reg); err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
		svc = met.Instrument(eng)
	}
	limiter := s.newLimiter()
	api, err := httpapi.New(svc, httpapi.Options{
		Logger:            s.log,
		AuthEnabled:       cfg.Auth.Enabled,
		APIKeys:           cfg.Auth.APIKeys,
		Limiter:           limiter,
		TrustedProxyCIDRs: cfg.HTTP.TrustedProxyCIDRs,
		CORSOrigins:       cfg.HTTP.CORSOrigins,
		MaxBodyBytes:      cfg.HTTP.MaxBodyBytes,
		MaxImportBytes:    importWireLimit(cfg.MaxImportBytes),
		MaxResponseBytes:  cfg.MaxResponseBytes,
		MetricsEnabled:    cfg.HTTP.MetricsEnabled,
		Gatherer:          reg,
		Metrics:           met,
	})
	if err != nil {
		return fmt.Errorf("http api: %w", err)
	}

	var gsrv *grpcapi.Server
	var gln net.Listener
	if cfg.GRPC.Port != nil {
		gopts := grpcapi.Options{
			Logger:          s.log,
			AuthEnabled:     cfg.Auth.Enabled,
			APIKeys:         cfg.Auth.APIKeys,
			Limiter:         limiter,
			ShutdownTimeout: time.Duration(cfg.HTTP.ShutdownTimeoutSecs) * time.Second,
			MaxRecvMsgBytes: int(cfg.HTTP.MaxBodyBytes),
			MaxImportBytes:  importWireLimit(cfg.MaxImportBytes),
			// A protobuf message is under 2 GiB anyway.
			MaxResponseBytes: int(min(cfg.MaxResponseBytes, math.MaxInt32)),
		}
		if cfg.GRPC.TLSCertPath != nil {
			gopts.TLSCertFile, gopts.TLSKeyFile = *cfg.GRPC.TLSCertPath, *cfg.GRPC.TLSKeyPath
		}
		if gsrv, err = grpcapi.NewServer(svc, gopts); err != nil {
			return fmt.Errorf("grpc: %w", err)
		}
		if gln, err = net.Listen("tcp", net.JoinHostPort(cfg.HTTP.BindAddress, strconv.Itoa(int(*cfg.GRPC.Port)))); err != nil {
			return fmt.Errorf("listen for gRPC: %w", err)
		}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.HTTP.BindAddress, strconv.Itoa(int(cfg.HTTP.Port))))
	if err != nil {
		if gln != nil {
			_ = gln.Close()
		}
		return fmt.Errorf("listen: %w", err)
	}
	s.mu.Lock()
	s.httpAddr = ln.Addr().String()
	if gln != nil {
		s.grpcAddr = gln.Addr().String()
	}
	s.mu.Unlock()
	s.banner(db.Dir(), ln.Addr().String(), s.grpcAddr)

	// The background loops.
	loopCtx, stopLoops := context.WithCancel(context.Background())
	var loops sync.WaitGroup
	eng.SetBackground(true, true)
	loops.Add(1)
	go func() {
		defer loops.Done()
		trimWhenIdle(loopCtx)
	}()
	for _, l := range backgroundLoops(cfg, eng, met, s.log) {
		loops.Add(1)
		go func() {
			defer loops.Done()
			runLoop(loopCtx, l.opts, l.work)
		}()
	}
	closers = append(closers, func() error {
		stopLoops()
		loops.Wait()
		eng.SetBackground(false, false)
		return nil
	})

	hs := &http.Server{
		Handler:           api,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }()
	grpcCtx, stopGRPC := context.WithCancel(context.Background())
	defer stopGRPC()
	var grpcDone chan error // nil (never ready) when gRPC is off
	if gsrv != nil {
		grpcDone = make(chan error, 1)
		go func() { grpcDone <- gsrv.Serve(grpcCtx, gln) }()
	}
	close(s.ready)
	s.log.Info("memsvc serving", "http", ln.Addr().String())

	select {
	case err := <-serveErr:
		return fmt.Errorf("http server: %w", err)
	case err := <-grpcDone:
		_ = hs.Close()
		return fmt.Errorf("grpc server: %w", err)
	case <-ctx.Done():
	}
	s.log.Info("shutdown signal received; draining requests", "timeout_secs", cfg.HTTP.ShutdownTimeoutSecs)
	if gsrv != nil {
		stopGRPC() // Serve reports NOT_SERVING and drains in parallel with HTTP, within the same deadline
	}
	shCtx, cancel := context.WithTimeout(context.Background(), time.Duration(cfg.HTTP.ShutdownTimeoutSecs)*time.Second)
	defer cancel()
	if err := hs.Shutdown(shCtx); err != nil {
		s.log.Warn("requests still running at the shutdown deadline were cut off", "err", err)
		_ = hs.Close()
	}
	if grpcDone != nil {
		if err := <-grpcDone; err != nil {
			s.log.Warn("grpc server stopped with an error", "err", err)
		}
	}
	s.log.Info("shutdown complete")
	return nil
}

// newLimiter returns the one rate limiter both transports share, so a
// client calling over HTTP and gRPC gets the configured rate once rather
// than once per transport. It is nil (no limit) when the rate is zero:
// validation refuses that, but a Config built by hand may hold it.
func (s *Server) newLimiter() *access.Limiter {
	rl := s.cfg.RateLimit
	if rl.RequestsPerSecond == 0 {
		return nil
	}
	now := s.opts.Now
	if now == nil {
		now = time.Now
	}
	return access.NewLimiter(access.RateLimit{RequestsPerSecond: float64(rl.RequestsPerSecond), Burst: int(rl.Burst), LimitLoopback: rl.LimitLoopback}, now)
}

// GRPCAddr is the address the gRPC API listens on ("" when it is off),
// once Ready is closed.
func (s *Server) GRPCAddr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.grpcAddr
}

func (s *Server) banner(dataDir, httpAddr, grpcAddr string) {
	w := s.opts.Banner
	cfgFile := s.cfg.File
	if cfgFile == "" {
		cfgFile = "(defaults)"
	} else if abs, err := filepath.Abs(cfgFile); err == nil {
		cfgFile = abs
	}
	fmt.Fprintf(w, "memsvc v%s\n", s.opts.Version)
	fmt.Fprintf(w, "Data   %s\n", dataDir)
	fmt.Fprintf(w, "Config %s\n", cfgFile)
	if s.cfg.Auth.Enabled {
		fmt.Fprintf(w, "Auth   enabled (%d key(s))\n", len(s.cfg.Auth.APIKeys))
	}
	if s.cfg.Security.AuditLogEnabled {
		fmt.Fprintf(w, "Audit  %s\n", s.cfg.AuditLogPath())
	}
	if grpcAddr != "" {
		tls := ""
		if s.cfg.GRPC.TLSCertPath != nil {
			tls = " (TLS)"
		}
		fmt.Fprintf(w, "gRPC   listening on %s%s\n", grpcAddr, tls)
	}
	fmt.Fprintf(w, "HTTP   listening on %s\n", httpAddr)
}

// StoreOptions translates the configuration into store options (the
// encryption passphrase); the CLI uses it too.
func StoreOptions(cfg *config.Config, log *slog.Logger) store.Options {
	o := store.Options{Logger: log}
	if cfg.Security.StoreEncryptionPassphrase != nil {
		o.Passphrase = []byte(*cfg.Security.StoreEncryptionPassphrase)
	}
	return o
}

// EngineOptions translates the configuration into engine options; the CLI
// uses it too, so the embedded engine behaves like the server's.
func EngineOptions(cfg *config.Config, log *slog.Logger, auditLog *audit.Log, now func() time.Time) engine.Options {
	return engine.Options{
		Logger:          log,
		Now:             now,
		WorkingCapacity: int(cfg.Working.Capacity),
		PersistIndexes:  cfg.PersistSearchIndexes(),
		Audit:           auditLog,
		ImportMaxBytes:  cfg.MaxImportBytes,
		Decay: engine.DecayConfig{
			PruneBelow: cfg.Decay.PruneBelow,
			StabilityDays: map[memory.StoreType]float64{
				memory.StoreEpisodic:   cfg.Decay.StabilityDays.Episodic,
				memory.StoreSemantic:   cfg.Decay.StabilityDays.Semantic,
				memory.StoreProcedural: cfg.Decay.StabilityDays.Procedural,
				memory.StoreEmotional:  cfg.Decay.StabilityDays.Emotional,
			},
		},
	}
}

// importWireLimit is how many bytes an import stream may carry for an
// archive of at most max bytes after decryption: an encrypted archive is a
// little larger than its plaintext. The engine enforces max itself.
func importWireLimit(max int64) int64 {
	return max + max/64 + 1<<20
}

// warnShortKeys logs each configured API key shorter than
// access.MinKeyLength, by its position, never its value. Keys are what
// stops guessing: the rate limit on failed attempts only bounds their load.
func warnShortKeys(log *slog.Logger, cfg *config.Config) {
	if !cfg.Auth.Enabled {
		return
	}
	for i, k := range cfg.Auth.APIKeys {
		if n := utf8.RuneCountInString(k); n < access.MinKeyLength {
			log.Warn("short API key: use at least 16 random characters, e.g. from `openssl rand -hex 32`",
				"key", fmt.Sprintf("auth.api_keys[%d]", i), "characters", n)
		}
	}
}
