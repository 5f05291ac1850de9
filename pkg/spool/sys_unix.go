//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package spool

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// Directory modes and fsync of directories mean what the package comment
// says on these systems.
const (
	privateModeSupported = true
	dirSyncSupported     = true
)

// ownerOf returns the user id owning the file.
func ownerOf(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// flock takes an exclusive advisory lock on f without waiting.
func flock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.EWOULDBLOCK):
		return ErrLocked
	default:
		return fmt.Errorf("lock: %w", err)
	}
}
