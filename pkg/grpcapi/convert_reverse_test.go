package grpcapi

import (
	"encoding/json"
	"slices"

	"google.golang.org/protobuf/types/known/structpb"

	pb "memsvc.dev/memsvc/pkg/grpcapi/memsvcpb"
	"memsvc.dev/memsvc/pkg/memory"
)

// The conversions in the directions the server does not need: model to
// proto for requests, proto to model for answers. They exist so that every
// conversion is round-trip tested (convert_test.go, fuzz_test.go), and
// live here so that the server binary does not carry them.

func pbStoreList(in []memory.StoreType) *pb.StoreTypeList {
	if in == nil {
		return nil
	}
	return &pb.StoreTypeList{Values: pbEnums[pb.StoreType](in)}
}

func pbSecrecyList(in []memory.SecrecyLevel) *pb.SecrecyLevelList {
	if in == nil {
		return nil
	}
	return &pb.SecrecyLevelList{Values: pbEnums[pb.SecrecyLevel](in)}
}

func toProtoEncodeStoreRequest(e *encoder, r *memory.EncodeStoreRequest) *pb.EncodeStoreRequest {
	out := &pb.EncodeStoreRequest{
		Header:   pbHeader(r.Header),
		Content:  pbContent(&r.Content),
		Store:    pbOptEnum[pb.StoreType](r.Store),
		Emotion:  pbEmotion(r.Emotion),
		Metadata: e.object(r.Metadata),
		Meta:     pbMeta(r.Meta),
	}
	if c := r.Context; c != nil {
		out.Context = &pb.EncodeContext{Source: clone(c.Source), SessionId: clone(c.SessionID), Spatial: e.value(c.Spatial), Temporal: e.value(c.Temporal)}
	}
	if r.Associations != nil {
		out.Associations = make([]*pb.ManualAssociation, len(r.Associations))
		for i, a := range r.Associations {
			out.Associations[i] = &pb.ManualAssociation{TargetId: a.TargetID.String(), AssociationType: pb.AssociationType(a.AssociationType), Weight: a.Weight}
		}
	}
	return out
}

func toModelEncodeStoreResponse(d *decoder, f string, in *pb.EncodeStoreResponse) *memory.EncodeStoreResponse {
	return &memory.EncodeStoreResponse{
		RecordID:            d.id(join(f, "record_id"), in.GetRecordId()),
		Store:               enum[memory.StoreType](d, join(f, "store"), in.GetStore()),
		InitialFidelity:     in.GetInitialFidelity(),
		AssociationsCreated: in.GetAssociationsCreated(),
	}
}

func toProtoEncodeBatchRequest(e *encoder, r *memory.EncodeBatchRequest) *pb.EncodeBatchRequest {
	out := &pb.EncodeBatchRequest{Header: pbHeader(r.Header), InferAssociations: r.InferAssociations}
	if r.Records != nil {
		out.Records = make([]*pb.EncodeStoreRequest, len(r.Records))
		for i := range r.Records {
			out.Records[i] = toProtoEncodeStoreRequest(e, &r.Records[i])
		}
	}
	return out
}

func toModelEncodeBatchResponse(d *decoder, f string, in *pb.EncodeBatchResponse) *memory.EncodeBatchResponse {
	r := &memory.EncodeBatchResponse{AssociationsInferred: in.GetAssociationsInferred()}
	if n := len(in.GetResults()); n > 0 {
		r.Results = make([]memory.EncodeStoreResponse, n)
		for i, x := range in.GetResults() {
			r.Results[i] = *toModelEncodeStoreResponse(d, index(join(f, "results"), i), x)
		}
	}
	return r
}

func toProtoEncodeUpdateRequest(e *encoder, r *memory.EncodeUpdateRequest) *pb.EncodeUpdateRequest {
	return &pb.EncodeUpdateRequest{
		Header:   pbHeader(r.Header),
		RecordId: r.RecordID.String(),
		Content:  pbContent(r.Content),
		Emotion:  pbEmotion(r.Emotion),
		Metadata: e.object(r.Metadata),
		Meta:     pbMeta(r.Meta),
	}
}

