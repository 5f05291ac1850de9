// Package fsutil holds the two file system operations that the audit log,
// the recorder's spool and the backups need alike and that differ by
// operating system: an advisory lock that a dying process drops, and
// making the entries of a directory durable.
package fsutil

import (
	"errors"
	"os"
)

// ErrLocked reports that another open file (in this process or another)
// holds the lock.
var ErrLocked = errors.New("locked by another open file")

// SyncDir makes renames, creations and removals in dir durable. Where a
// directory cannot be synced (CanSyncDir is false) it does nothing.
func SyncDir(dir string) error {
	if !CanSyncDir {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
