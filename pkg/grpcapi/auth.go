package grpcapi

import (
	"context"
	"net"
	"net/netip"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
)

// authMetadata is the metadata key of the credential.
const authMetadata = "authorization"

// msgMissingAuth says what to send when a call has no usable credential.
const msgMissingAuth = `missing or malformed authorization metadata; send "authorization: Bearer <api key>"`

// credential is the "Bearer <key>" the call carries, or "" when it has
// none. A call carrying the credential more than once has none: it is
// refused as malformed when authentication is on.
func credential(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	if values := md.Get(authMetadata); len(values) == 1 {
		return values[0]
	}
	return ""
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
