package testkit

import (
	"context"
	"errors"
	"io"
	"testing"

	"google.golang.org/grpc"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	pb "memsvc.dev/memsvc/pkg/grpcapi/memsvcpb"
)

// ServiceMethods returns the methods of the CMP gRPC service, from its
// descriptor; the test fails when the descriptor has none, or not as many
// as the service description registers.
func ServiceMethods(t testing.TB) []protoreflect.MethodDescriptor {
	t.Helper()
	sd := pb.File_memsvc_v1_memsvc_proto.Services().ByName("MemsvcService")
	if sd == nil {
		t.Fatal("no MemsvcService in the file descriptor")
	}
	var out []protoreflect.MethodDescriptor
	for i := range sd.Methods().Len() {
		out = append(out, sd.Methods().Get(i))
	}
	registered := len(pb.MemsvcService_ServiceDesc.Methods) + len(pb.MemsvcService_ServiceDesc.Streams)
	if len(out) == 0 || len(out) != registered {
		t.Fatalf("the descriptor has %d methods, the service description %d", len(out), registered)
	}
	return out
}

// ServiceMethod returns the CMP service's method called name (for
// example "Export"); the test fails when there is none.
func ServiceMethod(t testing.TB, name string) protoreflect.MethodDescriptor {
	t.Helper()
	for _, m := range ServiceMethods(t) {
		if string(m.Name()) == name {
			return m
		}
	}
	t.Fatalf("no method %s", name)
	return nil
}

// Invoke calls method m on conn with the requests in, whatever the
// method's kind: a unary call takes in[0]; a client stream sends every
// one of in (stopping early when the server has already answered). It
// returns the answers, one or each message of a server stream, and the
// call's error. A stream of more than 100,000 answers is an error.
func Invoke(ctx context.Context, conn *grpc.ClientConn, m protoreflect.MethodDescriptor, in ...proto.Message) ([]proto.Message, error) {
	full := "/" + string(m.Parent().FullName()) + "/" + string(m.Name())
	if !m.IsStreamingClient() && !m.IsStreamingServer() {
		out := dynamicpb.NewMessage(m.Output())
		return []proto.Message{out}, conn.Invoke(ctx, full, in[0], out)
	}
	desc := &grpc.StreamDesc{StreamName: string(m.Name()), ClientStreams: m.IsStreamingClient(), ServerStreams: m.IsStreamingServer()}
	stream, err := conn.NewStream(ctx, desc, full)
	if err != nil {
		return nil, err
	}
	for _, msg := range in {
		if err := stream.SendMsg(msg); errors.Is(err, io.EOF) {
			break // the server answered early; RecvMsg reports it
		} else if err != nil {
			return nil, err
		}
	}
	if err := stream.CloseSend(); err != nil {
		return nil, err
	}
	var outs []proto.Message
	for range 100_000 {
		out := dynamicpb.NewMessage(m.Output())
		if err := stream.RecvMsg(out); err != nil {
			if errors.Is(err, io.EOF) {
				return outs, nil
			}
			return outs, err
		}
		outs = append(outs, out)
		if !m.IsStreamingServer() {
			return outs, nil
		}
	}
	return outs, errors.New("the stream did not end after 100,000 messages")
}

// ListServices asks the server behind conn for its services through gRPC
// reflection.
func ListServices(ctx context.Context, conn *grpc.ClientConn) ([]string, error) {
	stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = stream.CloseSend() }()
	if err := stream.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
		return nil, err
	}
	resp, err := stream.Recv()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	return names, nil
}
