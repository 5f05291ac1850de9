package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"memsvc.dev/memsvc/pkg/access"
	"memsvc.dev/memsvc/pkg/config"
	"memsvc.dev/memsvc/pkg/grpcapi"
)

// Live configuration. serve watches its configuration file, and the gRPC
// certificate and key files, with fsnotify, and reloads when they change
// or when SIGHUP arrives (Options.Hangup). It watches their directories
// rather than the files, so an editor or a tool that replaces a file by
// renaming a new one over it (as most do) is seen; a burst of events (a
// save is often several) is one reload, once the files have been quiet
// for reloadQuiet or at most reloadMaxWait after the first event.
//
// A reload reads the configuration as the start did (Options.Load: the
// file, then environment variables and flags on top, then validation),
// compares it with the running one (config.Diff) and:
//
//   - applies the live keys together: the API keys, the namespaces each
//     may use, and the rate limit through one swap of the access policy
//     both transports admit calls under (access.Gate), the log level, and the gRPC certificate, read
//     again from its files even when the paths did not change, so a
//     renewed certificate is served to new connections. Calls admitted
//     and connections made before keep the settings they started with;
//   - logs every other changed key as needing a restart and leaves it as
//     it was;
//   - refuses the whole edit, with one log line that names the problem,
//     when the file does not parse or validate or the certificate does
//     not load: the running settings stay, all of them.
//
// A file event that leaves the watched files as they were at the last
// reload (an unrelated file of the same directory, a save without a
// change) reloads nothing.
const (
	reloadQuiet   = 50 * time.Millisecond
	reloadMaxWait = 500 * time.Millisecond
)

// reloader applies configuration reloads to a running server.
type reloader struct {
	log      *slog.Logger
	load     func() (*config.Config, error)
	setLevel func(level string)
	gate     *access.Gate
	grpc     *grpcapi.Server // nil when gRPC is off
	// tls reports whether gRPC serves TLS: only then can its certificate
	// change.
	tls bool
	// onResult reports each reload's outcome (a metric); nil ignores it.
	onResult func(ok bool)

	// running is the configuration in force: the start's, with the live
	// keys of every applied reload.
	running *config.Config
	// seen is the fingerprint of the watched files at the last reload
	// (or the start), and failed whether that reload was refused.
	seen   [sha256.Size]byte
	failed bool

	// w watches dirs, the directories of the watched files; nil when it
	// could not be made.
	w    *fsnotify.Watcher
	dirs []string
}

func newReloader(cfg *config.Config, opts Options, t *transports, log *slog.Logger) *reloader {
	r := &reloader{
		log:      log,
		load:     opts.Load,
		setLevel: opts.SetLogLevel,
		gate:     t.gate,
		grpc:     t.gsrv,
		tls:      t.gsrv != nil && cfg.GRPC.TLSCertPath != nil,
		running:  cfg,
	}
	if t.met != nil {
		r.onResult = t.met.ConfigReloaded
	}
	// Watch first, then take the fingerprint: a change after it is seen.
	w, err := fsnotify.NewWatcher()
	if err != nil {
		r.log.Warn("cannot watch the configuration file; reload with SIGHUP", "err", err)
	} else {
		r.w = w
		r.dirs = r.watchDirs(w, nil)
	}
	r.seen = r.fingerprint()
	return r
}

// watched returns the files a reload reads: the configuration file and,
// with gRPC TLS, the certificate and the key.
func (r *reloader) watched() []string {
	var files []string
	if r.running.File != "" {
		files = append(files, r.running.File)
	}
	if r.tls {
		files = append(files, *r.running.GRPC.TLSCertPath, *r.running.GRPC.TLSKeyPath)
	}
	return files
}

