package memory

import "context"

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
	// RecallRaw queries the raw journal, newest first.
	RecallRaw(ctx context.Context, req *RecallRawQueryRequest) (*RecallRawQueryResponse, error)
	// Forget deletes records permanently; Confirm must be true.
	Forget(ctx context.Context, req *ForgetRequest) (*ForgetResponse, error)
	// Stats reports counts and averages without scanning the stores.
	Stats(ctx context.Context) (*Stats, error)
	// Record returns one record.
	Record(ctx context.Context, req *IntrospectRecordRequest) (*MemoryRecord, error)
}
