package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"

	"memsvc.dev/memsvc/pkg/config"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// The disk space guard works in the manner of etcd's NOSPACE alarm, in two
// steps:
//
//   - Below storage.min_free_bytes on the file system of the data
//     directory or of the audit log, the service refuses writes with
//     INSUFFICIENT_STORAGE (HTTP 507) and the background loops skip their
//     rounds. Reads, export and forget go on: forget is how an operator
//     makes room, and its tombstones are small.
//   - Below half of it the store refuses every commit (store.Options
//     MinFreeBytes), background ones included, so pebble, which treats a
//     failed log or manifest write as fatal, never meets a full disk in
//     normal operation. A refusal that reaches a client there is answered
//     as INSUFFICIENT_STORAGE too.
//
// Writes resume by themselves once space is freed. The guard logs when it
// starts refusing and when it stops, not once per refused request.

// storageRetryAfter is the Retry-After of an INSUFFICIENT_STORAGE answer,
// in seconds: space rarely comes back sooner.
const storageRetryAfter = 60

// spaceGuard checks the free space before each write.
type spaceGuard struct {
	floor uint64 // 0: off
	paths []string
	free  func(path string) (uint64, error)
	log   *slog.Logger
	low   atomic.Bool
}

func newSpaceGuard(cfg *config.Config, dataDir string, free func(string) (uint64, error), log *slog.Logger) *spaceGuard {
	if free == nil {
		free = store.DiskFree
	}
	g := &spaceGuard{floor: cfg.Storage.MinFreeBytes, paths: []string{dataDir}, free: free, log: log}
	if cfg.Security.AuditLogEnabled {
		dir, err := filepath.Abs(filepath.Dir(cfg.AuditLogPath()))
		if err != nil || dir != dataDir {
			g.paths = append(g.paths, filepath.Dir(cfg.AuditLogPath()))
		}
	}
	return g
}

// volumes names the file systems the guard watches for
// memsvc_storage_free_bytes: "data", and "audit" when the audit log is
// elsewhere.
func (g *spaceGuard) volumes() map[string]string {
	v := map[string]string{"data": g.paths[0]}
	if len(g.paths) > 1 {
		v["audit"] = g.paths[1]
	}
	return v
}

// check returns an INSUFFICIENT_STORAGE error while a guarded file system
// is below the floor. A file system whose free space cannot be read does
// not stop writes; the store's own reserve still applies.
func (g *spaceGuard) check() error {
	if g == nil || g.floor == 0 {
		return nil
	}
	for _, p := range g.paths {
		free, err := g.free(p)
		if err != nil || free >= g.floor {
			continue
		}
		if !g.low.Swap(true) {
			g.log.Warn("disk space below storage.min_free_bytes: refusing writes until space is freed (reads, export and forget go on)",
				"path", p, "free", store.MiB(free), "floor", store.MiB(g.floor))
		}
		return &memory.Error{Code: memory.CodeInsufficientStorage, RetryAfter: storageRetryAfter, Message: fmt.Sprintf(
			"the server is low on disk space (%s free where it keeps its data, under the %s floor): "+
				"writes are refused until space is freed; reads still work", store.MiB(free), store.MiB(g.floor))}
	}
	if g.low.Swap(false) {
		g.log.Info("disk space back above storage.min_free_bytes: accepting writes again")
	}
	return nil
}

// translate answers the store's own refusal (the last reserve) as
// INSUFFICIENT_STORAGE rather than an internal error.
func translate(err error) error {
	nse, ok := errors.AsType[*store.NoSpaceError](err)
	if !ok {
		return err
	}
	return &memory.Error{Code: memory.CodeInsufficientStorage, RetryAfter: storageRetryAfter, Message: fmt.Sprintf(
		"the server is out of disk space (%s free where it keeps its data): nothing was written; "+
			"writes are refused until space is freed", store.MiB(nse.Free))}
}

// service wraps svc so that writes pass the guard.
func (g *spaceGuard) service(svc memory.Service) memory.Service { return &guarded{Service: svc, g: g} }

