package grpcapi

import (
	"fmt"
	"slices"

	pb "memsvc.dev/memsvc/pkg/grpcapi/memsvcpb"
	"memsvc.dev/memsvc/pkg/memory"
)

// Requests and answers of the operations, both directions. Request
// decoders start from the model's Default... constructors, so an unset
// optional field or an UNSPECIFIED enum means what an absent JSON field
// means.

// ---------------------------------------------------------------- list wrappers

func storeList(d *decoder, f string, in *pb.StoreTypeList) []memory.StoreType {
	if in == nil {
		return nil
	}
	out := enums[memory.StoreType](d, f, in.GetValues())
	if out == nil {
		out = []memory.StoreType{}
	}
	return out
}

func secrecyList(d *decoder, f string, in *pb.SecrecyLevelList) []memory.SecrecyLevel {
	if in == nil {
		return nil
	}
	out := enums[memory.SecrecyLevel](d, f, in.GetValues())
	if out == nil {
		out = []memory.SecrecyLevel{}
	}
	return out
}

// ---------------------------------------------------------------- encode

func toModelEncodeStoreRequest(d *decoder, f string, in *pb.EncodeStoreRequest) *memory.EncodeStoreRequest {
	r := &memory.EncodeStoreRequest{
		Header:   d.header(join(f, "header"), in.GetHeader()),
		Content:  d.content(join(f, "content"), in.GetContent()),
		Store:    optEnum[memory.StoreType](d, join(f, "store"), in.GetStore()),
		Emotion:  optEmotion(in.GetEmotion()),
		Metadata: d.object(join(f, "metadata"), in.GetMetadata()),
		Meta:     d.optMeta(join(f, "meta"), in.GetMeta()),
	}
	if c := in.GetContext(); c != nil {
		r.Context = &memory.EncodeContext{
			Source:    clone(c.Source),
			SessionID: clone(c.SessionId),
			Spatial:   d.value(join(f, "context.spatial"), c.GetSpatial()),
			Temporal:  d.value(join(f, "context.temporal"), c.GetTemporal()),
		}
	}
	if n := len(in.GetAssociations()); n > 0 {
		r.Associations = make([]memory.ManualAssociation, n)
		for i, a := range in.GetAssociations() {
			af := index(join(f, "associations"), i)
			r.Associations[i] = memory.ManualAssociation{
				TargetID:        d.id(join(af, "target_id"), a.GetTargetId()),
				AssociationType: enum[memory.AssociationType](d, join(af, "association_type"), a.GetAssociationType()),
				Weight:          a.GetWeight(),
			}
		}
	}
	return r
}

func toProtoEncodeStoreResponse(_ *encoder, r *memory.EncodeStoreResponse) *pb.EncodeStoreResponse {
	return &pb.EncodeStoreResponse{RecordId: r.RecordID.String(), Store: pb.StoreType(r.Store), InitialFidelity: r.InitialFidelity, AssociationsCreated: r.AssociationsCreated}
}

func toModelEncodeBatchRequest(d *decoder, f string, in *pb.EncodeBatchRequest) *memory.EncodeBatchRequest {
	r := &memory.EncodeBatchRequest{Header: d.header(join(f, "header"), in.GetHeader()), InferAssociations: in.GetInferAssociations()}
	if n := len(in.GetRecords()); n > 0 {
		r.Records = make([]memory.EncodeStoreRequest, n)
		for i, rec := range in.GetRecords() {
			r.Records[i] = *toModelEncodeStoreRequest(d, index(join(f, "records"), i), rec)
		}
	}
	return r
}

func toProtoEncodeBatchResponse(e *encoder, r *memory.EncodeBatchResponse) *pb.EncodeBatchResponse {
	out := &pb.EncodeBatchResponse{AssociationsInferred: r.AssociationsInferred}
	if r.Results != nil {
		out.Results = make([]*pb.EncodeStoreResponse, len(r.Results))
		for i := range r.Results {
			out.Results[i] = toProtoEncodeStoreResponse(e, &r.Results[i])
		}
	}
	return out
}

