//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package spool

import (
	"io/fs"
	"syscall"
)

// Directory modes mean what the package comment says on these systems.
const privateModeSupported = true

// ownerOf returns the user id owning the file.
func ownerOf(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
