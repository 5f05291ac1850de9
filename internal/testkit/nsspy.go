package testkit

import (
	"context"
	"io"
	"maps"
	"sync"

	"memsvc.dev/memsvc/pkg/memory"
)

// NamespaceSpy is a memory.Service that passes every call to Svc and
// remembers the namespace each call's context named
// (memory.NamespaceFrom), by method name, so transport tests can prove
// that the namespace a request names is the one the service acts in.
type NamespaceSpy struct {
	Svc memory.Service

	mu   sync.Mutex
	seen map[string]string
}

var _ memory.Service = (*NamespaceSpy)(nil)

// Seen returns the namespace of the last call of method ("EncodeStore")
// and whether there was one.
func (s *NamespaceSpy) Seen(method string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ns, ok := s.seen[method]
	return ns, ok
}

// Calls returns the namespace of the last call of every method called
// since the last Reset.
func (s *NamespaceSpy) Calls() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.seen)
}

// Reset forgets every call.
func (s *NamespaceSpy) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = nil
}

func (s *NamespaceSpy) note(ctx context.Context, method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = map[string]string{}
	}
	s.seen[method] = memory.NamespaceFrom(ctx)
}

func (s *NamespaceSpy) EncodeStore(ctx context.Context, req *memory.EncodeStoreRequest) (*memory.EncodeStoreResponse, error) {
	s.note(ctx, "EncodeStore")
	return s.Svc.EncodeStore(ctx, req)
}

func (s *NamespaceSpy) EncodeBatch(ctx context.Context, req *memory.EncodeBatchRequest) (*memory.EncodeBatchResponse, error) {
	s.note(ctx, "EncodeBatch")
	return s.Svc.EncodeBatch(ctx, req)
}

func (s *NamespaceSpy) EncodeUpdate(ctx context.Context, req *memory.EncodeUpdateRequest) error {
	s.note(ctx, "EncodeUpdate")
	return s.Svc.EncodeUpdate(ctx, req)
}

func (s *NamespaceSpy) EncodeStoreRaw(ctx context.Context, req *memory.EncodeStoreRawRequest) (*memory.EncodeStoreRawResponse, error) {
	s.note(ctx, "EncodeStoreRaw")
	return s.Svc.EncodeStoreRaw(ctx, req)
}

func (s *NamespaceSpy) EncodeBatchRaw(ctx context.Context, req *memory.EncodeBatchStoreRawRequest) (*memory.EncodeBatchStoreRawResponse, error) {
	s.note(ctx, "EncodeBatchRaw")
	return s.Svc.EncodeBatchRaw(ctx, req)
}

func (s *NamespaceSpy) RecallQuery(ctx context.Context, req *memory.RecallQueryRequest) (*memory.RecallQueryResponse, error) {
	s.note(ctx, "RecallQuery")
	return s.Svc.RecallQuery(ctx, req)
}

func (s *NamespaceSpy) RecallRaw(ctx context.Context, req *memory.RecallRawQueryRequest) (*memory.RecallRawQueryResponse, error) {
	s.note(ctx, "RecallRaw")
	return s.Svc.RecallRaw(ctx, req)
}

func (s *NamespaceSpy) RecallAssociate(ctx context.Context, req *memory.RecallAssociateRequest) (*memory.RecallAssociateResponse, error) {
	s.note(ctx, "RecallAssociate")
	return s.Svc.RecallAssociate(ctx, req)
}

func (s *NamespaceSpy) RecallTimeline(ctx context.Context, req *memory.RecallTimelineRequest) (*memory.RecallTimelineResponse, error) {
	s.note(ctx, "RecallTimeline")
	return s.Svc.RecallTimeline(ctx, req)
}

func (s *NamespaceSpy) RecallGraph(ctx context.Context, req *memory.RecallGraphRequest) (*memory.RecallGraphResponse, error) {
	s.note(ctx, "RecallGraph")
	return s.Svc.RecallGraph(ctx, req)
}

func (s *NamespaceSpy) Consolidate(ctx context.Context, req *memory.ConsolidateRequest) (*memory.ConsolidateResponse, error) {
	s.note(ctx, "Consolidate")
	return s.Svc.Consolidate(ctx, req)
}

func (s *NamespaceSpy) DreamTick(ctx context.Context, req *memory.DreamTickRequest) (*memory.DreamTickResponse, error) {
	s.note(ctx, "DreamTick")
	return s.Svc.DreamTick(ctx, req)
}

func (s *NamespaceSpy) DecayTick(ctx context.Context, req *memory.DecayTickRequest) (*memory.DecayTickResponse, error) {
	s.note(ctx, "DecayTick")
	return s.Svc.DecayTick(ctx, req)
}

func (s *NamespaceSpy) SetMode(ctx context.Context, req *memory.SetModeRequest) error {
	s.note(ctx, "SetMode")
	return s.Svc.SetMode(ctx, req)
}

func (s *NamespaceSpy) Forget(ctx context.Context, req *memory.ForgetRequest) (*memory.ForgetResponse, error) {
	s.note(ctx, "Forget")
	return s.Svc.Forget(ctx, req)
}

func (s *NamespaceSpy) Export(ctx context.Context, req *memory.ExportRequest, w io.Writer) (*memory.ExportResponse, error) {
	s.note(ctx, "Export")
	return s.Svc.Export(ctx, req, w)
}

func (s *NamespaceSpy) Import(ctx context.Context, req *memory.ImportRequest, r io.Reader) (*memory.ImportResponse, error) {
	s.note(ctx, "Import")
	return s.Svc.Import(ctx, req, r)
}

func (s *NamespaceSpy) Stats(ctx context.Context) (*memory.Stats, error) {
	s.note(ctx, "Stats")
	return s.Svc.Stats(ctx)
}

func (s *NamespaceSpy) StatsAll(ctx context.Context) (*memory.Stats, error) {
	s.note(ctx, "StatsAll")
	return s.Svc.StatsAll(ctx)
}

func (s *NamespaceSpy) Record(ctx context.Context, req *memory.IntrospectRecordRequest) (*memory.MemoryRecord, error) {
	s.note(ctx, "Record")
	return s.Svc.Record(ctx, req)
}

func (s *NamespaceSpy) DecayForecast(ctx context.Context, req *memory.DecayForecastRequest) (*memory.DecayForecastResponse, error) {
	s.note(ctx, "DecayForecast")
	return s.Svc.DecayForecast(ctx, req)
}

func (s *NamespaceSpy) Evolution(ctx context.Context) (*memory.EvolutionMetrics, error) {
	s.note(ctx, "Evolution")
	return s.Svc.Evolution(ctx)
}

func (s *NamespaceSpy) Namespaces(ctx context.Context) (*memory.NamespacesResponse, error) {
	s.note(ctx, "Namespaces")
	return s.Svc.Namespaces(ctx)
}

func (s *NamespaceSpy) DropNamespace(ctx context.Context, req *memory.DropNamespaceRequest) (*memory.DropNamespaceResponse, error) {
	s.note(ctx, "DropNamespace")
	return s.Svc.DropNamespace(ctx, req)
}
