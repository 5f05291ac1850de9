package memory

import (
	"bytes"
	"encoding/json"
	"time"
)

// This file is the CMP request and response model: one pair of types per
// operation, with the JSON shapes of the wire contract. Request types that
// have defaults apply them when decoded from JSON; in-process callers start
// from the matching Default... constructor.
//
// Pointer fields are the nullable ones: nil means "absent" and serialises
// as null.

// CMPHeader is the optional protocol header every request may carry. It is
// parsed and otherwise ignored.
type CMPHeader struct {
	Protocol  string    `json:"protocol"`
	Version   string    `json:"version"`
	RequestID ID        `json:"request_id"`
	Timestamp time.Time `json:"timestamp"`
}

// TemporalRange is an inclusive time range.
type TemporalRange struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// Contains reports whether t lies within the inclusive range.
func (r TemporalRange) Contains(t time.Time) bool {
	return !t.Before(r.Start) && !t.After(r.End)
}

// PageCursor is a point in the order of records by creation time, ties
// broken by id: the last record of a page, where the next page continues.
// Every record of a batch has the same creation time, so a time alone
// cannot say where a page ended.
type PageCursor struct {
	CreatedAt time.Time `json:"created_at"`
	ID        ID        `json:"id"`
}

// Compare orders a record created at t with the given id against the
// cursor: -1 when it comes first in oldest-first order, 0 when it is the
// cursor's record, +1 when it comes later.
func (c PageCursor) Compare(t time.Time, id ID) int {
	if x := t.Compare(c.CreatedAt); x != 0 {
		return x
	}
	return bytes.Compare(id[:], c.ID[:])
}

// EncodeContext is the optional context of an encode; it is stored in the
// record's metadata under "_context".
type EncodeContext struct {
	Source    *string         `json:"source"`
	SessionID *string         `json:"session_id"`
	Spatial   json.RawMessage `json:"spatial"`
	Temporal  json.RawMessage `json:"temporal"`
}

// ManualAssociation is an edge the caller asks for when storing a record.
type ManualAssociation struct {
	TargetID        ID              `json:"target_id"`
	AssociationType AssociationType `json:"association_type"`
	Weight          float64         `json:"weight"`
}

// EncodeStoreRequest is encode.store.
type EncodeStoreRequest struct {
	Header       *CMPHeader          `json:"header"`
	Content      MemoryContent       `json:"content"`
	Store        *StoreType          `json:"store"`
	Emotion      *EmotionVector      `json:"emotion"`
	Context      *EncodeContext      `json:"context"`
	Metadata     JSON                `json:"metadata"`
	Associations []ManualAssociation `json:"associations"`
	Meta         *MetaMemory         `json:"meta"`
}

// EncodeStoreResponse reports a stored record.
type EncodeStoreResponse struct {
	RecordID            ID        `json:"record_id"`
	Store               StoreType `json:"store"`
	InitialFidelity     float64   `json:"initial_fidelity"`
	AssociationsCreated uint32    `json:"associations_created"`
}

// EncodeBatchRequest is encode.batch: up to MaxBatchRecords records, stored
// atomically (all or none).
type EncodeBatchRequest struct {
	Header            *CMPHeader           `json:"header"`
	Records           []EncodeStoreRequest `json:"records"`
	InferAssociations bool                 `json:"infer_associations"`
}

// EncodeBatchResponse has one result per record, in order.
type EncodeBatchResponse struct {
	Results              []EncodeStoreResponse `json:"results"`
	AssociationsInferred uint32                `json:"associations_inferred"`
}

// EncodeUpdateRequest is encode.update. Each non-nil field replaces the
// stored value wholesale.
type EncodeUpdateRequest struct {
	Header   *CMPHeader     `json:"header"`
	RecordID ID             `json:"record_id"`
	Content  *MemoryContent `json:"content"`
	Emotion  *EmotionVector `json:"emotion"`
	Metadata JSON           `json:"metadata"`
	Meta     *MetaMemory    `json:"meta"`
}

