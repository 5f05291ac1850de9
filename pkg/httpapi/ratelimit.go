package httpapi

import (
	"net/http"
	"net/netip"
	"strings"
)

// clientAddr identifies the client of r for rate limiting (when
// authentication is off or has failed): the TCP peer, unless the peer is
// a trusted proxy, in which case the rightmost X-Forwarded-For entry that is
// an IP address outside the trusted networks, else X-Real-IP, else the
// peer.
func (s *Server) clientAddr(r *http.Request) netip.Addr {
	peer, ok := parsePeer(r.RemoteAddr)
	if !ok {
		return netip.IPv4Unspecified()
	}
	if !s.isTrusted(peer) {
		return peer
	}
	var entries []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		entries = append(entries, strings.Split(v, ",")...)
	}
	for i := len(entries) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(entries[i]))
		if err != nil {
			continue
		}
		a = a.Unmap().WithZone("")
		if s.isTrusted(a) {
			continue
		}
		return a
	}
	if a, err := netip.ParseAddr(strings.TrimSpace(r.Header.Get("X-Real-IP"))); err == nil {
		return a.Unmap().WithZone("")
	}
	return peer
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
