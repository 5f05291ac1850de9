package server

import (
	"errors"
	"fmt"
	"syscall"

	"memsvc.dev/memsvc/pkg/store"
)

// ReadyDetail lists what /readiness reports beside its status: disk space
// below storage.min_free_bytes (writes are refused, reads go on, so the
// server stays ready) and stored values quarantined as unreadable (the
// server serves everything else). Each phrase suits any caller: counts and
// sizes, no paths.
func (l *Local) ReadyDetail() []string {
	var detail []string
	if free, low := l.guard.lowest(); low {
		detail = append(detail, fmt.Sprintf("disk space low: %s free, under the %s floor (storage.min_free_bytes); writes are refused, reads go on",
			store.MiB(free), store.MiB(l.guard.floor)))
	}
	if n := l.db.QuarantinedCount(); n > 0 {
		values := "values"
		if n == 1 {
			values = "value"
		}
		detail = append(detail, fmt.Sprintf("%d stored %s quarantined as unreadable (damaged or not decryptable): left on disk, out of every index; the server log names them", n, values))
	}
	return detail
}

// lowest returns the least free space of the guarded file systems and
// whether it is under the floor. A file system whose free space cannot be
// read counts as not low, as in check.
func (g *spaceGuard) lowest() (free uint64, low bool) {
	if g == nil || g.floor == 0 {
		return 0, false
	}
	for _, p := range g.paths {
		f, err := g.free(p)
		if err == nil && f < g.floor && (!low || f < free) {
			free, low = f, true
		}
	}
	return free, low
}

// causeOf names the system error under err in words ("no space left on
// device"), without the paths the wrapping errors carry.
func causeOf(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	return "the server log has the cause"
}