// EncodeStoreRawRequest is encode.store_raw. RecordID is optional: a
// client-generated id makes a repeated request a no-op, so retries and
// spool replays never duplicate an entry.
type EncodeStoreRawRequest struct {
	Header       *CMPHeader    `json:"header"`
	RecordID     *ID           `json:"record_id"`
	SessionID    string        `json:"session_id"`
	TurnID       *string       `json:"turn_id"`
	TopicID      *string       `json:"topic_id"`
	Source       RawSource     `json:"source"`
	Speaker      RawSpeaker    `json:"speaker"`
	Visibility   Visibility    `json:"visibility"`
	SecrecyLevel SecrecyLevel  `json:"secrecy_level"`
	Content      MemoryContent `json:"content"`
	Metadata     JSON          `json:"metadata"`
	Meta         *MetaMemory   `json:"meta"`
}

// DefaultEncodeStoreRawRequest has the defaults a request without source,
// speaker, visibility or secrecy gets: conversation, user, normal and
// sensitive (the cautious choice when the caller did not classify it).
func DefaultEncodeStoreRawRequest() EncodeStoreRawRequest {
	return EncodeStoreRawRequest{Source: SourceConversation, Speaker: SpeakerUser, Visibility: VisibilityNormal, SecrecyLevel: SecrecySensitive}
}

// UnmarshalJSON applies the defaults of DefaultEncodeStoreRawRequest.
func (r *EncodeStoreRawRequest) UnmarshalJSON(b []byte) error {
	type plain EncodeStoreRawRequest
	return decodeOver(b, (*plain)(r), plain(DefaultEncodeStoreRawRequest()))
}

// EncodeStoreRawResponse reports a stored raw entry. Duplicate is true when
// the request named an id that was already stored and nothing was written.
type EncodeStoreRawResponse struct {
	RecordID     ID           `json:"record_id"`
	SessionID    string       `json:"session_id"`
	Visibility   Visibility   `json:"visibility"`
	SecrecyLevel SecrecyLevel `json:"secrecy_level"`
	Duplicate    bool         `json:"duplicate"`
}

// EncodeBatchStoreRawRequest is encode.batch_raw: up to MaxBatchRecords
// entries, stored atomically.
type EncodeBatchStoreRawRequest struct {
	Header  *CMPHeader              `json:"header"`
	Records []EncodeStoreRawRequest `json:"records"`
}

// EncodeBatchStoreRawResponse has one result per entry, in order.
type EncodeBatchStoreRawResponse struct {
	Results []EncodeStoreRawResponse `json:"results"`
}

// RecallCue is what a recall looks for. Every field is optional.
type RecallCue struct {
	Text      *string         `json:"text"`
	Image     Bytes           `json:"image"`
	Audio     Bytes           `json:"audio"`
	Emotion   *EmotionVector  `json:"emotion"`
	Temporal  *TemporalRange  `json:"temporal"`
	Spatial   json.RawMessage `json:"spatial"`
	Semantic  json.RawMessage `json:"semantic"`
	Embedding []float32       `json:"embedding"`
}

// RecallQueryRequest is recall.query. A nil RecallMode means "not named":
// the persisted mode of the searched stores applies.
type RecallQueryRequest struct {
	Header          *CMPHeader  `json:"header"`
	Cue             RecallCue   `json:"cue"`
	Stores          []StoreType `json:"stores"`
	Limit           uint32      `json:"limit"`
	MinFidelity     *float64    `json:"min_fidelity"`
	IncludeDecayed  bool        `json:"include_decayed"`
	Reconsolidate   bool        `json:"reconsolidate"`
	ActivationDepth uint32      `json:"activation_depth"`
	RecallMode      *RecallMode `json:"recall_mode"`
	// Before keeps only the records that follow the cursor in newest-first
	// order: the next page of a recency listing.
	Before *PageCursor `json:"before,omitempty"`
}

// DefaultRecallQueryRequest: limit 10, reconsolidate, activation depth 2.
func DefaultRecallQueryRequest() RecallQueryRequest {
	return RecallQueryRequest{Limit: 10, Reconsolidate: true, ActivationDepth: 2}
}

// UnmarshalJSON applies the defaults of DefaultRecallQueryRequest.
func (r *RecallQueryRequest) UnmarshalJSON(b []byte) error {
	type plain RecallQueryRequest
	return decodeOver(b, (*plain)(r), plain(DefaultRecallQueryRequest()))
}

