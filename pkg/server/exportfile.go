package server

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"memsvc.dev/memsvc/internal/fsutil"
	"memsvc.dev/memsvc/pkg/engine"
)

// partInfix marks the temporary file of an export: ".<name>.part-<digits>"
// next to the archive <name>.
const partInfix = ".part-"

// ExportFile is an archive being written to a path through a temporary
// file next to it, named .<name>.part-<digits>, created with mode 0600 and
// locked while it is open. Commit syncs it and renames it into place, so
// the path never holds half an archive. A failed export calls Abort, which
// removes the temporary file; a killed one leaves it (a complete plaintext
// copy of the memories, perhaps), and RemoveStaleExports deletes it later.
//
// An ExportFile is an engine.ExportCommitter: the engine renames it into
// place before it audits the export, so the audit log never records an
// export whose file did not appear.
type ExportFile struct {
	path string
	tmp  *os.File
	w    *bufio.Writer

	finished  bool // committed or aborted
	committed bool
	err       error // the result of Commit
}

var _ engine.ExportCommitter = (*ExportFile)(nil)

// CreateExportFile starts an export to path.
func CreateExportFile(path string) (*ExportFile, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+partInfix+"*")
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	f := &ExportFile{path: path, tmp: tmp, w: bufio.NewWriterSize(tmp, 1<<20)}
	if err := errors.Join(tmp.Chmod(0o600), fsutil.TryLock(tmp)); err != nil {
		f.Abort()
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return f, nil
}

// Write writes archive bytes.
func (f *ExportFile) Write(p []byte) (int, error) {
	if f.finished {
		return 0, fmt.Errorf("write %s: export already finished", f.path)
	}
	return f.w.Write(p)
}

// Commit flushes, syncs and closes the temporary file and renames it to the
// path, replacing a file there. Calling it again returns the first result.
func (f *ExportFile) Commit() error {
	if f.finished {
		if !f.committed && f.err == nil {
			return fmt.Errorf("write %s: export was aborted", f.path)
		}
		return f.err
	}
	f.finished, f.committed = true, true
	err := f.w.Flush()
	if err == nil {
		err = f.tmp.Sync()
	}
	if cerr := f.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.tmp.Name(), f.path)
	}
	if err != nil {
		_ = os.Remove(f.tmp.Name())
		f.err = fmt.Errorf("write %s: %w", f.path, err)
		return f.err
	}
	// The file is in place; a failed directory sync only risks its name.
	_ = fsutil.SyncDir(filepath.Dir(f.path))
	return nil
}

// Abort removes the temporary file unless the export was committed. It is
// safe to call after Commit and more than once.
func (f *ExportFile) Abort() {
	if f.finished {
		return
	}
	f.finished = true
	_ = f.tmp.Close()
	_ = os.Remove(f.tmp.Name())
}

// isExportPart reports whether name is the temporary file of an export.
func isExportPart(name string) bool {
	i := strings.LastIndex(name, partInfix)
	if !strings.HasPrefix(name, ".") || i <= 1 {
		return false
	}
	digits := name[i+len(partInfix):]
	return digits != "" && strings.Trim(digits, "0123456789") == ""
}

// RemoveStaleExports deletes the temporary files that exports into dir
// left behind when they were killed, and returns their names. A temporary
// file still locked by a running export is kept. A missing dir holds
// nothing to remove.
func RemoveStaleExports(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look for unfinished exports: %w", err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		if !e.Type().IsRegular() || !isExportPart(e.Name()) {
			continue
		}
		ok, err := removeUnlocked(filepath.Join(dir, e.Name()))
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			removed = append(removed, e.Name())
		}
	}
	return removed, errors.Join(errs...)
}

// removeUnlocked removes path unless another open file holds its lock.
func removeUnlocked(path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil // finished meanwhile
	}
	if err != nil {
		return false, fmt.Errorf("remove unfinished export %s: %w", path, err)
	}
	defer f.Close()
	if err := fsutil.TryLock(f); errors.Is(err, fsutil.ErrLocked) {
		return false, nil // an export is writing it
	} else if err != nil {
		return false, fmt.Errorf("remove unfinished export %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("remove unfinished export %s: %w", path, err)
	}
	return true, nil
}
