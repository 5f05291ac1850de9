package grpcapi

import (
	"context"
	"net"
	"net/netip"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"memsvc.dev/memsvc/pkg/access"
)

// authMetadata is the metadata key of the credential.
const authMetadata = "authorization"

// msgMissingAuth says what to send when a call has no usable credential.
const msgMissingAuth = `missing or malformed authorization metadata; send "authorization: Bearer <api key>"`

// identify checks the Bearer token of the call when authentication is on
// and returns who the caller is: its rate limiting key (the key's digest,
// or "" without authentication, when the caller is limited by address)
// and the namespaces it may use. A call carrying the credential more than
// once is refused as malformed.
func (s *Server) identify(ctx context.Context) (access.Identity, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	credential := ""
	if values := md.Get(authMetadata); len(values) == 1 {
		credential = values[0]
	}
	return s.keys.Identify(credential, msgMissingAuth)
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
