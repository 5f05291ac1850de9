// Package grpcapi serves any memory.Service over gRPC: the typed CMP API of
// proto/memsvc/v1/memsvc.proto (package memsvc.v1, generated into
// memsvcpb), the standard grpc.health.v1 health service and server
// reflection, with TLS, Bearer authentication and the HTTP API's rate
// limits.
//
// # Calls
//
// Every RPC converts its request to the pkg/memory model, calls the
// service and converts the answer back (convert.go, convert_ops.go); the
// conversion rules are in the .proto file's header. Invalid input that the
// conversion catches (a malformed UUID, an enum number the model does not
// know, an invalid timestamp) is INVALID_ARGUMENT with the same kind of
// message the HTTP API gives, naming the field by its JSON path.
//
// Export is a server stream: data messages of up to 64 KiB in archive
// order, then one summary message (archive id, size, record count,
// checksum), which exists only once the last byte is written. A stream
// that ends with an error has no summary. Import is a client stream: the
// first message carries the options and may carry data, later ones data
// only; the archive is limited by Options.MaxImportBytes.
//
// # Errors
//
// Code is the one table from CMP codes to gRPC codes. Every error status
// carries a google.rpc.ErrorInfo detail whose reason is the CMP code and
// whose domain is ErrorDomain; RATE_LIMITED (and any error with a retry
// time) also carries google.rpc.RetryInfo. Failures that are not
// *memory.Error values are INTERNAL with a fixed message, and their cause
// is logged. A service that reports UNAUTHORIZED (a store it cannot
// decrypt) is INTERNAL too: UNAUTHENTICATED is kept for the caller's key.
// A cancelled or expired call is CANCELLED or DEADLINE_EXCEEDED.
//
// # Pipeline
//
// An interceptor recovers panics (INTERNAL, logged with the stack) and
// admits every call except the health service and reflection, in the order
// of access.Limiter.Admit that the HTTP transport follows too:
//
//   - An authenticated call spends a token of its key's bucket; without
//     authentication, of its peer address's.
//   - A call whose authentication fails ("authorization: Bearer <key>"
//     metadata, compared in constant time with every key) spends a token of
//     its peer address's bucket and is UNAUTHENTICATED, or
//     RESOURCE_EXHAUSTED (RATE_LIMITED, with RetryInfo) once that bucket is
//     empty.
//
// A valid key is served from its own bucket even from an address emptied
// by failures, so one client sending bad keys cannot lock out the others
// behind the same address. Addresses are named as the HTTP transport names
// them (access.AddressKey), so a Limiter shared through Options.Limiter
// gives a client one bucket across both.
//
// An admitted call is then confined to its namespace before its handler
// runs (namespace.go): every RPC acts in the namespace of the
// memsvc-namespace metadata (NamespaceMetadata; a malformed one is
// INVALID_ARGUMENT), chosen by access.Scope.Resolve as over HTTP, and a key
// that may not use it gets PERMISSION_DENIED with reason FORBIDDEN.
// Namespaces answers for the namespaces of the key, DropNamespace acts in
// the namespace its request names, and stats over all namespaces need a
// key that may use every namespace.
//
// # Lifecycle
//
// Serve answers until its context ends; then the health service reports
// NOT_SERVING, new calls are refused and running calls get
// Options.ShutdownTimeout to finish before their connections are closed.
// BeginShutdown flips health to NOT_SERVING earlier, for a server that
// drains several transports.
package grpcapi

//go:generate go -C ../../tools run ./cmd/protogen