// RecalledMemory is one recall hit.
type RecalledMemory struct {
	Record          MemoryRecord  `json:"record"`
	RelevanceScore  float64       `json:"relevance_score"`
	ActivationPath  []ID          `json:"activation_path"`
	RenderedContent MemoryContent `json:"rendered_content"`
}

// QueryMetadata describes how a recall was answered.
type QueryMetadata struct {
	TotalRecordsScanned uint32      `json:"total_records_scanned"`
	StoresSearched      []StoreType `json:"stores_searched"`
	FidelityFiltered    uint32      `json:"fidelity_filtered"`
}

// ActivationTrace records a spreading activation.
type ActivationTrace struct {
	SourceID    ID           `json:"source_id"`
	Activations []Activation `json:"activations"`
}

// Activation is one node reached by spreading activation.
type Activation struct {
	RecordID        ID               `json:"record_id"`
	ActivationLevel float64          `json:"activation_level"`
	Hop             uint32           `json:"hop"`
	EdgeType        *AssociationType `json:"edge_type"`
}

// RecallQueryResponse answers recall.query.
type RecallQueryResponse struct {
	Memories        []RecalledMemory `json:"memories"`
	ActivationTrace *ActivationTrace `json:"activation_trace"`
	TotalCandidates uint32           `json:"total_candidates"`
	QueryMetadata   *QueryMetadata   `json:"query_metadata,omitempty"`
}

// RecallRawQueryRequest is recall.raw_query. A nil SecrecyLevels means
// public and sensitive; an empty, non-nil list matches nothing.
type RecallRawQueryRequest struct {
	Header                *CMPHeader     `json:"header"`
	SessionID             *string        `json:"session_id"`
	Query                 *string        `json:"query"`
	Temporal              *TemporalRange `json:"temporal"`
	Limit                 uint32         `json:"limit"`
	IncludePrivateScratch bool           `json:"include_private_scratch"`
	IncludeSealed         bool           `json:"include_sealed"`
	SecrecyLevels         []SecrecyLevel `json:"secrecy_levels"`
	// Before keeps only the entries that follow the cursor in the
	// answer's newest-first order: the next page.
	Before *PageCursor `json:"before,omitempty"`
}

// DefaultRecallRawQueryRequest: limit 10.
func DefaultRecallRawQueryRequest() RecallRawQueryRequest {
	return RecallRawQueryRequest{Limit: 10}
}

// UnmarshalJSON applies the defaults of DefaultRecallRawQueryRequest.
func (r *RecallRawQueryRequest) UnmarshalJSON(b []byte) error {
	type plain RecallRawQueryRequest
	return decodeOver(b, (*plain)(r), plain(DefaultRecallRawQueryRequest()))
}

// RecallRawQueryResponse answers recall.raw_query, newest entries first.
type RecallRawQueryResponse struct {
	Records         []RawJournalRecord `json:"records"`
	TotalCandidates uint32             `json:"total_candidates"`
}

// RecallAssociateRequest is recall.associate.
type RecallAssociateRequest struct {
	Header           *CMPHeader        `json:"header"`
	RecordID         ID                `json:"record_id"`
	AssociationTypes []AssociationType `json:"association_types"`
	Depth            uint32            `json:"depth"`
	MinWeight        float64           `json:"min_weight"`
	Limit            uint32            `json:"limit"`
}

// DefaultRecallAssociateRequest: depth 2, min weight 0.1, limit 10.
func DefaultRecallAssociateRequest() RecallAssociateRequest {
	return RecallAssociateRequest{Depth: 2, MinWeight: 0.1, Limit: 10}
}

// UnmarshalJSON applies the defaults of DefaultRecallAssociateRequest.
func (r *RecallAssociateRequest) UnmarshalJSON(b []byte) error {
	type plain RecallAssociateRequest
	return decodeOver(b, (*plain)(r), plain(DefaultRecallAssociateRequest()))
}

// RecallAssociateResponse answers recall.associate.
type RecallAssociateResponse struct {
	Memories        []RecalledMemory `json:"memories"`
	TotalCandidates uint32           `json:"total_candidates"`
}

