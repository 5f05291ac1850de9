//go:build linux || darwin || freebsd || netbsd || openbsd

package mcpproxy

import (
	"net"
	"syscall"
)

// idleClosed reports whether the server has closed an idle connection
// (or sent on it unasked, which spoils it as well): a peek that does not
// wait finds the end of the stream or data instead of nothing to read.
func idleClosed(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	closed := false
	var buf [1]byte
	err = rc.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		closed = n > 0 || (err == nil && n == 0) || (err != nil && err != syscall.EAGAIN && err != syscall.EWOULDBLOCK && err != syscall.EINTR)
		return true
	})
	return closed || err != nil
}
