package grpcapi

import (
	"context"
	"net"
	"net/netip"
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
// "" without authentication (the caller is then limited by address).
func (s *Server) authenticate(ctx context.Context) (string, error) {
	if s.keys == nil {
		return "", nil
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

// peerAddr is the IP address of the caller. gRPC has no forwarded headers
// to believe, so it is always the connection's peer. A connection without
// an IP address (an in-process listener) counts as the unspecified
// address, as a peer the HTTP transport cannot parse does.
func peerAddr(ctx context.Context) netip.Addr {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return netip.IPv4Unspecified()
	}
	if tcp, ok := p.Addr.(*net.TCPAddr); ok {
		return tcp.AddrPort().Addr()
	}
	if ap, err := netip.ParseAddrPort(p.Addr.String()); err == nil {
		return ap.Addr()
	}
	return netip.IPv4Unspecified()
}
