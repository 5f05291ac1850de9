//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package mcpproxy

import "net"

// idleClosed cannot look at an idle connection here without waiting; a
// connection the server closed is found when the request fails, and the
// request is sent again on a new one (connTransport.RoundTrip).
func idleClosed(net.Conn) bool { return false }
