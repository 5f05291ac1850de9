// Package server assembles a running memsvc. OpenLocal opens the data
// layer (the data directory, the audit log and the engine, with the disk
// space guard in front) for serve and for every embedded CLI command; Run
// adds metrics, the HTTP and gRPC APIs and the background loops, serves
// until its context is cancelled, then shuts down in a fixed order within
// a bounded time.
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
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"memsvc.dev/memsvc/pkg/access"
	"memsvc.dev/memsvc/pkg/config"
	"memsvc.dev/memsvc/pkg/grpcapi"
	"memsvc.dev/memsvc/pkg/httpapi"
	"memsvc.dev/memsvc/pkg/metrics"
	"memsvc.dev/memsvc/pkg/ui"
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
	// DiskFree replaces the free-space probe of the disk space guard
	// (LocalOptions.DiskFree); tests use it to fill the disk.
	DiskFree func(path string) (uint64, error)

	// Load reads the configuration again as the start did: the same
	// file, environment and flags, validated. Run reloads it when the file
	// or the gRPC certificate files change, and on Hangup (see reload.go).
	// Nil turns live configuration off.
	Load func() (*config.Config, error)
	// Hangup delivers a value for each SIGHUP: reload now, even when the
	// files look unchanged.
	Hangup <-chan os.Signal
	// SetLogLevel sets the level of Logger to a log.level value after a
	// reload changed it; nil leaves the level alone.
	SetLogLevel func(level string)
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

// Run opens the data directory (OpenLocal) and serves until ctx is
// cancelled or a component fails. It runs the server as a group of actors
// (see group) and stops them in this order:
//
//  1. the shutdown signal (ctx), and the configuration reloader (see
//     reload.go) with it;
//  2. the HTTP and gRPC servers, together: they stop accepting, and
//     in-flight requests get http.shutdown_timeout_secs to finish;
//  3. the background loops (decay, dream, memory trimming), which may be
//     in the middle of a round;
//
// and then closes the data layer (Local.Close: engine, audit log, store).
// Everything acknowledged before is durable.
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

	local, err := OpenLocal(ctx, cfg, LocalOptions{Logger: s.log, Now: s.opts.Now, Create: true, DiskFree: s.opts.DiskFree})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := local.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	s.removeStaleExports(local.Dir())
	// Opening decodes every record once to build the in-memory state; that
	// garbage would otherwise stay resident until the runtime's scavenger
	// gets to it, which at 100,000 records is hundreds of MiB. Return it
	// now, off the start-up path.
	go debug.FreeOSMemory()

	t, err := s.transports(local)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.httpAddr = t.ln.Addr().String()
	if t.gln != nil {
		s.grpcAddr = t.gln.Addr().String()
	}
	s.mu.Unlock()
	// The reloader watches before the banner tells anyone the server is
	// there, so no edit made after it is missed.
	last := []actor{s.signalActor(ctx)}
	if s.opts.Load != nil || s.opts.Hangup != nil {
		last = append(last, newReloader(cfg, s.opts, t, s.log).actor(s.opts.Hangup))
	}
	s.banner(local.Dir(), s.httpAddr, s.grpcAddr)

	var g group
	g.stage(s.background(local, t.met)...)
	g.stage(t.actors(time.Duration(cfg.HTTP.ShutdownTimeoutSecs) * time.Second)...)
	g.stage(last...)
	local.eng.SetBackground(true, true)
	defer local.eng.SetBackground(false, false)
	close(s.ready)
	s.log.Info("memsvc serving", "http", s.httpAddr)
	if err := g.run(); err != nil {
		return err
	}
	s.log.Info("shutdown complete")
	return nil
}

// signalActor ends when ctx is cancelled: the shutdown signal.
func (s *Server) signalActor(ctx context.Context) actor {
	stop := make(chan struct{})
	var once sync.Once
	return actor{
		name: "signal",
		execute: func() error {
			select {
			case <-ctx.Done():
				s.log.Info("shutdown signal received; draining requests", "timeout_secs", s.cfg.HTTP.ShutdownTimeoutSecs)
			case <-stop:
			}
			return nil
		},
		interrupt: func(error) { once.Do(func() { close(stop) }) },
	}
}

