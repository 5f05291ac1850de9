//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package audit

import "os"

// lockFile does nothing where flock is missing: a second writer is not
// detected there.
func lockFile(*os.File) error { return nil }

// syncDir does nothing where directories cannot be synced.
func syncDir(string) error { return nil }

const haveFileLock = false