func toModelEncodeUpdateRequest(d *decoder, f string, in *pb.EncodeUpdateRequest) *memory.EncodeUpdateRequest {
	return &memory.EncodeUpdateRequest{
		Header:   d.header(join(f, "header"), in.GetHeader()),
		RecordID: d.id(join(f, "record_id"), in.GetRecordId()),
		Content:  d.optContent(join(f, "content"), in.GetContent()),
		Emotion:  optEmotion(in.GetEmotion()),
		Metadata: d.object(join(f, "metadata"), in.GetMetadata()),
		Meta:     d.optMeta(join(f, "meta"), in.GetMeta()),
	}
}

func toModelEncodeStoreRawRequest(d *decoder, f string, in *pb.EncodeStoreRawRequest) *memory.EncodeStoreRawRequest {
	r := memory.DefaultEncodeStoreRawRequest()
	r.Header = d.header(join(f, "header"), in.GetHeader())
	r.RecordID = d.optID(join(f, "record_id"), in.RecordId)
	r.SessionID = in.GetSessionId()
	r.TurnID = clone(in.TurnId)
	r.TopicID = clone(in.TopicId)
	r.Source = enumOr(d, join(f, "source"), in.GetSource(), r.Source)
	r.Speaker = enumOr(d, join(f, "speaker"), in.GetSpeaker(), r.Speaker)
	r.Visibility = enumOr(d, join(f, "visibility"), in.GetVisibility(), r.Visibility)
	r.SecrecyLevel = enumOr(d, join(f, "secrecy_level"), in.GetSecrecyLevel(), r.SecrecyLevel)
	r.Content = d.content(join(f, "content"), in.GetContent())
	r.Metadata = d.object(join(f, "metadata"), in.GetMetadata())
	r.Meta = d.optMeta(join(f, "meta"), in.GetMeta())
	return &r
}

func toProtoEncodeStoreRawResponse(_ *encoder, r *memory.EncodeStoreRawResponse) *pb.EncodeStoreRawResponse {
	return &pb.EncodeStoreRawResponse{
		RecordId: r.RecordID.String(), SessionId: r.SessionID, Visibility: pb.Visibility(r.Visibility),
		SecrecyLevel: pb.SecrecyLevel(r.SecrecyLevel), Duplicate: r.Duplicate,
	}
}

func toModelEncodeBatchStoreRawRequest(d *decoder, f string, in *pb.EncodeBatchStoreRawRequest) *memory.EncodeBatchStoreRawRequest {
	r := &memory.EncodeBatchStoreRawRequest{Header: d.header(join(f, "header"), in.GetHeader())}
	if n := len(in.GetRecords()); n > 0 {
		r.Records = make([]memory.EncodeStoreRawRequest, n)
		for i, rec := range in.GetRecords() {
			r.Records[i] = *toModelEncodeStoreRawRequest(d, index(join(f, "records"), i), rec)
		}
	}
	return r
}

func toProtoEncodeBatchStoreRawResponse(e *encoder, r *memory.EncodeBatchStoreRawResponse) *pb.EncodeBatchStoreRawResponse {
	out := &pb.EncodeBatchStoreRawResponse{}
	if r.Results != nil {
		out.Results = make([]*pb.EncodeStoreRawResponse, len(r.Results))
		for i := range r.Results {
			out.Results[i] = toProtoEncodeStoreRawResponse(e, &r.Results[i])
		}
	}
	return out
}

// ---------------------------------------------------------------- recall

