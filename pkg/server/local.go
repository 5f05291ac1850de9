package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"time"

	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/config"
	"memsvc.dev/memsvc/pkg/engine"
	"memsvc.dev/memsvc/pkg/httpapi"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/metrics"
	"memsvc.dev/memsvc/pkg/store"
)

// LocalOptions configure OpenLocal.
type LocalOptions struct {
	// Logger for everything the data layer logs. Nil discards.
	Logger *slog.Logger
	// Now is the clock; nil selects time.Now.
	Now func() time.Time
	// Create lets OpenLocal create the database in a missing or empty
	// data directory. serve and the commands that add data set it; every
	// other command refuses such a directory, so a mistyped --data-dir
	// never turns into a new, empty database.
	Create bool
	// DiskFree reports the bytes available on the file system holding a
	// path; nil asks the operating system. Tests use it to fill the disk.
	DiskFree func(path string) (uint64, error)
}

// Local is memsvc's data opened in this process, in the manner of etcd's
// embed package: the data directory's store, the audit log and the engine
// over them. serve runs on one, and so does every data command of the CLI
// that is not sent to a running server.
//
// OpenLocal opens the parts in this order, and Close closes them in the
// reverse one:
//
//  1. the data directory (store): first, because its lock tells a second
//     process to go away before anything else is touched, and because the
//     default audit log lives inside it;
//  2. the audit log;
//  3. the engine, which replays the audit outbox into the log and loads
//     its in-memory state.
//
// Close stops the engine first (its appender empties the outbox into the
// audit log, and it saves its counters to the store), then closes the
// audit log, then the store, which flushes and releases the directory
// lock. Nothing writes after the part it writes to is closed.
type Local struct {
	cfg   *config.Config
	log   *slog.Logger
	db    *store.DB
	audit *audit.Log // nil when the audit log is disabled
	eng   *engine.Engine
	guard *spaceGuard
	svc   memory.Service
}

// OpenLocal checks the data directory (see LocalOptions.Create and
// CheckDataDir) and opens it. On a file system with less free space than
// half of storage.min_free_bytes it fails at once with one message rather
// than let the database run out of space while opening.
func OpenLocal(ctx context.Context, cfg *config.Config, opts LocalOptions) (_ *Local, err error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := CheckDataDir(cfg, opts.Create); err != nil {
		return nil, err
	}
	l := &Local{cfg: cfg, log: log}
	defer func() {
		if err != nil {
			_ = l.Close()
		}
	}()
	sopts := storeOptions(cfg, log)
	sopts.MinFreeBytes = cfg.Storage.MinFreeBytes / 2
	sopts.DiskFree = opts.DiskFree
	if l.db, err = store.Open(cfg.DataDir, sopts); err != nil {
		if nse, ok := errors.AsType[*store.NoSpaceError](err); ok && nse.Opening {
			return nil, fmt.Errorf("%w: free some space on it (or lower storage.min_free_bytes, %s now), then start again",
				err, store.MiB(cfg.Storage.MinFreeBytes))
		}
		return nil, err
	}
	if cfg.Security.AuditLogEnabled {
		if l.audit, err = audit.Open(cfg.AuditLogPath(), audit.Options{Logger: log}); err != nil {
			return nil, fmt.Errorf("open audit log: %w", err)
		}
	}
	if l.eng, err = engine.Open(ctx, l.db, engineOptions(cfg, log, l.audit, opts.Now)); err != nil {
		return nil, fmt.Errorf("open engine: %w", err)
	}
	l.guard = newSpaceGuard(cfg, l.db.Dir(), opts.DiskFree, log)
	l.svc = queueRecalls(l.guard.service(l.eng), runtime.GOMAXPROCS(0))
	return l, nil
}

// Service is the engine behind the free-space guard: writes are refused
// with INSUFFICIENT_STORAGE while the disk is below the floor. Recalls run
// about one per core at a time, the others waiting their turn (admit.go).
func (l *Local) Service() memory.Service { return l.svc }

// metricsState is what the state gauges of /metrics read: the engine's
// counts, the free space the guard watches and the audit log's failures.
func (l *Local) metricsState() metrics.State {
	st := metrics.State{
		Stats:        l.eng.Stats,
		Volumes:      l.guard.volumes(),
		Free:         l.guard.free,
		MinFreeBytes: l.cfg.Storage.MinFreeBytes,
	}
	if l.audit != nil {
		st.AuditFailures = l.audit.Failures
	}
	return st
}

