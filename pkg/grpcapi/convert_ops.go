package grpcapi

import (
	"fmt"

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

func pbStoreList(in []memory.StoreType) *pb.StoreTypeList {
	if in == nil {
		return nil
	}
	return &pb.StoreTypeList{Values: pbEnums[pb.StoreType](in)}
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

func pbSecrecyList(in []memory.SecrecyLevel) *pb.SecrecyLevelList {
	if in == nil {
		return nil
	}
	return &pb.SecrecyLevelList{Values: pbEnums[pb.SecrecyLevel](in)}
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
	return &r
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
	}
}

func (d *decoder) recalled(f string, in []*pb.RecalledMemory) []memory.RecalledMemory {
	if len(in) == 0 {
		return nil
	}
	out := make([]memory.RecalledMemory, len(in))
	for i, m := range in {
		mf := index(f, i)
		out[i] = memory.RecalledMemory{
			Record:          d.record(join(mf, "record"), m.GetRecord()),
			RelevanceScore:  m.GetRelevanceScore(),
			ActivationPath:  d.ids(join(mf, "activation_path"), m.GetActivationPath()),
			RenderedContent: d.content(join(mf, "rendered_content"), m.GetRenderedContent()),
		}
	}
	return out
}

func (e *encoder) recalled(in []memory.RecalledMemory) []*pb.RecalledMemory {
	if in == nil {
		return nil
	}
	out := make([]*pb.RecalledMemory, len(in))
	for i := range in {
		m := &in[i]
		out[i] = &pb.RecalledMemory{
			Record:          e.record(&m.Record),
			RelevanceScore:  m.RelevanceScore,
			ActivationPath:  idStrings(m.ActivationPath),
			RenderedContent: pbContent(&m.RenderedContent),
		}
	}
	return out
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
	return &r
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
	return &r
}

func toProtoRecallTimelineRequest(_ *encoder, r *memory.RecallTimelineRequest) *pb.RecallTimelineRequest {
	return &pb.RecallTimelineRequest{
		Header:        pbHeader(r.Header),
		Range:         pbTemporalRange(r.Range),
		Granularity:   pb.TimeGranularity(r.Granularity),
		MinFidelity:   clone(r.MinFidelity),
		EmotionFilter: pbEmotion(r.EmotionFilter),
	}
}

func toModelRecallTimelineResponse(d *decoder, f string, in *pb.RecallTimelineResponse) *memory.RecallTimelineResponse {
	r := &memory.RecallTimelineResponse{}
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

func toProtoRecallTimelineResponse(e *encoder, r *memory.RecallTimelineResponse) *pb.RecallTimelineResponse {
	out := &pb.RecallTimelineResponse{}
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

func toProtoDreamTickResponse(_ *encoder, r *memory.DreamTickResponse) *pb.DreamTickResponse {
	return &pb.DreamTickResponse{
		GroupsProcessed: r.GroupsProcessed, RawRecordsProcessed: r.RawRecordsProcessed,
		EpisodicSummariesCreated: r.EpisodicSummariesCreated, SemanticNodesCreated: r.SemanticNodesCreated,
	}
}

func toModelDecayTickRequest(d *decoder, f string, in *pb.DecayTickRequest) *memory.DecayTickRequest {
	return &memory.DecayTickRequest{Header: d.header(join(f, "header"), in.GetHeader()), TickDurationSeconds: clone(in.TickDurationSeconds)}
}

func toProtoDecayTickRequest(_ *encoder, r *memory.DecayTickRequest) *pb.DecayTickRequest {
	return &pb.DecayTickRequest{Header: pbHeader(r.Header), TickDurationSeconds: clone(r.TickDurationSeconds)}
}

func toModelDecayTickResponse(_ *decoder, _ string, in *pb.DecayTickResponse) *memory.DecayTickResponse {
	return &memory.DecayTickResponse{RecordsUpdated: in.GetRecordsUpdated(), RecordsBelowThreshold: in.GetRecordsBelowThreshold(), RecordsPruned: in.GetRecordsPruned()}
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

func toProtoSetModeRequest(_ *encoder, r *memory.SetModeRequest) *pb.SetModeRequest {
	return &pb.SetModeRequest{Header: pbHeader(r.Header), Mode: pb.RecallMode(r.Mode), Scope: pbEnums[pb.StoreType](r.Scope)}
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
	return &r
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
	}
}

func toModelExportSummary(_ *decoder, _ string, in *pb.ExportSummary) *memory.ExportResponse {
	return &memory.ExportResponse{ArchiveID: in.GetArchiveId(), SizeBytes: in.GetSizeBytes(), RecordCount: in.GetRecordCount(), Checksum: in.GetChecksum()}
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
	return &r
}

func toProtoImportOptions(_ *encoder, r *memory.ImportRequest) *pb.ImportOptions {
	return &pb.ImportOptions{
		Header:             pbHeader(r.Header),
		ArchiveId:          r.ArchiveID,
		Strategy:           pb.ImportStrategy(r.Strategy),
		ConflictResolution: pb.ConflictResolution(r.ConflictResolution),
		DecryptionKey:      clone(r.DecryptionKey),
	}
}

func toModelImportResponse(_ *decoder, _ string, in *pb.ImportResponse) *memory.ImportResponse {
	return &memory.ImportResponse{RecordsImported: in.GetRecordsImported()}
}

func toProtoImportResponse(_ *encoder, r *memory.ImportResponse) *pb.ImportResponse {
	return &pb.ImportResponse{RecordsImported: r.RecordsImported}
}

// ---------------------------------------------------------------- introspect

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
	}
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

func toModelEvolutionResponse(d *decoder, f string, in *pb.EvolutionResponse) *memory.EvolutionMetrics {
	m := toModelEvolution(d, join(f, "metrics"), in.GetMetrics())
	if m == nil {
		m = &memory.EvolutionMetrics{}
	}
	return m
}

func toProtoEvolutionResponse(e *encoder, m *memory.EvolutionMetrics) *pb.EvolutionResponse {
	return &pb.EvolutionResponse{Metrics: toProtoEvolution(e, m)}
}