// guarded is a memory.Service whose writes pass the space guard first.
// Reads, export and forget are not checked; their errors are translated.
type guarded struct {
	memory.Service
	g *spaceGuard
}

func guardedCall[R any](g *spaceGuard, check bool, call func() (R, error)) (R, error) {
	if check {
		if err := g.check(); err != nil {
			var zero R
			return zero, err
		}
	}
	r, err := call()
	return r, translate(err)
}

func (s *guarded) EncodeStore(ctx context.Context, req *memory.EncodeStoreRequest) (*memory.EncodeStoreResponse, error) {
	return guardedCall(s.g, true, func() (*memory.EncodeStoreResponse, error) { return s.Service.EncodeStore(ctx, req) })
}

func (s *guarded) EncodeBatch(ctx context.Context, req *memory.EncodeBatchRequest) (*memory.EncodeBatchResponse, error) {
	return guardedCall(s.g, true, func() (*memory.EncodeBatchResponse, error) { return s.Service.EncodeBatch(ctx, req) })
}

func (s *guarded) EncodeUpdate(ctx context.Context, req *memory.EncodeUpdateRequest) error {
	_, err := guardedCall(s.g, true, func() (struct{}, error) { return struct{}{}, s.Service.EncodeUpdate(ctx, req) })
	return err
}

func (s *guarded) EncodeStoreRaw(ctx context.Context, req *memory.EncodeStoreRawRequest) (*memory.EncodeStoreRawResponse, error) {
	return guardedCall(s.g, true, func() (*memory.EncodeStoreRawResponse, error) { return s.Service.EncodeStoreRaw(ctx, req) })
}

func (s *guarded) EncodeBatchRaw(ctx context.Context, req *memory.EncodeBatchStoreRawRequest) (*memory.EncodeBatchStoreRawResponse, error) {
	return guardedCall(s.g, true, func() (*memory.EncodeBatchStoreRawResponse, error) { return s.Service.EncodeBatchRaw(ctx, req) })
}

func (s *guarded) Consolidate(ctx context.Context, req *memory.ConsolidateRequest) (*memory.ConsolidateResponse, error) {
	return guardedCall(s.g, req == nil || !req.DryRun, func() (*memory.ConsolidateResponse, error) { return s.Service.Consolidate(ctx, req) })
}

func (s *guarded) DreamTick(ctx context.Context, req *memory.DreamTickRequest) (*memory.DreamTickResponse, error) {
	return guardedCall(s.g, req == nil || !req.DryRun, func() (*memory.DreamTickResponse, error) { return s.Service.DreamTick(ctx, req) })
}

func (s *guarded) DecayTick(ctx context.Context, req *memory.DecayTickRequest) (*memory.DecayTickResponse, error) {
	return guardedCall(s.g, true, func() (*memory.DecayTickResponse, error) { return s.Service.DecayTick(ctx, req) })
}

func (s *guarded) SetMode(ctx context.Context, req *memory.SetModeRequest) error {
	_, err := guardedCall(s.g, true, func() (struct{}, error) { return struct{}{}, s.Service.SetMode(ctx, req) })
	return err
}

func (s *guarded) Import(ctx context.Context, req *memory.ImportRequest, r io.Reader) (*memory.ImportResponse, error) {
	return guardedCall(s.g, true, func() (*memory.ImportResponse, error) { return s.Service.Import(ctx, req, r) })
}

func (s *guarded) Forget(ctx context.Context, req *memory.ForgetRequest) (*memory.ForgetResponse, error) {
	return guardedCall(s.g, false, func() (*memory.ForgetResponse, error) { return s.Service.Forget(ctx, req) })
}

func (s *guarded) Export(ctx context.Context, req *memory.ExportRequest, w io.Writer) (*memory.ExportResponse, error) {
	return guardedCall(s.g, false, func() (*memory.ExportResponse, error) { return s.Service.Export(ctx, req, w) })
}