// Dir is the absolute data directory.
func (l *Local) Dir() string { return l.db.Dir() }

// Ready reports whether the data layer can serve: the engine answers and
// the audit log, when enabled, is appending (a log that cannot append, on
// a full disk say, makes every change wait in the outbox). The audit
// log's failure is a *httpapi.NotReadyError, so /readiness says why.
func (l *Local) Ready(ctx context.Context) error {
	if l.audit != nil {
		if err := l.audit.Err(); err != nil {
			return &httpapi.NotReadyError{
				Reason: fmt.Sprintf("audit log cannot append (%s); changes wait until it can", causeOf(err)),
				Err:    fmt.Errorf("audit log %s cannot append: %w", l.audit.Path(), err),
			}
		}
	}
	_, err := l.eng.Stats(ctx)
	return err
}

// Close closes the engine, the audit log and the store, in that order,
// and returns the first error. It closes what OpenLocal managed to open.
func (l *Local) Close() error {
	var errs []error
	if l.eng != nil {
		if err := l.eng.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close engine: %w", err))
		}
	}
	if l.audit != nil {
		if err := l.audit.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if l.db != nil {
		if err := l.db.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close data directory: %w", err))
		}
	}
	return errors.Join(errs...)
}

// ErrDataDir matches every *DataDirError.
var ErrDataDir = errors.New("unusable data directory")

// DataDirError refuses a data directory before anything is written to it.
type DataDirError struct {
	Dir string
	Msg string
}

func (e *DataDirError) Error() string { return e.Msg }

// Is makes a DataDirError match ErrDataDir.
func (e *DataDirError) Is(target error) bool { return target == ErrDataDir }

// CheckDataDir refuses a data directory that is not one: a directory (or
// file) that holds something other than a memsvc database, whatever the
// command; and, unless create is set, a missing or empty one. It writes
// nothing.
func CheckDataDir(cfg *config.Config, create bool) error {
	dir := cfg.DataDir
	st, names, err := store.Probe(dir)
	if err != nil {
		return err
	}
	from := "data_dir default"
	if src := cfg.Sources["data_dir"]; src != "" {
		from = "from " + src
	}
	switch {
	case st == store.DirForeign:
		return &DataDirError{Dir: dir, Msg: fmt.Sprintf(
			"%s (%s) is not a memsvc data directory: it holds other files (%s); "+
				"give --data-dir a new or empty directory, or the one memsvc already uses",
			dir, from, strings.Join(names, ", "))}
	case create || st == store.DirDatabase:
		return nil
	case st == store.DirMissing:
		return &DataDirError{Dir: dir, Msg: fmt.Sprintf(
			"data directory %s (%s) does not exist; check --data-dir (or data_dir in the config). "+
				"Only memsvc serve and commands that store data create one",
			dir, from)}
	default:
		return &DataDirError{Dir: dir, Msg: fmt.Sprintf(
			"data directory %s (%s) is empty: there is nothing to read; check --data-dir (or data_dir in the config). "+
				"Only memsvc serve and commands that store data create a database",
			dir, from)}
	}
}

// storeOptions translates the configuration into store options (the
// encryption passphrase, and the key derivation cost of a directory whose
// encryption starts now).
func storeOptions(cfg *config.Config, log *slog.Logger) store.Options {
	o := store.Options{Logger: log}
	if cfg.Security.StoreEncryptionPassphrase != nil {
		o.Passphrase = []byte(*cfg.Security.StoreEncryptionPassphrase)
	}
	k := cfg.Security.StoreKDF
	o.KDF = store.KDFParams{MemoryKiB: k.MemoryMiB << 10, Iterations: k.Iterations, Parallelism: uint8(min(k.Parallelism, 255))}
	return o
}

// engineOptions translates the configuration into engine options.
func engineOptions(cfg *config.Config, log *slog.Logger, auditLog *audit.Log, now func() time.Time) engine.Options {
	return engine.Options{
		Logger:           log,
		Now:              now,
		WorkingCapacity:  int(cfg.Working.Capacity),
		PersistIndexes:   cfg.PersistSearchIndexes(),
		NoIndexSnapshots: cfg.IndexSnapshotsForbidden(),
		Audit:            auditLog,
		ImportMaxBytes:   cfg.MaxImportBytes,
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
