//go:build unix

package engine

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time the process has used, so benchmarks can
// report work as well as wall time on a machine that other jobs share.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