// fingerprint hashes the contents of the watched files (a file that
// cannot be read counts by its error).
func (r *reloader) fingerprint() [sha256.Size]byte {
	h := sha256.New()
	for _, f := range r.watched() {
		b, err := os.ReadFile(f)
		if err != nil {
			b = []byte("error: " + err.Error())
		}
		fmt.Fprintf(h, "%s\x00%d\x00", f, len(b))
		h.Write(b)
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// reload reads the configuration and applies it (see the comment at the
// top). forced reloads (SIGHUP) run and log even when the watched files
// did not change.
func (r *reloader) reload(forced bool) {
	seen := r.fingerprint()
	if !forced && seen == r.seen {
		return
	}
	r.seen = seen
	err := r.apply(forced)
	r.failed = err != nil
	if r.onResult != nil {
		r.onResult(err == nil)
	}
	if err != nil {
		r.log.Error("configuration reload refused; the running settings stay", "err", err)
	}
}

// apply does the work of reload and returns why it refused the edit.
func (r *reloader) apply(forced bool) error {
	if r.load == nil {
		return errors.New("this server was started without a way to read its configuration again")
	}
	loaded, err := r.load()
	if err != nil {
		return err
	}
	var live, restart []config.Change
	for _, c := range config.Diff(r.running, loaded) {
		if c.Live && (!isTLSKey(c.Key) || r.tlsPathsApply(loaded)) {
			live = append(live, c)
		} else {
			restart = append(restart, c)
		}
	}
	next := config.WithLive(r.running, loaded)
	if !r.tlsPathsApply(loaded) {
		next.GRPC.TLSCertPath, next.GRPC.TLSKeyPath = r.running.GRPC.TLSCertPath, r.running.GRPC.TLSKeyPath
	}
	// The running server's rules hold for what it would run with: auth
	// on needs keys even when the file now turns auth off (which waits
	// for a restart).
	if err := next.Validate(); err != nil {
		return err
	}
	policy, err := policyOf(next)
	if err != nil {
		return err
	}
	// Everything is checked; the certificate is the last thing that can
	// fail, and its swap the first change.
	certChanged := false
	if r.tls {
		if certChanged, err = r.grpc.ReloadTLS(*next.GRPC.TLSCertPath, *next.GRPC.TLSKeyPath); err != nil {
			return fmt.Errorf("grpc.tls_cert_path, grpc.tls_key_path: %w", err)
		}
	}
	r.gate.SetPolicy(policy)
	if r.setLevel != nil && next.Log.Level != r.running.Log.Level {
		r.setLevel(next.Log.Level)
	}
	r.running = next
	r.report(live, restart, certChanged, forced)
	return nil
}

// report logs what a reload changed: one line for the live changes, one
// per key that needs a restart, and the certificate when it changed.
func (r *reloader) report(live, restart []config.Change, certChanged, forced bool) {
	if len(live) > 0 {
		attrs := []any{"keys", changedKeys(live)}
		for _, c := range live {
			attrs = append(attrs, c.Key, c.Detail)
		}
		r.log.Info("configuration reloaded", attrs...)
	}
	if certChanged {
		attrs := []any{"cert", *r.running.GRPC.TLSCertPath}
		if leaf := r.grpc.TLSCertificate(); leaf != nil {
			attrs = append(attrs, "subject", leaf.Subject.String(), "serial", leaf.SerialNumber.Text(16),
				"not_after", leaf.NotAfter.UTC().Format(time.RFC3339))
		}
		r.log.Info("gRPC TLS certificate reloaded: new connections get it, open ones keep theirs", attrs...)
	}
	for _, c := range restart {
		r.log.Warn("configuration key changed but needs a restart: ignored until memsvc serve starts again", "key", c.Key, "change", c.Detail)
	}
	if len(live) == 0 && len(restart) == 0 && !certChanged {
		level := slog.LevelDebug
		if forced || r.failed {
			level = slog.LevelInfo
		}
		r.log.Log(context.Background(), level, "configuration reloaded: nothing changed")
	}
	if slices.ContainsFunc(live, func(c config.Change) bool { return c.Key == "auth.api_keys" || c.Key == "auth.keys" }) {
		warnShortKeys(r.log, r.running)
	}
}

// tlsPathsApply reports whether loaded's TLS paths can be applied: gRPC
// serves TLS and loaded keeps it on. Turning TLS on or off needs a
// restart.
func (r *reloader) tlsPathsApply(loaded *config.Config) bool {
	return r.tls && loaded.GRPC.TLSCertPath != nil && loaded.GRPC.TLSKeyPath != nil
}

func isTLSKey(key string) bool {
	return key == "grpc.tls_cert_path" || key == "grpc.tls_key_path"
}

func changedKeys(cs []config.Change) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Key
	}
	return strings.Join(names, ", ")
}

// watch reloads on file events in the directories of the watched files
// and on each value of hangup, until stop is closed, and then closes the
// watcher. Without a watcher (fsnotify failed) SIGHUP still works.
func (r *reloader) watch(hangup <-chan os.Signal, stop <-chan struct{}) {
	w, dirs := r.w, r.dirs
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w != nil {
		defer w.Close()
		events, errs = w.Events, w.Errors
	}
	var (
		quiet, deadline <-chan time.Time
		pending         bool
	)
	for {
		select {
		case <-stop:
			return
		case <-hangup:
			r.log.Info("SIGHUP: reloading the configuration")
			r.reload(true)
			dirs = r.watchDirs(w, dirs)
			pending, quiet, deadline = false, nil, nil
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			r.log.Debug("configuration directory changed", "event", ev.String())
			if !pending {
				pending, deadline = true, time.After(reloadMaxWait)
			}
			quiet = time.After(reloadQuiet)
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			r.log.Warn("watching the configuration file", "err", err)
		case <-quiet:
			r.reload(false)
			dirs = r.watchDirs(w, dirs)
			pending, quiet, deadline = false, nil, nil
		case <-deadline:
			r.reload(false)
			dirs = r.watchDirs(w, dirs)
			pending, quiet, deadline = false, nil, nil
		}
	}
}

// watchDirs makes w watch the directories of the watched files and no
// others, and returns them. had are the directories watched so far.
func (r *reloader) watchDirs(w *fsnotify.Watcher, had []string) []string {
	if w == nil {
		return nil
	}
	var want []string
	for _, f := range r.watched() {
		dir, err := filepath.Abs(filepath.Dir(f))
		if err != nil {
			dir = filepath.Dir(f)
		}
		if !slices.Contains(want, dir) {
			want = append(want, dir)
		}
	}
	var now []string
	for _, d := range had {
		if slices.Contains(want, d) {
			now = append(now, d)
		} else {
			_ = w.Remove(d)
		}
	}
	for _, d := range want {
		if slices.Contains(now, d) {
			continue
		}
		if err := w.Add(d); err != nil {
			level := slog.LevelWarn
			if errors.Is(err, fs.ErrNotExist) {
				level = slog.LevelError
			}
			r.log.Log(context.Background(), level, "cannot watch a configuration directory; reload with SIGHUP", "dir", d, "err", err)
			continue
		}
		now = append(now, d)
	}
	return now
}

// actor runs the reloader until interrupted.
func (r *reloader) actor(hangup <-chan os.Signal) actor {
	stop := make(chan struct{})
	var once sync.Once
	return actor{
		name: "reload",
		execute: func() error {
			r.watch(hangup, stop)
			return nil
		},
		interrupt: func(error) { once.Do(func() { close(stop) }) },
	}
}