// RecallTimelineRequest is recall.timeline. Limit (an addition to the
// upstream request) bounds the memories returned across all buckets,
// oldest first; nil means MaxTimelineLimit.
type RecallTimelineRequest struct {
	Header        *CMPHeader      `json:"header"`
	Range         TemporalRange   `json:"range"`
	Granularity   TimeGranularity `json:"granularity"`
	MinFidelity   *float64        `json:"min_fidelity"`
	EmotionFilter *EmotionVector  `json:"emotion_filter"`
	Limit         *uint32         `json:"limit"`
	// After keeps only the records that follow the cursor in the answer's
	// oldest-first order: the rest of a truncated window.
	After *PageCursor `json:"after,omitempty"`
}

// DefaultRecallTimelineRequest: hourly buckets.
func DefaultRecallTimelineRequest() RecallTimelineRequest {
	return RecallTimelineRequest{Granularity: GranularityHour}
}

// UnmarshalJSON applies the defaults of DefaultRecallTimelineRequest.
func (r *RecallTimelineRequest) UnmarshalJSON(b []byte) error {
	type plain RecallTimelineRequest
	return decodeOver(b, (*plain)(r), plain(DefaultRecallTimelineRequest()))
}

// TimelineBucket is one non-empty time bucket.
type TimelineBucket struct {
	Start    time.Time        `json:"start"`
	End      time.Time        `json:"end"`
	Memories []RecalledMemory `json:"memories"`
	Count    uint32           `json:"count"`
}

// RecallTimelineResponse answers recall.timeline. Truncated (an addition
// to the upstream answer) reports that the range holds more memories than
// the limit let through: ask again with a range that starts after the last
// one returned. It is sent only when true, so a complete answer has
// upstream's shape.
type RecallTimelineResponse struct {
	Buckets   []TimelineBucket `json:"buckets"`
	Truncated bool             `json:"truncated,omitempty"`
}

// RecallGraphRequest is recall.graph.
type RecallGraphRequest struct {
	Header      *CMPHeader `json:"header"`
	CenterID    *ID        `json:"center_id"`
	Depth       uint32     `json:"depth"`
	EdgeTypes   []string   `json:"edge_types"`
	LimitNodes  uint32     `json:"limit_nodes"`
	IncludeMeta bool       `json:"include_meta"`
}

// DefaultRecallGraphRequest: depth 2, 10 nodes.
func DefaultRecallGraphRequest() RecallGraphRequest {
	return RecallGraphRequest{Depth: 2, LimitNodes: 10}
}

// UnmarshalJSON applies the defaults of DefaultRecallGraphRequest.
func (r *RecallGraphRequest) UnmarshalJSON(b []byte) error {
	type plain RecallGraphRequest
	return decodeOver(b, (*plain)(r), plain(DefaultRecallGraphRequest()))
}

// GraphNode is a node of a recall.graph answer.
type GraphNode struct {
	ID       ID          `json:"id"`
	Store    StoreType   `json:"store"`
	Summary  *string     `json:"summary"`
	Fidelity float64     `json:"fidelity"`
	Meta     *MetaMemory `json:"meta,omitempty"`
}

// GraphEdge is an edge of a recall.graph answer.
type GraphEdge struct {
	Source   ID              `json:"source"`
	Target   ID              `json:"target"`
	EdgeType AssociationType `json:"edge_type"`
	Weight   float64         `json:"weight"`
}

// RecallGraphResponse answers recall.graph.
type RecallGraphResponse struct {
	Nodes      []GraphNode `json:"nodes"`
	Edges      []GraphEdge `json:"edges"`
	TotalNodes uint32      `json:"total_nodes"`
	MetaEdges  []MetaEdge  `json:"meta_edges"`
}

// ConsolidateRequest is lifecycle.consolidate.
type ConsolidateRequest struct {
	Header         *CMPHeader            `json:"header"`
	Strategy       ConsolidationStrategy `json:"strategy"`
	MinAgeHours    uint32                `json:"min_age_hours"`
	MinAccessCount uint32                `json:"min_access_count"`
	DryRun         bool                  `json:"dry_run"`
}

// DefaultConsolidateRequest: incremental strategy.
func DefaultConsolidateRequest() ConsolidateRequest {
	return ConsolidateRequest{Strategy: ConsolidateIncremental}
}