func toModelRecallQueryRequest(d *decoder, f string, in *pb.RecallQueryRequest) *memory.RecallQueryRequest {
	r := memory.DefaultRecallQueryRequest()
	r.Header = d.header(join(f, "header"), in.GetHeader())
	if c := in.GetCue(); c != nil {
		cf := join(f, "cue")
		r.Cue = memory.RecallCue{
			Text:      clone(c.Text),
			Image:     memory.Bytes(c.GetImage()),
			Audio:     memory.Bytes(c.GetAudio()),
			Emotion:   optEmotion(c.GetEmotion()),
			Temporal:  d.optTemporalRange(join(cf, "temporal"), c.GetTemporal()),
			Spatial:   d.value(join(cf, "spatial"), c.GetSpatial()),
			Semantic:  d.value(join(cf, "semantic"), c.GetSemantic()),
			Embedding: c.GetEmbedding(),
		}
	}
	r.Stores = storeList(d, join(f, "stores"), in.GetStores())
	if in.Limit != nil {
		r.Limit = in.GetLimit()
	}
	r.MinFidelity = clone(in.MinFidelity)
	r.IncludeDecayed = in.GetIncludeDecayed()
	if in.Reconsolidate != nil {
		r.Reconsolidate = in.GetReconsolidate()
	}
	if in.ActivationDepth != nil {
		r.ActivationDepth = in.GetActivationDepth()
	}
	r.RecallMode = optEnum[memory.RecallMode](d, join(f, "recall_mode"), in.GetRecallMode())
	r.Before = d.cursor(join(f, "before"), in.GetBefore())
	return &r
}

func (e *encoder) recalled(in []memory.RecalledMemory) []*pb.RecalledMemory {
	return encodeEach(in, func(m *memory.RecalledMemory) *pb.RecalledMemory {
		return &pb.RecalledMemory{
			Record:          e.record(&m.Record),
			RelevanceScore:  m.RelevanceScore,
			ActivationPath:  idStrings(m.ActivationPath),
			RenderedContent: pbContent(&m.RenderedContent),
		}
	})
}

func toProtoRecallQueryResponse(e *encoder, r *memory.RecallQueryResponse) *pb.RecallQueryResponse {
	out := &pb.RecallQueryResponse{Memories: e.recalled(r.Memories), TotalCandidates: r.TotalCandidates}
	if t := r.ActivationTrace; t != nil {
		out.ActivationTrace = &pb.ActivationTrace{SourceId: t.SourceID.String()}
		if t.Activations != nil {
			out.ActivationTrace.Activations = make([]*pb.Activation, len(t.Activations))
			for i, a := range t.Activations {
				out.ActivationTrace.Activations[i] = &pb.Activation{
					RecordId: a.RecordID.String(), ActivationLevel: a.ActivationLevel, Hop: a.Hop,
					EdgeType: pbOptEnum[pb.AssociationType](a.EdgeType),
				}
			}
		}
	}
	if q := r.QueryMetadata; q != nil {
		out.QueryMetadata = &pb.QueryMetadata{
			TotalRecordsScanned: q.TotalRecordsScanned,
			StoresSearched:      pbEnums[pb.StoreType](q.StoresSearched),
			FidelityFiltered:    q.FidelityFiltered,
		}
	}
	return out
}

func toModelRecallRawQueryRequest(d *decoder, f string, in *pb.RecallRawQueryRequest) *memory.RecallRawQueryRequest {
	r := memory.DefaultRecallRawQueryRequest()
	r.Header = d.header(join(f, "header"), in.GetHeader())
	r.SessionID = clone(in.SessionId)
	r.Query = clone(in.Query)
	r.Temporal = d.optTemporalRange(join(f, "temporal"), in.GetTemporal())
	if in.Limit != nil {
		r.Limit = in.GetLimit()
	}
	r.IncludePrivateScratch = in.GetIncludePrivateScratch()
	r.IncludeSealed = in.GetIncludeSealed()
	r.SecrecyLevels = secrecyList(d, join(f, "secrecy_levels"), in.GetSecrecyLevels())
	r.Before = d.cursor(join(f, "before"), in.GetBefore())
	return &r
}

