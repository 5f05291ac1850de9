package testkit

import (
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

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