func toProtoEncodeStoreRawRequest(e *encoder, r *memory.EncodeStoreRawRequest) *pb.EncodeStoreRawRequest {
	return &pb.EncodeStoreRawRequest{
		Header:       pbHeader(r.Header),
		RecordId:     optIDString(r.RecordID),
		SessionId:    r.SessionID,
		TurnId:       clone(r.TurnID),
		TopicId:      clone(r.TopicID),
		Source:       pb.RawSource(r.Source),
		Speaker:      pb.RawSpeaker(r.Speaker),
		Visibility:   pb.Visibility(r.Visibility),
		SecrecyLevel: pb.SecrecyLevel(r.SecrecyLevel),
		Content:      pbContent(&r.Content),
		Metadata:     e.object(r.Metadata),
		Meta:         pbMeta(r.Meta),
	}
}

func toModelEncodeStoreRawResponse(d *decoder, f string, in *pb.EncodeStoreRawResponse) *memory.EncodeStoreRawResponse {
	return &memory.EncodeStoreRawResponse{
		RecordID:     d.id(join(f, "record_id"), in.GetRecordId()),
		SessionID:    in.GetSessionId(),
		Visibility:   enum[memory.Visibility](d, join(f, "visibility"), in.GetVisibility()),
		SecrecyLevel: enum[memory.SecrecyLevel](d, join(f, "secrecy_level"), in.GetSecrecyLevel()),
		Duplicate:    in.GetDuplicate(),
	}
}

func toProtoEncodeBatchStoreRawRequest(e *encoder, r *memory.EncodeBatchStoreRawRequest) *pb.EncodeBatchStoreRawRequest {
	out := &pb.EncodeBatchStoreRawRequest{Header: pbHeader(r.Header)}
	if r.Records != nil {
		out.Records = make([]*pb.EncodeStoreRawRequest, len(r.Records))
		for i := range r.Records {
			out.Records[i] = toProtoEncodeStoreRawRequest(e, &r.Records[i])
		}
	}
	return out
}

func toModelEncodeBatchStoreRawResponse(d *decoder, f string, in *pb.EncodeBatchStoreRawResponse) *memory.EncodeBatchStoreRawResponse {
	r := &memory.EncodeBatchStoreRawResponse{}
	if n := len(in.GetResults()); n > 0 {
		r.Results = make([]memory.EncodeStoreRawResponse, n)
		for i, x := range in.GetResults() {
			r.Results[i] = *toModelEncodeStoreRawResponse(d, index(join(f, "results"), i), x)
		}
	}
	return r
}

func toProtoRecallQueryRequest(e *encoder, r *memory.RecallQueryRequest) *pb.RecallQueryRequest {
	c := &r.Cue
	return &pb.RecallQueryRequest{
		Header: pbHeader(r.Header),
		Cue: &pb.RecallCue{
			Text: clone(c.Text), Image: c.Image, Audio: c.Audio, Emotion: pbEmotion(c.Emotion),
			Temporal: pbOptTemporalRange(c.Temporal), Spatial: e.value(c.Spatial), Semantic: e.value(c.Semantic), Embedding: c.Embedding,
		},
		Stores:          pbStoreList(r.Stores),
		Limit:           &r.Limit,
		MinFidelity:     clone(r.MinFidelity),
		IncludeDecayed:  r.IncludeDecayed,
		Reconsolidate:   &r.Reconsolidate,
		ActivationDepth: &r.ActivationDepth,
		RecallMode:      pbOptEnum[pb.RecallMode](r.RecallMode),
		Before:          pbCursor(r.Before),
	}
}

func (d *decoder) recalled(f string, in []*pb.RecalledMemory) []memory.RecalledMemory {
	return decodeEach(f, in, func(mf string, m *pb.RecalledMemory) memory.RecalledMemory {
		return memory.RecalledMemory{
			Record:          d.record(join(mf, "record"), m.GetRecord()),
			RelevanceScore:  m.GetRelevanceScore(),
			ActivationPath:  d.ids(join(mf, "activation_path"), m.GetActivationPath()),
			RenderedContent: d.content(join(mf, "rendered_content"), m.GetRenderedContent()),
		}
	})
}

