package memory

import (
	"context"
	"io"
)

// Service is the set of CMP operations. The engine implements it in
// process and pkg/client implements it over HTTP; every command, transport
// and test that needs memory talks to this interface, so the two are
// interchangeable.
//
// Errors a client should see are *Error values (test with errors.Is against
// the sentinels); anything else is an internal failure.
type Service interface {
	// EncodeStore stores one curated record.
	EncodeStore(ctx context.Context, req *EncodeStoreRequest) (*EncodeStoreResponse, error)
	// EncodeBatch stores up to MaxBatchRecords records atomically.
	EncodeBatch(ctx context.Context, req *EncodeBatchRequest) (*EncodeBatchResponse, error)
	// EncodeUpdate replaces content, emotion, metadata or meta of a record.
	EncodeUpdate(ctx context.Context, req *EncodeUpdateRequest) error
	// EncodeStoreRaw appends one verbatim entry to the raw journal.
	EncodeStoreRaw(ctx context.Context, req *EncodeStoreRawRequest) (*EncodeStoreRawResponse, error)
	// EncodeBatchRaw appends up to MaxBatchRecords raw entries atomically.
	EncodeBatchRaw(ctx context.Context, req *EncodeBatchStoreRawRequest) (*EncodeBatchStoreRawResponse, error)

	// RecallQuery ranks curated records against text and embedding cues,
	// or lists the most recent ones when there is no cue.
	RecallQuery(ctx context.Context, req *RecallQueryRequest) (*RecallQueryResponse, error)
	// RecallRaw queries the raw journal, newest first.
	RecallRaw(ctx context.Context, req *RecallRawQueryRequest) (*RecallRawQueryResponse, error)
	// RecallAssociate spreads activation from a record along associations.
	RecallAssociate(ctx context.Context, req *RecallAssociateRequest) (*RecallAssociateResponse, error)
	// RecallTimeline groups records into time buckets.
	RecallTimeline(ctx context.Context, req *RecallTimelineRequest) (*RecallTimelineResponse, error)
	// RecallGraph returns the association graph around a record.
	RecallGraph(ctx context.Context, req *RecallGraphRequest) (*RecallGraphResponse, error)

	// Consolidate turns mature episodic memories into semantic ones.
	Consolidate(ctx context.Context, req *ConsolidateRequest) (*ConsolidateResponse, error)
	// DreamTick summarises pending raw journal entries into curated ones.
	DreamTick(ctx context.Context, req *DreamTickRequest) (*DreamTickResponse, error)
	// DecayTick advances the decay clock by a duration.
	DecayTick(ctx context.Context, req *DecayTickRequest) (*DecayTickResponse, error)
	// SetMode sets and persists the recall mode of the stores in scope.
	SetMode(ctx context.Context, req *SetModeRequest) error
	// Forget deletes records permanently; Confirm must be true.
	Forget(ctx context.Context, req *ForgetRequest) (*ForgetResponse, error)
	// Export writes a CMA archive to w.
	Export(ctx context.Context, req *ExportRequest, w io.Writer) (*ExportResponse, error)
	// Import reads a CMA archive from r; req.ArchiveData is not used.
	Import(ctx context.Context, req *ImportRequest, r io.Reader) (*ImportResponse, error)

	// Stats reports counts and averages without scanning the stores.
	Stats(ctx context.Context) (*Stats, error)
	// StatsAll is Stats over every namespace together. It is not scoped
	// by the namespace of ctx: transports allow it only to a caller that
	// may see every namespace.
	StatsAll(ctx context.Context) (*Stats, error)
	// Record returns one record.
	Record(ctx context.Context, req *IntrospectRecordRequest) (*MemoryRecord, error)
	// DecayForecast predicts fidelity at a future time.
	DecayForecast(ctx context.Context, req *DecayForecastRequest) (*DecayForecastResponse, error)
	// Evolution reports the parameter adjustments the engine made.
	Evolution(ctx context.Context) (*EvolutionMetrics, error)

	// Namespaces lists every namespace that holds data, and "default"
	// always, with its record counts. It is the one method that is not
	// scoped by the namespace of ctx: transports show a caller only the
	// namespaces its API key may see.
	Namespaces(ctx context.Context) (*NamespacesResponse, error)
	// DropNamespace deletes req.Name with everything in it, permanently;
	// req.Confirm must be true.
	DropNamespace(ctx context.Context, req *DropNamespaceRequest) (*DropNamespaceResponse, error)
}
