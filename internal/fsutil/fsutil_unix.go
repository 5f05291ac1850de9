//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package fsutil

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// CanLock and CanSyncDir say whether TryLock and SyncDir do anything here.
const (
	CanLock    = true
	CanSyncDir = true
)

// TryLock takes an exclusive advisory lock (flock) on f without waiting,
// or fails with ErrLocked. The lock lasts until f is closed, and a process
// that dies releases it.
func TryLock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.EWOULDBLOCK):
		return ErrLocked
	default:
		return fmt.Errorf("lock %s: %w", f.Name(), err)
	}
}