func toModelRecallQueryResponse(d *decoder, f string, in *pb.RecallQueryResponse) *memory.RecallQueryResponse {
	r := &memory.RecallQueryResponse{
		Memories:        d.recalled(join(f, "memories"), in.GetMemories()),
		TotalCandidates: in.GetTotalCandidates(),
	}
	if t := in.GetActivationTrace(); t != nil {
		tf := join(f, "activation_trace")
		r.ActivationTrace = &memory.ActivationTrace{SourceID: d.id(join(tf, "source_id"), t.GetSourceId())}
		if n := len(t.GetActivations()); n > 0 {
			r.ActivationTrace.Activations = make([]memory.Activation, n)
			for i, a := range t.GetActivations() {
				af := index(join(tf, "activations"), i)
				r.ActivationTrace.Activations[i] = memory.Activation{
					RecordID:        d.id(join(af, "record_id"), a.GetRecordId()),
					ActivationLevel: a.GetActivationLevel(),
					Hop:             a.GetHop(),
					EdgeType:        optEnum[memory.AssociationType](d, join(af, "edge_type"), a.GetEdgeType()),
				}
			}
		}
	}
	if q := in.GetQueryMetadata(); q != nil {
		r.QueryMetadata = &memory.QueryMetadata{
			TotalRecordsScanned: q.GetTotalRecordsScanned(),
			StoresSearched:      enums[memory.StoreType](d, join(f, "query_metadata.stores_searched"), q.GetStoresSearched()),
			FidelityFiltered:    q.GetFidelityFiltered(),
		}
	}
	return r
}

func toProtoRecallRawQueryRequest(_ *encoder, r *memory.RecallRawQueryRequest) *pb.RecallRawQueryRequest {
	return &pb.RecallRawQueryRequest{
		Header:                pbHeader(r.Header),
		SessionId:             clone(r.SessionID),
		Query:                 clone(r.Query),
		Temporal:              pbOptTemporalRange(r.Temporal),
		Limit:                 &r.Limit,
		IncludePrivateScratch: r.IncludePrivateScratch,
		IncludeSealed:         r.IncludeSealed,
		SecrecyLevels:         pbSecrecyList(r.SecrecyLevels),
		Before:                pbCursor(r.Before),
	}
}

func toModelRecallRawQueryResponse(d *decoder, f string, in *pb.RecallRawQueryResponse) *memory.RecallRawQueryResponse {
	r := &memory.RecallRawQueryResponse{TotalCandidates: in.GetTotalCandidates()}
	if n := len(in.GetRecords()); n > 0 {
		r.Records = make([]memory.RawJournalRecord, n)
		for i, x := range in.GetRecords() {
			r.Records[i] = d.rawRecord(index(join(f, "records"), i), x)
		}
	}
	return r
}

func toProtoRecallAssociateRequest(_ *encoder, r *memory.RecallAssociateRequest) *pb.RecallAssociateRequest {
	out := &pb.RecallAssociateRequest{
		Header:    pbHeader(r.Header),
		RecordId:  r.RecordID.String(),
		Depth:     &r.Depth,
		MinWeight: &r.MinWeight,
		Limit:     &r.Limit,
	}
	if r.AssociationTypes != nil {
		out.AssociationTypes = &pb.AssociationTypeList{Values: pbEnums[pb.AssociationType](r.AssociationTypes)}
	}
	return out
}

func toModelRecallAssociateResponse(d *decoder, f string, in *pb.RecallAssociateResponse) *memory.RecallAssociateResponse {
	return &memory.RecallAssociateResponse{Memories: d.recalled(join(f, "memories"), in.GetMemories()), TotalCandidates: in.GetTotalCandidates()}
}

func toProtoRecallTimelineRequest(_ *encoder, r *memory.RecallTimelineRequest) *pb.RecallTimelineRequest {
	return &pb.RecallTimelineRequest{
		Header:        pbHeader(r.Header),
		Range:         pbTemporalRange(r.Range),
		Granularity:   pb.TimeGranularity(r.Granularity),
		MinFidelity:   clone(r.MinFidelity),
		EmotionFilter: pbEmotion(r.EmotionFilter),
		Limit:         clone(r.Limit),
		After:         pbCursor(r.After),
	}
}

func toModelRecallTimelineResponse(d *decoder, f string, in *pb.RecallTimelineResponse) *memory.RecallTimelineResponse {
	r := &memory.RecallTimelineResponse{Truncated: in.GetTruncated()}
	if n := len(in.GetBuckets()); n > 0 {
		r.Buckets = make([]memory.TimelineBucket, n)
		for i, b := range in.GetBuckets() {
			bf := index(join(f, "buckets"), i)
			r.Buckets[i] = memory.TimelineBucket{
				Start:    d.time(join(bf, "start"), b.GetStart()),
				End:      d.time(join(bf, "end"), b.GetEnd()),
				Memories: d.recalled(join(bf, "memories"), b.GetMemories()),
				Count:    b.GetCount(),
			}
		}
	}
	return r
}

