//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package fsutil

import "os"

// Elsewhere (Windows) there is no flock and directories cannot be synced:
// TryLock always succeeds, so a second process is not detected, and
// SyncDir does nothing.
const (
	CanLock    = false
	CanSyncDir = false
)

// TryLock does nothing here; see CanLock.
func TryLock(*os.File) error { return nil }
