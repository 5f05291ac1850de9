package httpapi

import (
	"net/http"
	"net/netip"
	"strings"

	"memsvc.dev/memsvc/pkg/access"
)

// clientAddr identifies the client of r for rate limiting (when
// authentication is off or has failed): the TCP peer, unless the peer is a
// trusted proxy. Behind a trusted proxy it is the rightmost X-Forwarded-For
// entry (an address, with or without a port) outside the trusted networks,
// or the peer when every entry is trusted; X-Real-IP counts only when there
// is no X-Forwarded-For at all, so that a client cannot name another
// address by adding a header its proxy does not overwrite.
func (s *Server) clientAddr(r *http.Request) netip.Addr {
	peer, ok := parsePeer(r.RemoteAddr)
	if !ok {
		return netip.IPv4Unspecified()
	}
	if !s.isTrusted(peer) {
		return peer
	}
	forwarded := r.Header.Values("X-Forwarded-For")
	if len(forwarded) == 0 {
		if a, ok := parsePeer(strings.TrimSpace(r.Header.Get("X-Real-IP"))); ok {
			return a
		}
		return peer
	}
	var entries []string
	for _, v := range forwarded {
		entries = append(entries, strings.Split(v, ",")...)
	}
	for i := len(entries) - 1; i >= 0; i-- {
		a, ok := parsePeer(strings.TrimSpace(entries[i]))
		if !ok || s.isTrusted(a) {
			continue
		}
		return a
	}
	return peer
}

// caller describes the client of r for access.Limiter.Admit: its address
// (clientAddr), and whether it is local: a loopback client that no proxy
// speaks for. A request from a loopback peer that carries forwarding
// headers came through a proxy on this host; unless that proxy is trusted
// (and names a loopback client), its clients are elsewhere and share the
// proxy's bucket.
func (s *Server) caller(r *http.Request) access.Caller {
	a := s.clientAddr(r)
	local := a.IsLoopback()
	if peer, ok := parsePeer(r.RemoteAddr); ok && local && !s.isTrusted(peer) && forwarded(r) {
		local = false
	}
	return access.Caller{Addr: a, Local: local}
}

// forwarded reports whether r carries a header a proxy adds to name the
// client it speaks for.
func forwarded(r *http.Request) bool {
	for _, h := range []string{"X-Forwarded-For", "X-Real-IP", "Forwarded"} {
		if len(r.Header.Values(h)) > 0 {
			return true
		}
	}
	return false
}

func parsePeer(remote string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(remote); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	if a, err := netip.ParseAddr(remote); err == nil {
		return a.Unmap().WithZone(""), true
	}
	return netip.Addr{}, false
}

func (s *Server) isTrusted(a netip.Addr) bool {
	for _, p := range s.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