// UnmarshalJSON applies the defaults of DefaultConsolidateRequest.
func (r *ConsolidateRequest) UnmarshalJSON(b []byte) error {
	type plain ConsolidateRequest
	return decodeOver(b, (*plain)(r), plain(DefaultConsolidateRequest()))
}

// ConsolidateResponse reports a consolidation.
type ConsolidateResponse struct {
	RecordsProcessed     uint32 `json:"records_processed"`
	RecordsMigrated      uint32 `json:"records_migrated"`
	RecordsCompressed    uint32 `json:"records_compressed"`
	RecordsPruned        uint32 `json:"records_pruned"`
	SemanticNodesCreated uint32 `json:"semantic_nodes_created"`
}

// DreamTickRequest is lifecycle.dream_tick.
type DreamTickRequest struct {
	Header                *CMPHeader     `json:"header"`
	SessionID             *string        `json:"session_id"`
	DryRun                bool           `json:"dry_run"`
	MaxGroups             uint32         `json:"max_groups"`
	IncludePrivateScratch bool           `json:"include_private_scratch"`
	IncludeSealed         bool           `json:"include_sealed"`
	PromoteSemantic       bool           `json:"promote_semantic"`
	SecrecyLevels         []SecrecyLevel `json:"secrecy_levels"`
}

// DefaultDreamTickRequest: 10 groups, semantic promotion on.
func DefaultDreamTickRequest() DreamTickRequest {
	return DreamTickRequest{MaxGroups: 10, PromoteSemantic: true}
}

// UnmarshalJSON applies the defaults of DefaultDreamTickRequest.
func (r *DreamTickRequest) UnmarshalJSON(b []byte) error {
	type plain DreamTickRequest
	return decodeOver(b, (*plain)(r), plain(DefaultDreamTickRequest()))
}

// DreamTickResponse reports a dream tick.
type DreamTickResponse struct {
	GroupsProcessed          uint32 `json:"groups_processed"`
	RawRecordsProcessed      uint32 `json:"raw_records_processed"`
	EpisodicSummariesCreated uint32 `json:"episodic_summaries_created"`
	SemanticNodesCreated     uint32 `json:"semantic_nodes_created"`
}

// DecayTickRequest is lifecycle.decay_tick. Nil duration means 3600 s.
// A duration over MaxDecayTickSeconds needs AllowLong (an addition to the
// upstream request).
type DecayTickRequest struct {
	Header              *CMPHeader `json:"header"`
	TickDurationSeconds *uint32    `json:"tick_duration_seconds"`
	AllowLong           bool       `json:"allow_long"`
}

// DecayTickResponse reports a decay tick.
type DecayTickResponse struct {
	RecordsUpdated        uint32 `json:"records_updated"`
	RecordsBelowThreshold uint32 `json:"records_below_threshold"`
	RecordsPruned         uint32 `json:"records_pruned"`
}

// SetModeRequest is lifecycle.set_mode. A nil or empty Scope means every
// store.
type SetModeRequest struct {
	Header *CMPHeader  `json:"header"`
	Mode   RecallMode  `json:"mode"`
	Scope  []StoreType `json:"scope"`
}

// ForgetRequest is lifecycle.forget. The selectors are unioned. Confirm
// must be present and true.
type ForgetRequest struct {
	Header        *CMPHeader     `json:"header"`
	RecordIDs     []ID           `json:"record_ids"`
	Store         *StoreType     `json:"store"`
	TemporalRange *TemporalRange `json:"temporal_range"`
	// Cascade also deletes the direct association targets of the listed
	// records (one hop, outgoing), following only the links a client made
	// (the associations of a store or batch request) and derivation links
	// (a dream summary and its semantic node, a consolidated copy and its
	// source), never the similarity links memsvc adds on its own.
	Cascade bool  `json:"cascade"`
	Confirm *bool `json:"confirm"`
}

// ForgetResponse reports how many records were deleted.
type ForgetResponse struct {
	RecordsDeleted uint32 `json:"records_deleted"`
}