// background returns the actors of the background loops and the memory
// trimmer. A loop skips its rounds while the disk is below the free-space
// floor (the guard logs when that starts and ends).
func (s *Server) background(local *Local, met *metrics.Metrics) []actor {
	ctx, cancel := context.WithCancel(context.Background())
	stop := func(error) { cancel() }
	actors := []actor{{
		name:      "trim",
		execute:   func() error { trimWhenIdle(ctx); return nil },
		interrupt: stop,
	}}
	for _, l := range backgroundLoops(s.cfg, local.eng, met, s.log) {
		work := l.work
		guarded := func(ctx context.Context) error {
			if local.guard.check() != nil {
				return errRoundSkipped
			}
			return work(ctx)
		}
		actors = append(actors, actor{
			name:      l.opts.name,
			execute:   func() error { runLoop(ctx, l.opts, guarded); return nil },
			interrupt: stop,
		})
	}
	return actors
}

// removeStaleExports deletes the temporary files of exports that were
// killed, in the data directory and its exports directory.
func (s *Server) removeStaleExports(dataDir string) {
	for _, dir := range []string{dataDir, filepath.Join(dataDir, "exports")} {
		removed, err := RemoveStaleExports(dir)
		if err != nil {
			s.log.Warn("unfinished exports", "err", err)
		}
		if len(removed) > 0 {
			s.log.Info("removed the temporary files of unfinished exports", "dir", dir, "files", removed)
		}
	}
}

// transports are the listening HTTP and gRPC servers.
type transports struct {
	hs   *http.Server
	ln   net.Listener
	gsrv *grpcapi.Server // nil when gRPC is off
	gln  net.Listener
	met  *metrics.Metrics
	// gate admits the calls of both APIs; a reload swaps its policy.
	gate *access.Gate
}

// transports builds the API servers over local and opens their listeners.
func (s *Server) transports(local *Local) (*transports, error) {
	cfg := s.cfg
	policy, err := policyOf(cfg)
	if err != nil {
		return nil, err
	}
	t := &transports{gate: access.NewGate(policy, s.opts.Now)}
	// The registry holds memsvc's own series and nothing else: the spec's
	// set and the operational ones of pkg/metrics, no Go runtime or
	// process collectors.
	var (
		reg = prometheus.NewRegistry()
		svc = local.Service()
	)
	if cfg.HTTP.MetricsEnabled {
		if t.met, err = metrics.New(reg); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
		if err := metrics.RegisterState(reg, local.metricsState()); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
		svc = t.met.Instrument(svc)
	}
	api, err := httpapi.New(svc, httpapi.Options{
		Logger:            s.log,
		Gate:              t.gate,
		TrustedProxyCIDRs: cfg.HTTP.TrustedProxyCIDRs,
		CORSOrigins:       cfg.HTTP.CORSOrigins,
		MaxBodyBytes:      cfg.HTTP.MaxBodyBytes,
		MaxImportBytes:    importWireLimit(cfg.MaxImportBytes),
		MaxResponseBytes:  cfg.MaxResponseBytes,
		MetricsEnabled:    cfg.HTTP.MetricsEnabled,
		Gatherer:          reg,
		Metrics:           t.met,
		Ready:             local.Ready,
	})
	if err != nil {
		return nil, fmt.Errorf("http api: %w", err)
	}
	var h http.Handler = api
	if cfg.UIEnabled() {
		inspector, err := ui.New()
		if err != nil {
			return nil, err
		}
		h = ui.Mount(api, inspector)
	}
	t.hs = newHTTPServer(&cfg.HTTP, h, s.log)

	if cfg.GRPC.Port != nil {
		gopts := grpcapi.Options{
			Logger:          s.log,
			Gate:            t.gate,
			ShutdownTimeout: time.Duration(cfg.HTTP.ShutdownTimeoutSecs) * time.Second,
			MaxRecvMsgBytes: int(cfg.HTTP.MaxBodyBytes),
			MaxImportBytes:  importWireLimit(cfg.MaxImportBytes),
			// A protobuf message is under 2 GiB anyway.
			MaxResponseBytes: int(min(cfg.MaxResponseBytes, math.MaxInt32)),
		}
		if cfg.GRPC.TLSCertPath != nil {
			gopts.TLSCertFile, gopts.TLSKeyFile = *cfg.GRPC.TLSCertPath, *cfg.GRPC.TLSKeyPath
		}
		if t.gsrv, err = grpcapi.NewServer(svc, gopts); err != nil {
			return nil, fmt.Errorf("grpc: %w", err)
		}
		if t.gln, err = net.Listen("tcp", net.JoinHostPort(cfg.HTTP.BindAddress, strconv.Itoa(int(*cfg.GRPC.Port)))); err != nil {
			return nil, fmt.Errorf("listen for gRPC: %w", err)
		}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.HTTP.BindAddress, strconv.Itoa(int(cfg.HTTP.Port))))
	if err != nil {
		if t.gln != nil {
			_ = t.gln.Close()
		}
		return nil, fmt.Errorf("listen: %w", err)
	}
	t.ln = limitListener(ln, cfg.HTTP.MaxConnections)
	return t, nil
}