func toProtoRecallRawQueryResponse(e *encoder, r *memory.RecallRawQueryResponse) *pb.RecallRawQueryResponse {
	out := &pb.RecallRawQueryResponse{TotalCandidates: r.TotalCandidates}
	if r.Records != nil {
		out.Records = make([]*pb.RawJournalRecord, len(r.Records))
		for i := range r.Records {
			out.Records[i] = e.rawRecord(&r.Records[i])
		}
	}
	return out
}

func toModelRecallAssociateRequest(d *decoder, f string, in *pb.RecallAssociateRequest) *memory.RecallAssociateRequest {
	r := memory.DefaultRecallAssociateRequest()
	r.Header = d.header(join(f, "header"), in.GetHeader())
	r.RecordID = d.id(join(f, "record_id"), in.GetRecordId())
	if l := in.GetAssociationTypes(); l != nil {
		r.AssociationTypes = enums[memory.AssociationType](d, join(f, "association_types"), l.GetValues())
		if r.AssociationTypes == nil {
			r.AssociationTypes = []memory.AssociationType{}
		}
	}
	if in.Depth != nil {
		r.Depth = in.GetDepth()
	}
	if in.MinWeight != nil {
		r.MinWeight = in.GetMinWeight()
	}
	if in.Limit != nil {
		r.Limit = in.GetLimit()
	}
	return &r
}

func toProtoRecallAssociateResponse(e *encoder, r *memory.RecallAssociateResponse) *pb.RecallAssociateResponse {
	return &pb.RecallAssociateResponse{Memories: e.recalled(r.Memories), TotalCandidates: r.TotalCandidates}
}

func toModelRecallTimelineRequest(d *decoder, f string, in *pb.RecallTimelineRequest) *memory.RecallTimelineRequest {
	r := memory.DefaultRecallTimelineRequest()
	r.Header = d.header(join(f, "header"), in.GetHeader())
	r.Range = d.temporalRange(join(f, "range"), in.GetRange())
	r.Granularity = enumOr(d, join(f, "granularity"), in.GetGranularity(), r.Granularity)
	r.MinFidelity = clone(in.MinFidelity)
	r.EmotionFilter = optEmotion(in.GetEmotionFilter())
	r.Limit = clone(in.Limit)
	r.After = d.cursor(join(f, "after"), in.GetAfter())
	return &r
}

func toProtoRecallTimelineResponse(e *encoder, r *memory.RecallTimelineResponse) *pb.RecallTimelineResponse {
	out := &pb.RecallTimelineResponse{Truncated: r.Truncated}
	if r.Buckets != nil {
		out.Buckets = make([]*pb.TimelineBucket, len(r.Buckets))
		for i := range r.Buckets {
			b := &r.Buckets[i]
			out.Buckets[i] = &pb.TimelineBucket{Start: timestamp(b.Start), End: timestamp(b.End), Memories: e.recalled(b.Memories), Count: b.Count}
		}
	}
	return out
}

func toModelRecallGraphRequest(d *decoder, f string, in *pb.RecallGraphRequest) *memory.RecallGraphRequest {
	r := memory.DefaultRecallGraphRequest()
	r.Header = d.header(join(f, "header"), in.GetHeader())
	r.CenterID = d.optID(join(f, "center_id"), in.CenterId)
	if in.Depth != nil {
		r.Depth = in.GetDepth()
	}
	if l := in.GetEdgeTypes(); l != nil {
		r.EdgeTypes = l.GetValues()
		if r.EdgeTypes == nil {
			r.EdgeTypes = []string{}
		}
	}
	if in.LimitNodes != nil {
		r.LimitNodes = in.GetLimitNodes()
	}
	r.IncludeMeta = in.GetIncludeMeta()
	return &r
}