// ExportRequest is lifecycle.export. With IncludeRawJournal, sealed and
// secret raw entries stay out unless IncludeSealed / IncludeSecret ask for
// them (additions to the upstream request).
type ExportRequest struct {
	Header            *CMPHeader  `json:"header"`
	Format            string      `json:"format"`
	Stores            []StoreType `json:"stores"`
	IncludeRawJournal bool        `json:"include_raw_journal"`
	Encrypt           bool        `json:"encrypt"`
	EncryptionKey     *string     `json:"encryption_key"`
	IncludeSealed     bool        `json:"include_sealed"`
	IncludeSecret     bool        `json:"include_secret"`
	// Namespaces picks the namespaces to export (an addition to the
	// upstream request): absent or empty, the caller's namespace (the one
	// its context names); a list of names, those namespaces; the single
	// name AllNamespaces, every namespace. Every entry of the archive
	// carries its namespace. Transports must check that the caller may
	// see every namespace it names.
	Namespaces []string `json:"namespaces,omitempty"`
}

// AllNamespaces, as the only name in ExportRequest.Namespaces, exports
// every namespace.
const AllNamespaces = "*"

// DefaultExportRequest: the cma format.
func DefaultExportRequest() ExportRequest { return ExportRequest{Format: "cma"} }

// ExportFormats returns the accepted values of ExportRequest.Format, a new
// slice on every call: cma, and jsonl, an alias that writes the same CMA
// archive.
func ExportFormats() []string { return []string{"cma", "jsonl"} }

// UnmarshalJSON applies the defaults of DefaultExportRequest.
func (r *ExportRequest) UnmarshalJSON(b []byte) error {
	type plain ExportRequest
	return decodeOver(b, (*plain)(r), plain(DefaultExportRequest()))
}

// ExportResponse describes a written archive.
type ExportResponse struct {
	ArchiveID   string `json:"archive_id"`
	SizeBytes   uint64 `json:"size_bytes"`
	RecordCount uint32 `json:"record_count"`
	Checksum    string `json:"checksum"`
}

// ImportRequest is lifecycle.import. The archive's entries go into the
// caller's namespace (the one its context names), whatever namespace they
// were exported from, unless PreserveNamespaces is set.
type ImportRequest struct {
	Header             *CMPHeader         `json:"header"`
	ArchiveID          string             `json:"archive_id"`
	Strategy           ImportStrategy     `json:"strategy"`
	ConflictResolution ConflictResolution `json:"conflict_resolution"`
	DecryptionKey      *string            `json:"decryption_key"`
	ArchiveData        Bytes              `json:"archive_data"`
	// PreserveNamespaces puts every entry into the namespace the archive
	// names for it (the default namespace when it names none), creating
	// namespaces as needed; with strategy replace it empties every
	// namespace first. Only for a caller that may use every namespace:
	// transports must refuse it to others. An addition to the upstream
	// request.
	PreserveNamespaces bool `json:"preserve_namespaces,omitempty"`
}

// DefaultImportRequest: merge, keep the newer copy.
func DefaultImportRequest() ImportRequest {
	return ImportRequest{Strategy: ImportMerge, ConflictResolution: KeepNewer}
}

// UnmarshalJSON applies the defaults of DefaultImportRequest.
func (r *ImportRequest) UnmarshalJSON(b []byte) error {
	type plain ImportRequest
	return decodeOver(b, (*plain)(r), plain(DefaultImportRequest()))
}

// ImportResponse reports how many records (curated and raw) were imported.
// RecordsSkipped and RawConflicts are additions to the upstream answer.
type ImportResponse struct {
	RecordsImported uint32 `json:"records_imported"`
	// RecordsSkipped counts archive entries left out because the store
	// already holds their id: curated records whose stored copy won the
	// conflict resolution, and raw entries (the raw journal is verbatim and
	// never changes under import).
	RecordsSkipped uint32 `json:"records_skipped"`
	// RawConflicts counts the skipped raw entries that differ from the
	// stored entry of the same id; the stored entry was kept.
	RawConflicts uint32 `json:"raw_conflicts"`
}

// IntrospectRecordRequest is introspect.record. The include flags are
// accepted for compatibility; the full record is always returned.
type IntrospectRecordRequest struct {
	Header              *CMPHeader `json:"header"`
	RecordID            ID         `json:"record_id"`
	IncludeHistory      bool       `json:"include_history"`
	IncludeAssociations bool       `json:"include_associations"`
	IncludeVersions     bool       `json:"include_versions"`
}

