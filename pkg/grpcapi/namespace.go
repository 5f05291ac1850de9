package grpcapi

import (
	"context"
	"errors"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"memsvc.dev/memsvc/pkg/access"
	pb "memsvc.dev/memsvc/pkg/grpcapi/memsvcpb"
	"memsvc.dev/memsvc/pkg/memory"
)

// NamespaceMetadata is the metadata key that names the namespace a call
// acts in, as the X-Memsvc-Namespace header does over HTTP.
const NamespaceMetadata = "memsvc-namespace"

// reach is what a method acts on, as far as namespaces go.
type reach uint8

const (
	// inMetadata methods act in the namespace of NamespaceMetadata, or in
	// the default one (access.Scope.Resolve): every CMP operation.
	inMetadata reach = iota
	// inRequest methods act in the namespace their request names
	// (DropNamespace), which the handler checks.
	inRequest
	// keyWide methods answer for the namespaces of the caller's key
	// (Namespaces).
	keyWide
)

// reachOf is the reach of a method of the CMP service. Every method not
// named here acts in the namespace of the metadata, so a new RPC is
// confined to one namespace unless it says otherwise.
func reachOf(fullMethod string) reach {
	switch fullMethod {
	case pb.MemsvcService_Namespaces_FullMethodName:
		return keyWide
	case pb.MemsvcService_DropNamespace_FullMethodName:
		return inRequest
	}
	return inMetadata
}

type identityKey struct{}

// scopeOf is the set of namespaces the caller of ctx may use; none for a
// call that was not admitted (which does not reach a handler).
func scopeOf(ctx context.Context) access.Scope {
	id, _ := ctx.Value(identityKey{}).(access.Identity)
	return id.Scope
}

// confine records the caller's identity in ctx and, for a method that acts
// in the namespace of the metadata, checks the namespace against the
// caller's key and puts it into ctx.
func confine(ctx context.Context, fullMethod string, id access.Identity) (context.Context, error) {
	ctx = context.WithValue(ctx, identityKey{}, id)
	if reachOf(fullMethod) != inMetadata {
		return ctx, nil
	}
	requested, err := metadataNamespace(ctx)
	if err != nil {
		return nil, err
	}
	ns, err := id.Scope.Resolve(requested)
	if err != nil {
		return nil, err
	}
	return memory.WithNamespace(ctx, ns), nil
}

// metadataNamespace is the namespace the call's metadata names, checked;
// "" when it names none.
func metadataNamespace(ctx context.Context) (string, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	values := md.Get(NamespaceMetadata)
	switch len(values) {
	case 0:
		return "", nil
	case 1:
	default:
		return "", memory.Invalid(NamespaceMetadata+" metadata", "sent %d times; send it once", len(values))
	}
	if err := memory.ValidateNamespace(values[0]); err != nil {
		return "", renamed(err, NamespaceMetadata+" metadata")
	}
	return values[0], nil
}

// renamed says where a namespace that memory.ValidateNamespace refused
// came from, in place of its generic field name.
func renamed(err error, where string) error {
	var me *memory.Error
	if !errors.As(err, &me) {
		return err
	}
	return memory.Invalid(where, "%s", strings.TrimPrefix(me.Message, "namespace: "))
}

// confinedStream is a server stream whose context names the namespace of
// the call.
type confinedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *confinedStream) Context() context.Context { return s.ctx }

func (h *service) Namespaces(ctx context.Context, in *pb.NamespacesRequest) (*pb.NamespacesResponse, error) {
	list := func(ctx context.Context, _ *struct{}) (*memory.NamespacesResponse, error) {
		resp, err := h.s.svc.Namespaces(ctx)
		if err != nil {
			return nil, err
		}
		return &memory.NamespacesResponse{Namespaces: scopeOf(ctx).Visible(resp.Namespaces)}, nil
	}
	return unary(ctx, h.s, in, empty[*pb.NamespacesRequest], list, toProtoNamespacesResponse)
}

func (h *service) DropNamespace(ctx context.Context, in *pb.DropNamespaceRequest) (*pb.DropNamespaceResponse, error) {
	drop := func(ctx context.Context, req *memory.DropNamespaceRequest) (*memory.DropNamespaceResponse, error) {
		if err := memory.ValidateNamespace(req.Name); err != nil {
			return nil, renamed(err, "name")
		}
		if _, err := scopeOf(ctx).Resolve(req.Name); err != nil {
			return nil, err
		}
		return h.s.svc.DropNamespace(memory.WithNamespace(ctx, req.Name), req)
	}
	return unary(ctx, h.s, in, toModelDropNamespaceRequest, drop, toProtoDropNamespaceResponse)
}

func (h *service) Stats(ctx context.Context, in *pb.StatsRequest) (*pb.StatsResponse, error) {
	stats := func(ctx context.Context, _ *struct{}) (*memory.Stats, error) {
		if !in.GetAllNamespaces() {
			return h.s.svc.Stats(ctx)
		}
		if err := scopeOf(ctx).RequireAll("stats of all namespaces"); err != nil {
			return nil, err
		}
		return h.s.svc.StatsAll(ctx)
	}
	return unary(ctx, h.s, in, empty[*pb.StatsRequest], stats, toProtoStats)
}

func toProtoNamespacesResponse(_ *encoder, r *memory.NamespacesResponse) *pb.NamespacesResponse {
	out := &pb.NamespacesResponse{Namespaces: make([]*pb.NamespaceInfo, len(r.Namespaces))}
	for i, n := range r.Namespaces {
		out.Namespaces[i] = &pb.NamespaceInfo{
			Name:              n.Name,
			TotalRecords:      n.TotalRecords,
			RecordsByStore:    n.RecordsByStore,
			RawJournalRecords: n.RawJournalRecords,
		}
	}
	return out
}

func toModelDropNamespaceRequest(_ *decoder, _ string, in *pb.DropNamespaceRequest) *memory.DropNamespaceRequest {
	return &memory.DropNamespaceRequest{Name: in.GetName(), Confirm: in.GetConfirm()}
}

func toProtoDropNamespaceResponse(_ *encoder, r *memory.DropNamespaceResponse) *pb.DropNamespaceResponse {
	return &pb.DropNamespaceResponse{Name: r.Name, RecordsDeleted: r.RecordsDeleted, RawEntriesDeleted: r.RawEntriesDeleted}
}
