//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package spool

import "io/fs"

// Elsewhere (Windows) permission bits do not describe who may read the
// directory: the check is skipped.
const privateModeSupported = false

func ownerOf(fs.FileInfo) (int, bool) { return 0, false }
