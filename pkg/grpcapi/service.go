package grpcapi

import (
	"context"
	"errors"
	"fmt"

	pb "memsvc.dev/memsvc/pkg/grpcapi/memsvcpb"
)

// service implements the generated MemsvcServiceServer. Every method
// converts the request, calls the memory.Service and converts the answer;
// there is no other logic here.
type service struct {
	pb.UnimplementedMemsvcServiceServer
	s *Server
}

var errNoResult = errors.New("service returned neither a result nor an error")

// unary is the one path of every unary RPC.
func unary[In, Req, Resp, Out any](
	ctx context.Context, s *Server, in In,
	dec func(*decoder, string, In) *Req,
	call func(context.Context, *Req) (*Resp, error),
	enc func(*encoder, *Resp) Out,
) (Out, error) {
	var zero Out
	var d decoder
	req := dec(&d, "", in)
	if d.err != nil {
		return zero, s.status(ctx, d.err)
	}
	resp, err := call(ctx, req)
	if err == nil && resp == nil {
		err = errNoResult
	}
	if err != nil {
		return zero, s.status(ctx, serviceError(err))
	}
	var e encoder
	out := enc(&e, resp)
	if e.err != nil {
		return zero, s.status(ctx, fmt.Errorf("encode answer: %w", e.err))
	}
	return out, nil
}

// noResult adapts an operation that answers nothing.
func noResult[Req any](call func(context.Context, *Req) error) func(context.Context, *Req) (*struct{}, error) {
	return func(ctx context.Context, req *Req) (*struct{}, error) {
		if err := call(ctx, req); err != nil {
			return nil, err
		}
		return &struct{}{}, nil
	}
}

// noRequest adapts an operation that takes no request.
func noRequest[Resp any](call func(context.Context) (*Resp, error)) func(context.Context, *struct{}) (*Resp, error) {
	return func(ctx context.Context, _ *struct{}) (*Resp, error) { return call(ctx) }
}

func empty[In any](*decoder, string, In) *struct{} { return &struct{}{} }

func (h *service) EncodeStore(ctx context.Context, in *pb.EncodeStoreRequest) (*pb.EncodeStoreResponse, error) {
	return unary(ctx, h.s, in, toModelEncodeStoreRequest, h.s.svc.EncodeStore, toProtoEncodeStoreResponse)
}

func (h *service) EncodeBatch(ctx context.Context, in *pb.EncodeBatchRequest) (*pb.EncodeBatchResponse, error) {
	return unary(ctx, h.s, in, toModelEncodeBatchRequest, h.s.svc.EncodeBatch, toProtoEncodeBatchResponse)
}

func (h *service) EncodeUpdate(ctx context.Context, in *pb.EncodeUpdateRequest) (*pb.EncodeUpdateResponse, error) {
	return unary(ctx, h.s, in, toModelEncodeUpdateRequest, noResult(h.s.svc.EncodeUpdate),
		func(*encoder, *struct{}) *pb.EncodeUpdateResponse { return &pb.EncodeUpdateResponse{} })
}

func (h *service) EncodeStoreRaw(ctx context.Context, in *pb.EncodeStoreRawRequest) (*pb.EncodeStoreRawResponse, error) {
	return unary(ctx, h.s, in, toModelEncodeStoreRawRequest, h.s.svc.EncodeStoreRaw, toProtoEncodeStoreRawResponse)
}

func (h *service) EncodeBatchStoreRaw(ctx context.Context, in *pb.EncodeBatchStoreRawRequest) (*pb.EncodeBatchStoreRawResponse, error) {
	return unary(ctx, h.s, in, toModelEncodeBatchStoreRawRequest, h.s.svc.EncodeBatchRaw, toProtoEncodeBatchStoreRawResponse)
}

func (h *service) RecallQuery(ctx context.Context, in *pb.RecallQueryRequest) (*pb.RecallQueryResponse, error) {
	return unary(ctx, h.s, in, toModelRecallQueryRequest, h.s.svc.RecallQuery, toProtoRecallQueryResponse)
}

func (h *service) RecallRawQuery(ctx context.Context, in *pb.RecallRawQueryRequest) (*pb.RecallRawQueryResponse, error) {
	return unary(ctx, h.s, in, toModelRecallRawQueryRequest, h.s.svc.RecallRaw, toProtoRecallRawQueryResponse)
}

func (h *service) RecallAssociate(ctx context.Context, in *pb.RecallAssociateRequest) (*pb.RecallAssociateResponse, error) {
	return unary(ctx, h.s, in, toModelRecallAssociateRequest, h.s.svc.RecallAssociate, toProtoRecallAssociateResponse)
}

func (h *service) RecallTimeline(ctx context.Context, in *pb.RecallTimelineRequest) (*pb.RecallTimelineResponse, error) {
	return unary(ctx, h.s, in, toModelRecallTimelineRequest, h.s.svc.RecallTimeline, toProtoRecallTimelineResponse)
}

func (h *service) RecallGraph(ctx context.Context, in *pb.RecallGraphRequest) (*pb.RecallGraphResponse, error) {
	return unary(ctx, h.s, in, toModelRecallGraphRequest, h.s.svc.RecallGraph, toProtoRecallGraphResponse)
}

func (h *service) Consolidate(ctx context.Context, in *pb.ConsolidateRequest) (*pb.ConsolidateResponse, error) {
	return unary(ctx, h.s, in, toModelConsolidateRequest, h.s.svc.Consolidate, toProtoConsolidateResponse)
}

func (h *service) DreamTick(ctx context.Context, in *pb.DreamTickRequest) (*pb.DreamTickResponse, error) {
	return unary(ctx, h.s, in, toModelDreamTickRequest, h.s.svc.DreamTick, toProtoDreamTickResponse)
}

func (h *service) DecayTick(ctx context.Context, in *pb.DecayTickRequest) (*pb.DecayTickResponse, error) {
	return unary(ctx, h.s, in, toModelDecayTickRequest, h.s.svc.DecayTick, toProtoDecayTickResponse)
}

func (h *service) SetMode(ctx context.Context, in *pb.SetModeRequest) (*pb.SetModeResponse, error) {
	return unary(ctx, h.s, in, toModelSetModeRequest, noResult(h.s.svc.SetMode),
		func(*encoder, *struct{}) *pb.SetModeResponse { return &pb.SetModeResponse{} })
}

func (h *service) Forget(ctx context.Context, in *pb.ForgetRequest) (*pb.ForgetResponse, error) {
	return unary(ctx, h.s, in, toModelForgetRequest, h.s.svc.Forget, toProtoForgetResponse)
}

func (h *service) IntrospectRecord(ctx context.Context, in *pb.IntrospectRecordRequest) (*pb.IntrospectRecordResponse, error) {
	return unary(ctx, h.s, in, toModelIntrospectRecordRequest, h.s.svc.Record, toProtoRecord)
}

func (h *service) DecayForecast(ctx context.Context, in *pb.DecayForecastRequest) (*pb.DecayForecastResponse, error) {
	return unary(ctx, h.s, in, toModelDecayForecastRequest, h.s.svc.DecayForecast, toProtoDecayForecastResponse)
}

func (h *service) Evolution(ctx context.Context, in *pb.EvolutionRequest) (*pb.EvolutionResponse, error) {
	return unary(ctx, h.s, in, empty[*pb.EvolutionRequest], noRequest(h.s.svc.Evolution), toProtoEvolutionResponse)
}

var _ pb.MemsvcServiceServer = (*service)(nil)
