package testkit

import (
	"context"
	"io"

	"memsvc.dev/memsvc/pkg/memory"
)

// AcceptAll is a memory.Service that accepts every request and answers
// the smallest valid result, so that a call through a transport under test
// can fail only in the transport. Export writes the 7 bytes "archive",
// Import reads its whole stream, Record echoes the id asked for, and
// Namespaces lists Names.
type AcceptAll struct {
	Names []string
}

var _ memory.Service = AcceptAll{}

func (AcceptAll) EncodeStore(context.Context, *memory.EncodeStoreRequest) (*memory.EncodeStoreResponse, error) {
	return &memory.EncodeStoreResponse{Store: memory.StoreEpisodic}, nil
}
func (AcceptAll) EncodeBatch(context.Context, *memory.EncodeBatchRequest) (*memory.EncodeBatchResponse, error) {
	return &memory.EncodeBatchResponse{}, nil
}
func (AcceptAll) EncodeUpdate(context.Context, *memory.EncodeUpdateRequest) error { return nil }
func (AcceptAll) EncodeStoreRaw(context.Context, *memory.EncodeStoreRawRequest) (*memory.EncodeStoreRawResponse, error) {
	return &memory.EncodeStoreRawResponse{Visibility: memory.VisibilityNormal, SecrecyLevel: memory.SecrecyPublic}, nil
}
func (AcceptAll) EncodeBatchRaw(context.Context, *memory.EncodeBatchStoreRawRequest) (*memory.EncodeBatchStoreRawResponse, error) {
	return &memory.EncodeBatchStoreRawResponse{}, nil
}
func (AcceptAll) RecallQuery(context.Context, *memory.RecallQueryRequest) (*memory.RecallQueryResponse, error) {
	return &memory.RecallQueryResponse{}, nil
}
func (AcceptAll) RecallRaw(context.Context, *memory.RecallRawQueryRequest) (*memory.RecallRawQueryResponse, error) {
	return &memory.RecallRawQueryResponse{}, nil
}
func (AcceptAll) RecallAssociate(context.Context, *memory.RecallAssociateRequest) (*memory.RecallAssociateResponse, error) {
	return &memory.RecallAssociateResponse{}, nil
}
func (AcceptAll) RecallTimeline(context.Context, *memory.RecallTimelineRequest) (*memory.RecallTimelineResponse, error) {
	return &memory.RecallTimelineResponse{}, nil
}
func (AcceptAll) RecallGraph(context.Context, *memory.RecallGraphRequest) (*memory.RecallGraphResponse, error) {
	return &memory.RecallGraphResponse{}, nil
}
func (AcceptAll) Consolidate(context.Context, *memory.ConsolidateRequest) (*memory.ConsolidateResponse, error) {
	return &memory.ConsolidateResponse{}, nil
}
func (AcceptAll) DreamTick(context.Context, *memory.DreamTickRequest) (*memory.DreamTickResponse, error) {
	return &memory.DreamTickResponse{}, nil
}
func (AcceptAll) DecayTick(context.Context, *memory.DecayTickRequest) (*memory.DecayTickResponse, error) {
	return &memory.DecayTickResponse{}, nil
}
func (AcceptAll) SetMode(context.Context, *memory.SetModeRequest) error { return nil }
func (AcceptAll) Forget(context.Context, *memory.ForgetRequest) (*memory.ForgetResponse, error) {
	return &memory.ForgetResponse{}, nil
}
func (AcceptAll) Export(_ context.Context, _ *memory.ExportRequest, w io.Writer) (*memory.ExportResponse, error) {
	n, err := io.WriteString(w, "archive")
	return &memory.ExportResponse{ArchiveID: "a", SizeBytes: uint64(n)}, err
}
func (AcceptAll) Import(_ context.Context, _ *memory.ImportRequest, r io.Reader) (*memory.ImportResponse, error) {
	_, err := io.Copy(io.Discard, r)
	return &memory.ImportResponse{}, err
}
func (AcceptAll) Stats(context.Context) (*memory.Stats, error)    { return &memory.Stats{}, nil }
func (AcceptAll) StatsAll(context.Context) (*memory.Stats, error) { return &memory.Stats{}, nil }
func (AcceptAll) Record(_ context.Context, req *memory.IntrospectRecordRequest) (*memory.MemoryRecord, error) {
	return &memory.MemoryRecord{ID: req.RecordID, Store: memory.StoreEpisodic, Meta: memory.LegacyMeta()}, nil
}
func (AcceptAll) DecayForecast(context.Context, *memory.DecayForecastRequest) (*memory.DecayForecastResponse, error) {
	return &memory.DecayForecastResponse{}, nil
}
func (AcceptAll) Evolution(context.Context) (*memory.EvolutionMetrics, error) {
	return &memory.EvolutionMetrics{}, nil
}
func (a AcceptAll) Namespaces(context.Context) (*memory.NamespacesResponse, error) {
	out := &memory.NamespacesResponse{Namespaces: make([]memory.NamespaceInfo, 0, len(a.Names))}
	for _, n := range a.Names {
		out.Namespaces = append(out.Namespaces, memory.NamespaceInfo{Name: n, RecordsByStore: map[string]uint32{}})
	}
	return out, nil
}
func (AcceptAll) DropNamespace(_ context.Context, req *memory.DropNamespaceRequest) (*memory.DropNamespaceResponse, error) {
	return &memory.DropNamespaceResponse{Name: req.Name}, nil
}

// RawTexts returns the text of each raw entry in recs, in order (""
// for an entry without text), as a fake server that stored them reports
// what it received.
func RawTexts(recs []memory.EncodeStoreRawRequest) []string {
	var out []string
	for _, r := range recs {
		s, _ := r.Content.Text()
		out = append(out, s)
	}
	return out
}