func toProtoRecallGraphResponse(_ *encoder, r *memory.RecallGraphResponse) *pb.RecallGraphResponse {
	out := &pb.RecallGraphResponse{TotalNodes: r.TotalNodes, MetaEdges: pbMetaEdges(r.MetaEdges)}
	if r.Nodes != nil {
		out.Nodes = make([]*pb.GraphNode, len(r.Nodes))
		for i := range r.Nodes {
			n := &r.Nodes[i]
			out.Nodes[i] = &pb.GraphNode{Id: n.ID.String(), Store: pb.StoreType(n.Store), Summary: clone(n.Summary), Fidelity: n.Fidelity, Meta: pbMeta(n.Meta)}
		}
	}
	if r.Edges != nil {
		out.Edges = make([]*pb.GraphEdge, len(r.Edges))
		for i, x := range r.Edges {
			out.Edges[i] = &pb.GraphEdge{Source: x.Source.String(), Target: x.Target.String(), EdgeType: pb.AssociationType(x.EdgeType), Weight: x.Weight}
		}
	}
	return out
}

// ---------------------------------------------------------------- lifecycle

func toModelConsolidateRequest(d *decoder, f string, in *pb.ConsolidateRequest) *memory.ConsolidateRequest {
	r := memory.DefaultConsolidateRequest()
	r.Header = d.header(join(f, "header"), in.GetHeader())
	r.Strategy = enumOr(d, join(f, "strategy"), in.GetStrategy(), r.Strategy)
	r.MinAgeHours = in.GetMinAgeHours()
	r.MinAccessCount = in.GetMinAccessCount()
	r.DryRun = in.GetDryRun()
	return &r
}

func toProtoConsolidateResponse(_ *encoder, r *memory.ConsolidateResponse) *pb.ConsolidateResponse {
	return &pb.ConsolidateResponse{
		RecordsProcessed: r.RecordsProcessed, RecordsMigrated: r.RecordsMigrated, RecordsCompressed: r.RecordsCompressed,
		RecordsPruned: r.RecordsPruned, SemanticNodesCreated: r.SemanticNodesCreated,
	}
}

func toModelDreamTickRequest(d *decoder, f string, in *pb.DreamTickRequest) *memory.DreamTickRequest {
	r := memory.DefaultDreamTickRequest()
	r.Header = d.header(join(f, "header"), in.GetHeader())
	r.SessionID = clone(in.SessionId)
	r.DryRun = in.GetDryRun()
	if in.MaxGroups != nil {
		r.MaxGroups = in.GetMaxGroups()
	}
	r.IncludePrivateScratch = in.GetIncludePrivateScratch()
	r.IncludeSealed = in.GetIncludeSealed()
	if in.PromoteSemantic != nil {
		r.PromoteSemantic = in.GetPromoteSemantic()
	}
	r.SecrecyLevels = secrecyList(d, join(f, "secrecy_levels"), in.GetSecrecyLevels())
	return &r
}

func toProtoDreamTickResponse(_ *encoder, r *memory.DreamTickResponse) *pb.DreamTickResponse {
	return &pb.DreamTickResponse{
		GroupsProcessed: r.GroupsProcessed, RawRecordsProcessed: r.RawRecordsProcessed,
		EpisodicSummariesCreated: r.EpisodicSummariesCreated, SemanticNodesCreated: r.SemanticNodesCreated,
	}
}

func toModelDecayTickRequest(d *decoder, f string, in *pb.DecayTickRequest) *memory.DecayTickRequest {
	return &memory.DecayTickRequest{Header: d.header(join(f, "header"), in.GetHeader()), TickDurationSeconds: clone(in.TickDurationSeconds), AllowLong: in.GetAllowLong()}
}

func toProtoDecayTickResponse(_ *encoder, r *memory.DecayTickResponse) *pb.DecayTickResponse {
	return &pb.DecayTickResponse{RecordsUpdated: r.RecordsUpdated, RecordsBelowThreshold: r.RecordsBelowThreshold, RecordsPruned: r.RecordsPruned}
}