// DecayForecastRequest is introspect.decay_forecast.
type DecayForecastRequest struct {
	Header     *CMPHeader `json:"header"`
	RecordIDs  []ID       `json:"record_ids"`
	ForecastAt time.Time  `json:"forecast_at"`
}

// DecayForecast is the forecast for one record.
type DecayForecast struct {
	RecordID               ID         `json:"record_id"`
	CurrentFidelity        float64    `json:"current_fidelity"`
	ForecastedFidelity     float64    `json:"forecasted_fidelity"`
	EstimatedThresholdDate *time.Time `json:"estimated_threshold_date"`
}

// DecayForecastResponse answers introspect.decay_forecast.
type DecayForecastResponse struct {
	Forecasts []DecayForecast `json:"forecasts"`
}

// ParameterAdjustment is one parameter change the evolution engine made.
type ParameterAdjustment struct {
	Store         StoreType `json:"store"`
	Parameter     string    `json:"parameter"`
	OriginalValue float64   `json:"original_value"`
	CurrentValue  float64   `json:"current_value"`
	Reason        string    `json:"reason"`
}

// EvolutionMetrics is introspect.evolution.
type EvolutionMetrics struct {
	ParameterAdjustments []ParameterAdjustment `json:"parameter_adjustments"`
	DetectedPatterns     []string              `json:"detected_patterns"`
	SchemaAdaptations    []string              `json:"schema_adaptations"`
}

// Stats is introspect.stats.
type Stats struct {
	TotalRecords           uint32                `json:"total_records"`
	RecordsByStore         map[StoreType]uint32  `json:"records_by_store"`
	TotalAssociations      uint32                `json:"total_associations"`
	AvgFidelity            float64               `json:"avg_fidelity"`
	AvgFidelityByStore     map[StoreType]float64 `json:"avg_fidelity_by_store"`
	OldestRecord           *time.Time            `json:"oldest_record"`
	NewestRecord           *time.Time            `json:"newest_record"`
	TotalRecallCount       uint64                `json:"total_recall_count"`
	RawJournalRecords      uint32                `json:"raw_journal_records"`
	RawJournalPendingDream uint32                `json:"raw_journal_pending_dream"`
	VectorIndexRecords     uint32                `json:"vector_index_records"`
	VectorSearchBackend    string                `json:"vector_search_backend"`
	DreamEpisodicSummaries uint32                `json:"dream_episodic_summaries"`
	DreamSemanticNodes     uint32                `json:"dream_semantic_nodes"`
	LastDreamTickAt        *time.Time            `json:"last_dream_tick_at"`
	EvolutionMetrics       *EvolutionMetrics     `json:"evolution_metrics"`
	BackgroundDecayEnabled bool                  `json:"background_decay_enabled"`
	BackgroundDreamEnabled bool                  `json:"background_dream_enabled"`
	// QuarantinedRecords counts stored values that could not be read
	// (damaged bytes, or an encrypted value that does not authenticate):
	// they stay on disk untouched and out of every index. An addition to
	// the upstream answer.
	QuarantinedRecords uint32 `json:"quarantined_records"`
}

// decodeOver decodes the JSON object b over def, so that the fields b
// leaves out keep their defaults, and stores the result in dst; on error
// dst is left as it was. T is a request type's plain twin (the same fields
// without its methods), so that json.Unmarshal does not call the
// request's UnmarshalJSON again.
func decodeOver[T any](b []byte, dst *T, def T) error {
	if err := json.Unmarshal(b, &def); err != nil {
		return err
	}
	*dst = def
	return nil
}

// Wire shapes of the responses: lists are [] and maps {} when empty, never
// null, and the nullable request fields that have an "empty" Go value go out
// as null, so a request marshalled by a client means what it says.

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// nullableBytes is Bytes that marshals nil as null (an absent cue or
// archive), not as an empty array.
type nullableBytes Bytes

func (b nullableBytes) MarshalJSON() ([]byte, error) {
	if b == nil {
		return []byte("null"), nil
	}
	return Bytes(b).MarshalJSON()
}