func toProtoRecallGraphRequest(_ *encoder, r *memory.RecallGraphRequest) *pb.RecallGraphRequest {
	out := &pb.RecallGraphRequest{
		Header:      pbHeader(r.Header),
		CenterId:    optIDString(r.CenterID),
		Depth:       &r.Depth,
		LimitNodes:  &r.LimitNodes,
		IncludeMeta: r.IncludeMeta,
	}
	if r.EdgeTypes != nil {
		out.EdgeTypes = &pb.StringList{Values: r.EdgeTypes}
	}
	return out
}

func toModelRecallGraphResponse(d *decoder, f string, in *pb.RecallGraphResponse) *memory.RecallGraphResponse {
	r := &memory.RecallGraphResponse{TotalNodes: in.GetTotalNodes(), MetaEdges: d.metaEdges(join(f, "meta_edges"), in.GetMetaEdges())}
	if n := len(in.GetNodes()); n > 0 {
		r.Nodes = make([]memory.GraphNode, n)
		for i, x := range in.GetNodes() {
			nf := index(join(f, "nodes"), i)
			r.Nodes[i] = memory.GraphNode{
				ID:       d.id(join(nf, "id"), x.GetId()),
				Store:    enum[memory.StoreType](d, join(nf, "store"), x.GetStore()),
				Summary:  clone(x.Summary),
				Fidelity: x.GetFidelity(),
				Meta:     d.optMeta(join(nf, "meta"), x.GetMeta()),
			}
		}
	}
	if n := len(in.GetEdges()); n > 0 {
		r.Edges = make([]memory.GraphEdge, n)
		for i, x := range in.GetEdges() {
			ef := index(join(f, "edges"), i)
			r.Edges[i] = memory.GraphEdge{
				Source:   d.id(join(ef, "source"), x.GetSource()),
				Target:   d.id(join(ef, "target"), x.GetTarget()),
				EdgeType: enum[memory.AssociationType](d, join(ef, "edge_type"), x.GetEdgeType()),
				Weight:   x.GetWeight(),
			}
		}
	}
	return r
}

func toProtoConsolidateRequest(_ *encoder, r *memory.ConsolidateRequest) *pb.ConsolidateRequest {
	return &pb.ConsolidateRequest{
		Header: pbHeader(r.Header), Strategy: pb.ConsolidationStrategy(r.Strategy),
		MinAgeHours: r.MinAgeHours, MinAccessCount: r.MinAccessCount, DryRun: r.DryRun,
	}
}

func toModelConsolidateResponse(_ *decoder, _ string, in *pb.ConsolidateResponse) *memory.ConsolidateResponse {
	return &memory.ConsolidateResponse{
		RecordsProcessed: in.GetRecordsProcessed(), RecordsMigrated: in.GetRecordsMigrated(), RecordsCompressed: in.GetRecordsCompressed(),
		RecordsPruned: in.GetRecordsPruned(), SemanticNodesCreated: in.GetSemanticNodesCreated(),
	}
}

func toProtoDreamTickRequest(_ *encoder, r *memory.DreamTickRequest) *pb.DreamTickRequest {
	return &pb.DreamTickRequest{
		Header:                pbHeader(r.Header),
		SessionId:             clone(r.SessionID),
		DryRun:                r.DryRun,
		MaxGroups:             &r.MaxGroups,
		IncludePrivateScratch: r.IncludePrivateScratch,
		IncludeSealed:         r.IncludeSealed,
		PromoteSemantic:       &r.PromoteSemantic,
		SecrecyLevels:         pbSecrecyList(r.SecrecyLevels),
	}
}

func toModelDreamTickResponse(_ *decoder, _ string, in *pb.DreamTickResponse) *memory.DreamTickResponse {
	return &memory.DreamTickResponse{
		GroupsProcessed: in.GetGroupsProcessed(), RawRecordsProcessed: in.GetRawRecordsProcessed(),
		EpisodicSummariesCreated: in.GetEpisodicSummariesCreated(), SemanticNodesCreated: in.GetSemanticNodesCreated(),
	}
}

func toProtoDecayTickRequest(_ *encoder, r *memory.DecayTickRequest) *pb.DecayTickRequest {
	return &pb.DecayTickRequest{Header: pbHeader(r.Header), TickDurationSeconds: clone(r.TickDurationSeconds), AllowLong: r.AllowLong}
}

