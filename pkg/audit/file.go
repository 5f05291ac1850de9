package audit

import (
	"errors"
	"io"
	"io/fs"
	"memsvc.dev/memsvc/internal/fsutil"
	"os"
)

// fileSys is the part of the file system a Log uses, so that tests can fail
// any operation.
type fileSys interface {
	MkdirAll(dir string, perm fs.FileMode) error
	// OpenLog opens path for reading and appending, creating it with mode
	// 0600 if missing, and takes the writer lock (ErrLocked when held).
	OpenLog(path string) (logFile, error)
	SyncDir(dir string) error
}

type logFile interface {
	io.ReaderAt
	io.Writer
	Stat() (fs.FileInfo, error)
	Truncate(size int64) error
	Sync() error
	Close() error
}

type osFS struct{}

func (osFS) MkdirAll(dir string, perm fs.FileMode) error { return os.MkdirAll(dir, perm) }

func (osFS) OpenLog(path string) (logFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	if err := fsutil.TryLock(f); err != nil {
		f.Close()
		if errors.Is(err, fsutil.ErrLocked) {
			return nil, ErrLocked
		}
		return nil, err
	}
	return f, nil
}

func (osFS) SyncDir(dir string) error { return fsutil.SyncDir(dir) }
