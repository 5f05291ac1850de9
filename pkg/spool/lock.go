package spool

import (
	"context"
	"errors"
	"fmt"
	"memsvc.dev/memsvc/internal/fsutil"
	"os"
	"time"
)

// TryLock takes the advisory lock called name (the file name.lock in the
// directory) without waiting. It fails with ErrLocked while another process
// (or another TryLock in this one) holds it. The returned function releases
// the lock. A process that dies releases its locks.
func (d *Dir) TryLock(name string) (unlock func(), err error) {
	p, err := d.file(name + lockSuffix)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, fileMode)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", name, err)
	}
	if err := fsutil.TryLock(f); err != nil {
		f.Close()
		if errors.Is(err, fsutil.ErrLocked) {
			return nil, ErrLocked
		}
		return nil, err
	}
	return func() { _ = f.Close() }, nil
}

// lockPoll is how often Lock retries a held lock.
const lockPoll = 5 * time.Millisecond

// Lock takes the lock called name, waiting until it is free or ctx ends.
func (d *Dir) Lock(ctx context.Context, name string) (unlock func(), err error) {
	t := time.NewTicker(lockPoll)
	defer t.Stop()
	for {
		unlock, err := d.TryLock(name)
		if !errors.Is(err, ErrLocked) {
			return unlock, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for lock %s: %w", name, ctx.Err())
		case <-t.C:
		}
	}
}