func toModelDecayTickResponse(_ *decoder, _ string, in *pb.DecayTickResponse) *memory.DecayTickResponse {
	return &memory.DecayTickResponse{RecordsUpdated: in.GetRecordsUpdated(), RecordsBelowThreshold: in.GetRecordsBelowThreshold(), RecordsPruned: in.GetRecordsPruned()}
}

func toProtoSetModeRequest(_ *encoder, r *memory.SetModeRequest) *pb.SetModeRequest {
	return &pb.SetModeRequest{Header: pbHeader(r.Header), Mode: pb.RecallMode(r.Mode), Scope: pbEnums[pb.StoreType](r.Scope)}
}

func toProtoForgetRequest(_ *encoder, r *memory.ForgetRequest) *pb.ForgetRequest {
	return &pb.ForgetRequest{
		Header:        pbHeader(r.Header),
		RecordIds:     idStrings(r.RecordIDs),
		Store:         pbOptEnum[pb.StoreType](r.Store),
		TemporalRange: pbOptTemporalRange(r.TemporalRange),
		Cascade:       r.Cascade,
		Confirm:       clone(r.Confirm),
	}
}

func toModelForgetResponse(_ *decoder, _ string, in *pb.ForgetResponse) *memory.ForgetResponse {
	return &memory.ForgetResponse{RecordsDeleted: in.GetRecordsDeleted()}
}

func toProtoExportRequest(_ *encoder, r *memory.ExportRequest) *pb.ExportRequest {
	return &pb.ExportRequest{
		Header:            pbHeader(r.Header),
		Format:            &r.Format,
		Stores:            pbStoreList(r.Stores),
		IncludeRawJournal: r.IncludeRawJournal,
		Encrypt:           r.Encrypt,
		EncryptionKey:     clone(r.EncryptionKey),
		IncludeSealed:     r.IncludeSealed,
		IncludeSecret:     r.IncludeSecret,
		Namespaces:        slices.Clone(r.Namespaces),
	}
}

func toModelExportSummary(_ *decoder, _ string, in *pb.ExportSummary) *memory.ExportResponse {
	return &memory.ExportResponse{ArchiveID: in.GetArchiveId(), SizeBytes: in.GetSizeBytes(), RecordCount: in.GetRecordCount(), Checksum: in.GetChecksum()}
}

func toProtoImportOptions(_ *encoder, r *memory.ImportRequest) *pb.ImportOptions {
	return &pb.ImportOptions{
		Header:             pbHeader(r.Header),
		ArchiveId:          r.ArchiveID,
		Strategy:           pb.ImportStrategy(r.Strategy),
		ConflictResolution: pb.ConflictResolution(r.ConflictResolution),
		DecryptionKey:      clone(r.DecryptionKey),
		PreserveNamespaces: r.PreserveNamespaces,
	}
}

func toModelImportResponse(_ *decoder, _ string, in *pb.ImportResponse) *memory.ImportResponse {
	return &memory.ImportResponse{RecordsImported: in.GetRecordsImported(), RecordsSkipped: in.GetRecordsSkipped(), RawConflicts: in.GetRawConflicts()}
}

func toModelStats(d *decoder, f string, in *pb.StatsResponse) *memory.Stats {
	s := &memory.Stats{
		TotalRecords:           in.GetTotalRecords(),
		TotalAssociations:      in.GetTotalAssociations(),
		AvgFidelity:            in.GetAvgFidelity(),
		OldestRecord:           d.optTime(join(f, "oldest_record"), in.GetOldestRecord()),
		NewestRecord:           d.optTime(join(f, "newest_record"), in.GetNewestRecord()),
		TotalRecallCount:       in.GetTotalRecallCount(),
		RawJournalRecords:      in.GetRawJournalRecords(),
		RawJournalPendingDream: in.GetRawJournalPendingDream(),
		VectorIndexRecords:     in.GetVectorIndexRecords(),
		VectorSearchBackend:    in.GetVectorSearchBackend(),
		DreamEpisodicSummaries: in.GetDreamEpisodicSummaries(),
		DreamSemanticNodes:     in.GetDreamSemanticNodes(),
		LastDreamTickAt:        d.optTime(join(f, "last_dream_tick_at"), in.GetLastDreamTickAt()),
		EvolutionMetrics:       toModelEvolution(d, join(f, "evolution_metrics"), in.GetEvolutionMetrics()),
		BackgroundDecayEnabled: in.GetBackgroundDecayEnabled(),
		BackgroundDreamEnabled: in.GetBackgroundDreamEnabled(),
		QuarantinedRecords:     in.GetQuarantinedRecords(),
	}
	s.RecordsByStore = storeMap(d, join(f, "records_by_store"), in.GetRecordsByStore())
	s.AvgFidelityByStore = storeMap(d, join(f, "avg_fidelity_by_store"), in.GetAvgFidelityByStore())
	return s
}

