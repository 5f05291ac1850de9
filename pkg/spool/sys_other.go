//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package spool

import (
	"io/fs"
	"os"
)

// Elsewhere (Windows) permission bits do not describe who may read the
// directory and directories cannot be fsynced: both checks are skipped.
const (
	privateModeSupported = false
	dirSyncSupported     = false
)

func ownerOf(fs.FileInfo) (int, bool) { return 0, false }

// flock does nothing where flock is missing: locks always succeed, so
// processes are not kept apart there (record ids still prevent duplicates).
func flock(*os.File) error { return nil }