func toModelSetModeRequest(d *decoder, f string, in *pb.SetModeRequest) *memory.SetModeRequest {
	return &memory.SetModeRequest{
		Header: d.header(join(f, "header"), in.GetHeader()),
		Mode:   enum[memory.RecallMode](d, join(f, "mode"), in.GetMode()),
		Scope:  enums[memory.StoreType](d, join(f, "scope"), in.GetScope()),
	}
}

func toModelForgetRequest(d *decoder, f string, in *pb.ForgetRequest) *memory.ForgetRequest {
	return &memory.ForgetRequest{
		Header:        d.header(join(f, "header"), in.GetHeader()),
		RecordIDs:     d.ids(join(f, "record_ids"), in.GetRecordIds()),
		Store:         optEnum[memory.StoreType](d, join(f, "store"), in.GetStore()),
		TemporalRange: d.optTemporalRange(join(f, "temporal_range"), in.GetTemporalRange()),
		Cascade:       in.GetCascade(),
		Confirm:       clone(in.Confirm),
	}
}

func toProtoForgetResponse(_ *encoder, r *memory.ForgetResponse) *pb.ForgetResponse {
	return &pb.ForgetResponse{RecordsDeleted: r.RecordsDeleted}
}

func toModelExportRequest(d *decoder, f string, in *pb.ExportRequest) *memory.ExportRequest {
	r := memory.DefaultExportRequest()
	r.Header = d.header(join(f, "header"), in.GetHeader())
	if in.Format != nil {
		r.Format = in.GetFormat()
	}
	r.Stores = storeList(d, join(f, "stores"), in.GetStores())
	r.IncludeRawJournal = in.GetIncludeRawJournal()
	r.Encrypt = in.GetEncrypt()
	r.EncryptionKey = clone(in.EncryptionKey)
	r.IncludeSealed = in.GetIncludeSealed()
	r.IncludeSecret = in.GetIncludeSecret()
	r.Namespaces = slices.Clone(in.GetNamespaces())
	return &r
}

func toProtoExportSummary(_ *encoder, r *memory.ExportResponse) *pb.ExportSummary {
	return &pb.ExportSummary{ArchiveId: r.ArchiveID, SizeBytes: r.SizeBytes, RecordCount: r.RecordCount, Checksum: r.Checksum}
}

// toModelImportOptions builds the import request; the archive itself
// travels in the stream's data.
func toModelImportOptions(d *decoder, f string, in *pb.ImportOptions) *memory.ImportRequest {
	r := memory.DefaultImportRequest()
	r.Header = d.header(join(f, "header"), in.GetHeader())
	r.ArchiveID = in.GetArchiveId()
	r.Strategy = enumOr(d, join(f, "strategy"), in.GetStrategy(), r.Strategy)
	r.ConflictResolution = enumOr(d, join(f, "conflict_resolution"), in.GetConflictResolution(), r.ConflictResolution)
	r.DecryptionKey = clone(in.DecryptionKey)
	r.PreserveNamespaces = in.GetPreserveNamespaces()
	return &r
}

func toProtoImportResponse(_ *encoder, r *memory.ImportResponse) *pb.ImportResponse {
	return &pb.ImportResponse{RecordsImported: r.RecordsImported, RecordsSkipped: r.RecordsSkipped, RawConflicts: r.RawConflicts}
}

// ---------------------------------------------------------------- introspect

func pbStoreMap[V any](e *encoder, in map[memory.StoreType]V) map[string]V {
	if in == nil {
		return nil
	}
	out := make(map[string]V, len(in))
	for st, v := range in {
		name := st.String()
		if name == "" {
			e.fail(fmt.Errorf("stats: store %d has no name", st))
			continue
		}
		out[name] = v
	}
	return out
}