// storeMap reads a map keyed by store name.
func storeMap[V any](d *decoder, f string, in map[string]V) map[memory.StoreType]V {
	if in == nil {
		return nil
	}
	out := make(map[memory.StoreType]V, len(in))
	for k, v := range in {
		st, err := memory.ParseStoreType(k)
		if err != nil {
			d.fail(f, "key %q: want one of %s", k, memory.StoreTypeNames())
			continue
		}
		out[st] = v
	}
	return out
}

func toModelEvolution(d *decoder, f string, in *pb.EvolutionMetrics) *memory.EvolutionMetrics {
	if in == nil {
		return nil
	}
	m := &memory.EvolutionMetrics{DetectedPatterns: in.GetDetectedPatterns(), SchemaAdaptations: in.GetSchemaAdaptations()}
	if n := len(in.GetParameterAdjustments()); n > 0 {
		m.ParameterAdjustments = make([]memory.ParameterAdjustment, n)
		for i, a := range in.GetParameterAdjustments() {
			m.ParameterAdjustments[i] = memory.ParameterAdjustment{
				Store:         enum[memory.StoreType](d, index(join(f, "parameter_adjustments"), i)+".store", a.GetStore()),
				Parameter:     a.GetParameter(),
				OriginalValue: a.GetOriginalValue(),
				CurrentValue:  a.GetCurrentValue(),
				Reason:        a.GetReason(),
			}
		}
	}
	return m
}

func toProtoIntrospectRecordRequest(_ *encoder, r *memory.IntrospectRecordRequest) *pb.IntrospectRecordRequest {
	return &pb.IntrospectRecordRequest{
		Header: pbHeader(r.Header), RecordId: r.RecordID.String(),
		IncludeHistory: r.IncludeHistory, IncludeAssociations: r.IncludeAssociations, IncludeVersions: r.IncludeVersions,
	}
}

func toModelRecord(d *decoder, f string, in *pb.IntrospectRecordResponse) *memory.MemoryRecord {
	r := d.record(join(f, "record"), in.GetRecord())
	return &r
}

func toProtoDecayForecastRequest(_ *encoder, r *memory.DecayForecastRequest) *pb.DecayForecastRequest {
	return &pb.DecayForecastRequest{Header: pbHeader(r.Header), RecordIds: idStrings(r.RecordIDs), ForecastAt: timestamp(r.ForecastAt)}
}

func toModelDecayForecastResponse(d *decoder, f string, in *pb.DecayForecastResponse) *memory.DecayForecastResponse {
	r := &memory.DecayForecastResponse{}
	if n := len(in.GetForecasts()); n > 0 {
		r.Forecasts = make([]memory.DecayForecast, n)
		for i, x := range in.GetForecasts() {
			xf := index(join(f, "forecasts"), i)
			r.Forecasts[i] = memory.DecayForecast{
				RecordID:               d.id(join(xf, "record_id"), x.GetRecordId()),
				CurrentFidelity:        x.GetCurrentFidelity(),
				ForecastedFidelity:     x.GetForecastedFidelity(),
				EstimatedThresholdDate: d.optTime(join(xf, "estimated_threshold_date"), x.GetEstimatedThresholdDate()),
			}
		}
	}
	return r
}

func toModelEvolutionResponse(d *decoder, f string, in *pb.EvolutionResponse) *memory.EvolutionMetrics {
	m := toModelEvolution(d, join(f, "metrics"), in.GetMetrics())
	if m == nil {
		m = &memory.EvolutionMetrics{}
	}
	return m
}

func (e *encoder) value(raw json.RawMessage) *structpb.Value {
	return fromJSON(e, "JSON value", raw, structpb.NewValue)
}