// actors returns the HTTP and gRPC servers as actors. Interrupting one
// starts its drain in the background; its execute returns when the drain
// is over or, for requests still running at the deadline, cut off.
func (t *transports) actors(drain time.Duration) []actor {
	drained := make(chan struct{})
	var shutdownOnce sync.Once
	out := []actor{{
		name: "http",
		execute: func() error {
			if err := t.hs.Serve(t.ln); !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("http server: %w", err)
			}
			<-drained
			return nil
		},
		interrupt: func(error) {
			shutdownOnce.Do(func() {
				go func() {
					defer close(drained)
					ctx, cancel := context.WithTimeout(context.Background(), drain)
					defer cancel()
					if err := t.hs.Shutdown(ctx); err != nil {
						t.hs.ErrorLog.Printf("requests still running at the shutdown deadline were cut off: %v", err)
						_ = t.hs.Close()
					}
				}()
			})
		},
	}}
	if t.gsrv != nil {
		ctx, cancel := context.WithCancel(context.Background())
		out = append(out, actor{
			name: "grpc",
			execute: func() error {
				if err := t.gsrv.Serve(ctx, t.gln); err != nil {
					return fmt.Errorf("grpc server: %w", err)
				}
				return nil
			},
			// Serve reports NOT_SERVING and drains within its
			// ShutdownTimeout, in parallel with HTTP.
			interrupt: func(error) { cancel() },
		})
	}
	return out
}

// policyOf is the admission policy of cfg: its API keys with the
// namespaces each may use, when authentication is on, and its rate limit. Both transports share one Gate
// over it, so a client calling over HTTP and gRPC gets the configured rate
// once rather than once per transport, and a reload changes both at once.
// A zero rate (which validation refuses, but a Config built by hand may
// hold) does not limit.
func policyOf(cfg *config.Config) (access.Policy, error) {
	rl := cfg.RateLimit
	p := access.Policy{Rate: access.RateLimit{RequestsPerSecond: float64(rl.RequestsPerSecond), Burst: int(rl.Burst), LimitLoopback: rl.LimitLoopback}}
	if cfg.Auth.Enabled {
		keys, err := cfg.AccessKeys()
		if err != nil {
			return access.Policy{}, err
		}
		k, err := access.NewScopedKeyring(keys)
		if err != nil {
			return access.Policy{}, fmt.Errorf("auth: %w", err)
		}
		p.Keys = k
	}
	return p, nil
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
		fmt.Fprintf(w, "Auth   enabled (%d key(s))\n", len(s.cfg.Auth.APIKeys)+len(s.cfg.Auth.Keys))
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
	if s.cfg.UIEnabled() {
		fmt.Fprintf(w, "UI     http://%s%s\n", httpAddr, ui.Prefix)
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
	for i, b := range cfg.Auth.Keys {
		if n := utf8.RuneCountInString(b.Key); n < access.MinKeyLength {
			log.Warn("short API key: use at least 16 random characters, e.g. from `openssl rand -hex 32`",
				"key", fmt.Sprintf("auth.keys[%d]", i), "characters", n)
		}
	}
}
