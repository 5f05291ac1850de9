package backup

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"memsvc.dev/memsvc/internal/fsutil"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

const (
	prefix     = "memsvc-"
	suffix     = ".cma"
	partSuffix = ".part"
	stampForm  = "20060102T150405Z"
)

// Name returns the file name of a backup started at t.
func Name(t time.Time) string {
	return prefix + t.UTC().Format(stampForm) + suffix
}

// isName reports whether name is a backup name followed by ext ("" for a
// complete backup, ".part" for one being written): the prefix, a valid
// time in exactly the form Name writes, the suffix.
func isName(name, ext string) bool {
	stamp, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return false
	}
	if stamp, ok = strings.CutSuffix(stamp, suffix+ext); !ok {
		return false
	}
	t, err := time.Parse(stampForm, stamp)
	return err == nil && t.Format(stampForm) == stamp
}

// List returns the complete backups in dir, newest first, as paths.
// Only regular files named like a backup count.
func List(dir string) ([]string, error) {
	names, err := matching(dir, "")
	if err != nil {
		return nil, err
	}
	slices.Reverse(names)
	paths := make([]string, len(names))
	for i, n := range names {
		paths[i] = filepath.Join(dir, n)
	}
	return paths, nil
}

// Rotate keeps the newest keep complete backups in dir and deletes the
// rest, returning the deleted paths. It touches nothing that is not named
// like a backup.
func Rotate(dir string, keep int, log *slog.Logger) ([]string, error) {
	return rotate(dir, keep, log, "")
}

// rotate is Rotate, except that the backup at path newest, when set, is
// kept as one of the keep whatever its name: a backup just made stays even
// when others carry later times (made while the clock ran ahead).
func rotate(dir string, keep int, log *slog.Logger, newest string) ([]string, error) {
	if keep < 1 {
		return nil, fmt.Errorf("keep %d: at least 1 backup must be kept", keep)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	all, err := List(dir)
	if err != nil {
		return nil, err
	}
	if i := slices.Index(all, newest); i >= 0 {
		all = append([]string{newest}, slices.Delete(all, i, i+1)...)
	}
	if len(all) <= keep {
		return nil, nil
	}
	removed, err := remove(all[keep:], log, "rotated out")
	if len(removed) > 0 {
		if serr := fsutil.SyncDir(dir); serr != nil {
			err = errors.Join(err, fmt.Errorf("sync backup directory: %w", serr))
		}
	}
	return removed, err
}

// removeLeftovers deletes the .part files of runs that did not finish. The
// caller holds the directory lock, so no running backup owns them.
func removeLeftovers(dir string, log *slog.Logger) ([]string, error) {
	names, err := matching(dir, partSuffix)
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(names))
	for i, n := range names {
		paths[i] = filepath.Join(dir, n)
	}
	return remove(paths, log, "removed the partial file of an interrupted backup")
}

func remove(paths []string, log *slog.Logger, why string) ([]string, error) {
	var done []string
	var errs []error
	for _, p := range paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove %s: %w", p, err))
			continue
		}
		log.Info(why, "path", p)
		done = append(done, p)
	}
	return done, errors.Join(errs...)
}

// matching returns the names of the regular files in dir that are backup
// names followed by ext, in ascending (time) order.
func matching(dir, ext string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list backup directory: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && isName(e.Name(), ext) {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names, nil
}