func pbHeader(h *memory.CMPHeader) *pb.CmpHeader {
	if h == nil {
		return nil
	}
	out := &pb.CmpHeader{Protocol: h.Protocol, Version: h.Version, Timestamp: timestamp(h.Timestamp)}
	if !h.RequestID.IsNil() {
		out.RequestId = h.RequestID.String()
	}
	return out
}

func pbTemporalRange(r memory.TemporalRange) *pb.TemporalRange {
	return &pb.TemporalRange{Start: timestamp(r.Start), End: timestamp(r.End)}
}

func pbOptTemporalRange(r *memory.TemporalRange) *pb.TemporalRange {
	if r == nil {
		return nil
	}
	return pbTemporalRange(*r)
}

func (d *decoder) fidelity(f string, in *pb.FidelityState) memory.FidelityState {
	return memory.FidelityState{
		Score:              in.GetScore(),
		NoiseLevel:         in.GetNoiseLevel(),
		DecayRate:          in.GetDecayRate(),
		EmotionalAnchor:    in.GetEmotionalAnchor(),
		ReinforcementCount: in.GetReinforcementCount(),
		Stability:          in.GetStability(),
		LastDecayTick:      d.time(join(f, "last_decay_tick"), in.GetLastDecayTick()),
	}
}

func (d *decoder) record(f string, in *pb.MemoryRecord) memory.MemoryRecord {
	r := memory.MemoryRecord{
		ID:             d.id(join(f, "id"), in.GetId()),
		Store:          enum[memory.StoreType](d, join(f, "store"), in.GetStore()),
		CreatedAt:      d.time(join(f, "created_at"), in.GetCreatedAt()),
		UpdatedAt:      d.time(join(f, "updated_at"), in.GetUpdatedAt()),
		LastAccessedAt: d.time(join(f, "last_accessed_at"), in.GetLastAccessedAt()),
		AccessCount:    in.GetAccessCount(),
		Content:        d.content(join(f, "content"), in.GetContent()),
		Fidelity:       d.fidelity(join(f, "fidelity"), in.GetFidelity()),
		Emotion:        emotion(in.GetEmotion()),
		Metadata:       d.object(join(f, "metadata"), in.GetMetadata()),
		Version:        in.GetVersion(),
		Meta:           d.meta(join(f, "meta"), in.GetMeta()),
	}
	if n := len(in.GetAssociations()); n > 0 {
		r.Associations = make([]memory.Association, n)
		for i, a := range in.GetAssociations() {
			af := index(join(f, "associations"), i)
			r.Associations[i] = memory.Association{
				TargetID:         d.id(join(af, "target_id"), a.GetTargetId()),
				AssociationType:  enum[memory.AssociationType](d, join(af, "association_type"), a.GetAssociationType()),
				Weight:           a.GetWeight(),
				CreatedAt:        d.time(join(af, "created_at"), a.GetCreatedAt()),
				LastCoActivation: d.time(join(af, "last_co_activation"), a.GetLastCoActivation()),
				Origin:           enum[memory.AssociationOrigin](d, join(af, "origin"), a.GetOrigin()),
			}
		}
	}
	return r
}

func (d *decoder) rawRecord(f string, in *pb.RawJournalRecord) memory.RawJournalRecord {
	return memory.RawJournalRecord{
		ID:               d.id(join(f, "id"), in.GetId()),
		SessionID:        in.GetSessionId(),
		TurnID:           clone(in.TurnId),
		TopicID:          clone(in.TopicId),
		Source:           enum[memory.RawSource](d, join(f, "source"), in.GetSource()),
		Speaker:          enum[memory.RawSpeaker](d, join(f, "speaker"), in.GetSpeaker()),
		Visibility:       enum[memory.Visibility](d, join(f, "visibility"), in.GetVisibility()),
		SecrecyLevel:     enum[memory.SecrecyLevel](d, join(f, "secrecy_level"), in.GetSecrecyLevel()),
		CreatedAt:        d.time(join(f, "created_at"), in.GetCreatedAt()),
		UpdatedAt:        d.time(join(f, "updated_at"), in.GetUpdatedAt()),
		Content:          d.content(join(f, "content"), in.GetContent()),
		Metadata:         d.object(join(f, "metadata"), in.GetMetadata()),
		DerivedMemoryIDs: d.ids(join(f, "derived_memory_ids"), in.GetDerivedMemoryIds()),
		Suppressed:       in.GetSuppressed(),
		Meta:             d.meta(join(f, "meta"), in.GetMeta()),
	}
}
