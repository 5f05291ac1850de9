package store

import (
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// ErrNoSpace matches every *NoSpaceError.
var ErrNoSpace = errors.New("not enough free disk space")

// NoSpaceError refuses to open or write a data directory whose file system
// has less free space than the store keeps in reserve.
type NoSpaceError struct {
	// Dir is the data directory.
	Dir string
	// Free is the space available on its file system, in bytes.
	Free uint64
	// Need is the reserve plus the size of the refused write, in bytes.
	Need uint64
	// Opening is set when the refusal came at Open rather than a commit.
	Opening bool
}

func (e *NoSpaceError) Error() string {
	what := "not writing to"
	if e.Opening {
		what = "not opening"
	}
	return fmt.Sprintf("%s data directory %s: %s free on its file system, %s needed", what, e.Dir, MiB(e.Free), MiB(e.Need))
}

// Is makes a NoSpaceError match ErrNoSpace.
func (e *NoSpaceError) Is(target error) bool { return target == ErrNoSpace }

// MiB renders a byte count for messages, in MiB with one decimal.
func MiB(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// DiskFree returns the bytes available to this process on the file system
// that holds path.
func DiskFree(path string) (uint64, error) {
	u, err := vfs.Default.GetDiskUsage(path)
	if err != nil {
		return 0, err
	}
	return u.AvailBytes, nil
}

// spaceGuard keeps a reserve of free space on the data directory's file
// system. pebble treats a failed write of its write-ahead log or manifest
// as fatal and ends the process; refusing a commit before pebble sees it
// turns a full disk into an error instead, and the reserve leaves room for
// pebble's own flushes and compactions.
type spaceGuard struct {
	dir     string
	reserve uint64 // 0: no guard
	free    func(path string) (uint64, error)
}

func newSpaceGuard(dir string, o Options) spaceGuard {
	g := spaceGuard{dir: dir, reserve: o.MinFreeBytes, free: o.DiskFree}
	if g.free == nil {
		g.free = DiskFree
	}
	return g
}

// check returns a *NoSpaceError when writing n more bytes would leave less
// than the reserve. When the free space cannot be read, it lets the write
// through: pebble's own error is then the answer.
func (g spaceGuard) check(n int) error {
	if g.reserve == 0 || g.dir == "" {
		return nil
	}
	free, err := g.free(g.dir)
	if err != nil {
		return nil
	}
	if need := g.reserve + uint64(n); free < need {
		return &NoSpaceError{Dir: g.dir, Free: free, Need: need}
	}
	return nil
}
