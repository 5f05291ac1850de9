//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package backup

import (
	"errors"
	"os"
	"syscall"
)

// lockDir takes an exclusive, non-blocking flock on the directory itself,
// so the lock needs no extra file and disappears with the process.
func lockDir(dir string) (unlock func(), err error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = d.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		return nil, err
	}
	return func() { _ = d.Close() }, nil
}

// syncDir makes renames and deletions in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}
