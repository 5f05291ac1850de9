// Package memsvcpb holds the Go code protoc generates from
// proto/memsvc/v1/memsvc.proto: the messages and the service of memsvc's
// gRPC API. Do not edit the .pb.go files; regenerate them with the tools
// module's protogen command. pkg/grpcapi converts between these messages
// and the memory package's model.
package memsvcpb