func toProtoStats(e *encoder, s *memory.Stats) *pb.StatsResponse {
	return &pb.StatsResponse{
		TotalRecords:           s.TotalRecords,
		RecordsByStore:         pbStoreMap(e, s.RecordsByStore),
		TotalAssociations:      s.TotalAssociations,
		AvgFidelity:            s.AvgFidelity,
		AvgFidelityByStore:     pbStoreMap(e, s.AvgFidelityByStore),
		OldestRecord:           optTimestamp(s.OldestRecord),
		NewestRecord:           optTimestamp(s.NewestRecord),
		TotalRecallCount:       s.TotalRecallCount,
		RawJournalRecords:      s.RawJournalRecords,
		RawJournalPendingDream: s.RawJournalPendingDream,
		VectorIndexRecords:     s.VectorIndexRecords,
		VectorSearchBackend:    s.VectorSearchBackend,
		DreamEpisodicSummaries: s.DreamEpisodicSummaries,
		DreamSemanticNodes:     s.DreamSemanticNodes,
		LastDreamTickAt:        optTimestamp(s.LastDreamTickAt),
		EvolutionMetrics:       toProtoEvolution(e, s.EvolutionMetrics),
		BackgroundDecayEnabled: s.BackgroundDecayEnabled,
		BackgroundDreamEnabled: s.BackgroundDreamEnabled,
		QuarantinedRecords:     s.QuarantinedRecords,
	}
}

func toProtoEvolution(_ *encoder, m *memory.EvolutionMetrics) *pb.EvolutionMetrics {
	if m == nil {
		return nil
	}
	out := &pb.EvolutionMetrics{DetectedPatterns: m.DetectedPatterns, SchemaAdaptations: m.SchemaAdaptations}
	if m.ParameterAdjustments != nil {
		out.ParameterAdjustments = make([]*pb.ParameterAdjustment, len(m.ParameterAdjustments))
		for i, a := range m.ParameterAdjustments {
			out.ParameterAdjustments[i] = &pb.ParameterAdjustment{
				Store: pb.StoreType(a.Store), Parameter: a.Parameter, OriginalValue: a.OriginalValue, CurrentValue: a.CurrentValue, Reason: a.Reason,
			}
		}
	}
	return out
}

func toModelIntrospectRecordRequest(d *decoder, f string, in *pb.IntrospectRecordRequest) *memory.IntrospectRecordRequest {
	return &memory.IntrospectRecordRequest{
		Header:              d.header(join(f, "header"), in.GetHeader()),
		RecordID:            d.id(join(f, "record_id"), in.GetRecordId()),
		IncludeHistory:      in.GetIncludeHistory(),
		IncludeAssociations: in.GetIncludeAssociations(),
		IncludeVersions:     in.GetIncludeVersions(),
	}
}

func toProtoRecord(e *encoder, r *memory.MemoryRecord) *pb.IntrospectRecordResponse {
	return &pb.IntrospectRecordResponse{Record: e.record(r)}
}

func toModelDecayForecastRequest(d *decoder, f string, in *pb.DecayForecastRequest) *memory.DecayForecastRequest {
	return &memory.DecayForecastRequest{
		Header:     d.header(join(f, "header"), in.GetHeader()),
		RecordIDs:  d.ids(join(f, "record_ids"), in.GetRecordIds()),
		ForecastAt: d.time(join(f, "forecast_at"), in.GetForecastAt()),
	}
}

func toProtoDecayForecastResponse(_ *encoder, r *memory.DecayForecastResponse) *pb.DecayForecastResponse {
	out := &pb.DecayForecastResponse{}
	if r.Forecasts != nil {
		out.Forecasts = make([]*pb.DecayForecast, len(r.Forecasts))
		for i, x := range r.Forecasts {
			out.Forecasts[i] = &pb.DecayForecast{
				RecordId: x.RecordID.String(), CurrentFidelity: x.CurrentFidelity, ForecastedFidelity: x.ForecastedFidelity,
				EstimatedThresholdDate: optTimestamp(x.EstimatedThresholdDate),
			}
		}
	}
	return out
}

func toProtoEvolutionResponse(e *encoder, m *memory.EvolutionMetrics) *pb.EvolutionResponse {
	return &pb.EvolutionResponse{Metrics: toProtoEvolution(e, m)}
}