// MarshalJSON writes a nil metadata as null ("leave it unchanged"), not {}
// (which would replace the stored metadata).
func (r EncodeUpdateRequest) MarshalJSON() ([]byte, error) {
	return json.Marshal(updateJSON[*MemoryContent]{r.Header, r.RecordID, r.Content, r.Emotion, json.RawMessage(r.Metadata), r.Meta})
}

// MarshalJSON writes absent image and audio cues as null.
func (c RecallCue) MarshalJSON() ([]byte, error) {
	return json.Marshal(cueJSON[nullableBytes, []float32]{c.Text, nullableBytes(c.Image), nullableBytes(c.Audio), c.Emotion, c.Temporal, c.Spatial, c.Semantic, c.Embedding})
}

// MarshalJSON writes absent archive data as null.
func (r ImportRequest) MarshalJSON() ([]byte, error) {
	return json.Marshal(importJSON[nullableBytes]{r.Header, r.ArchiveID, r.Strategy, r.ConflictResolution, r.DecryptionKey, nullableBytes(r.ArchiveData), r.PreserveNamespaces})
}

// MarshalJSON writes an empty result list as [].
func (r EncodeBatchResponse) MarshalJSON() ([]byte, error) {
	type plain EncodeBatchResponse
	p := plain(r)
	p.Results = orEmpty(p.Results)
	return json.Marshal(p)
}

// MarshalJSON writes an empty result list as [].
func (r EncodeBatchStoreRawResponse) MarshalJSON() ([]byte, error) {
	type plain EncodeBatchStoreRawResponse
	p := plain(r)
	p.Results = orEmpty(p.Results)
	return json.Marshal(p)
}

// MarshalJSON writes an empty store list as [].
func (q QueryMetadata) MarshalJSON() ([]byte, error) {
	type plain QueryMetadata
	p := plain(q)
	p.StoresSearched = orEmpty(p.StoresSearched)
	return json.Marshal(p)
}

// MarshalJSON writes an empty activation list as [].
func (a ActivationTrace) MarshalJSON() ([]byte, error) {
	type plain ActivationTrace
	p := plain(a)
	p.Activations = orEmpty(p.Activations)
	return json.Marshal(p)
}

// MarshalJSON writes an empty record list as [].
func (r RecallRawQueryResponse) MarshalJSON() ([]byte, error) {
	type plain RecallRawQueryResponse
	p := plain(r)
	p.Records = orEmpty(p.Records)
	return json.Marshal(p)
}

// MarshalJSON writes empty node, edge and meta-edge lists as [].
func (r RecallGraphResponse) MarshalJSON() ([]byte, error) {
	type plain RecallGraphResponse
	p := plain(r)
	p.Nodes = orEmpty(p.Nodes)
	p.Edges = orEmpty(p.Edges)
	p.MetaEdges = orEmpty(p.MetaEdges)
	return json.Marshal(p)
}

// MarshalJSON writes an empty forecast list as [].
func (r DecayForecastResponse) MarshalJSON() ([]byte, error) {
	type plain DecayForecastResponse
	p := plain(r)
	p.Forecasts = orEmpty(p.Forecasts)
	return json.Marshal(p)
}

// MarshalJSON writes empty lists as [].
func (m EvolutionMetrics) MarshalJSON() ([]byte, error) {
	type plain EvolutionMetrics
	p := plain(m)
	p.ParameterAdjustments = orEmpty(p.ParameterAdjustments)
	p.DetectedPatterns = orEmpty(p.DetectedPatterns)
	p.SchemaAdaptations = orEmpty(p.SchemaAdaptations)
	return json.Marshal(p)
}

// MarshalJSON lists all five stores in records_by_store (zero when absent)
// and writes an empty avg_fidelity_by_store as {}.
func (s Stats) MarshalJSON() ([]byte, error) {
	type plain Stats
	p := plain(s)
	by := make(map[StoreType]uint32, len(AllStores()))
	for _, st := range AllStores() {
		by[st] = 0
	}
	for st, n := range s.RecordsByStore {
		by[st] = n
	}
	p.RecordsByStore = by
	if p.AvgFidelityByStore == nil {
		p.AvgFidelityByStore = map[StoreType]float64{}
	}
	return json.Marshal(p)
}
