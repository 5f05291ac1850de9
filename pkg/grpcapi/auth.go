package grpcapi

import (
	"context"
	"net"
	"strings"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"memsvc.dev/memsvc/pkg/access"
	"memsvc.dev/memsvc/pkg/memory"
)

// Metadata key and scheme of authentication.
const (
	authMetadata = "authorization"
	bearerPrefix = "Bearer "
)

// Messages of the two authentication failures.
const (
	msgMissingAuth = `missing or malformed authorization metadata; send "authorization: Bearer <api key>"`
	msgInvalidKey  = "invalid API key"
)

// authenticate checks the Bearer token of the call when authentication is
// on and returns the rate limiting key of the caller: the key's digest, or
// the peer's address without authentication.
func (s *Server) authenticate(ctx context.Context) (string, error) {
	if s.keys == nil {
		return "ip:" + peerHost(ctx), nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	values := md.Get(authMetadata)
	if len(values) != 1 {
		return "", memory.Errorf(memory.CodeUnauthorized, msgMissingAuth)
	}
	token, ok := strings.CutPrefix(values[0], bearerPrefix)
	if !ok {
		return "", memory.Errorf(memory.CodeUnauthorized, msgMissingAuth)
	}
	d, ok := s.keys.Match(token)
	if !ok {
		return "", memory.Errorf(memory.CodeUnauthorized, msgInvalidKey)
	}
	return access.ClientKey(d), nil
}

// peerHost is the address of the caller without its port.
func peerHost(ctx context.Context) string {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return "unknown"
	}
	if tcp, ok := p.Addr.(*net.TCPAddr); ok {
		return tcp.IP.String()
	}
	if host, _, err := net.SplitHostPort(p.Addr.String()); err == nil {
		return host
	}
	return p.Addr.String()
}
