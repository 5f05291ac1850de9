package server

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The Go runtime keeps the heap it grew for a burst of work (a bulk load,
// an import, start-up) resident: with GOGC=100 that is up to twice the live
// heap, and without further allocation no collection runs to shrink it. A
// memory server spends most of its life idle after such bursts, so it
// returns that memory to the OS once it has gone quiet.
const (
	trimInterval = 5 * time.Second
	// trimBurst is the allocation since the last release that makes
	// another one worth a forced collection.
	trimBurst = 64 << 20
	// trimQuiet is the allocation per interval under which the server
	// counts as idle (a probe or a stats call allocates a few KiB).
	trimQuiet = 1 << 20
)

// idleTrimmer decides when to release memory: after at least burst bytes
// were allocated since the last release, at the first interval in which
// less than quiet bytes were.
type idleTrimmer struct {
	burst, quiet uint64
	release      func()
	last, prev   uint64 // allocation counter at the last release, at the last step
}

// step takes the cumulative allocation counter and releases when a burst
// is followed by a quiet interval. It reports whether it released.
func (t *idleTrimmer) step(allocated uint64) bool {
	delta := allocated - t.prev
	t.prev = allocated
	if allocated-t.last < t.burst || delta >= t.quiet {
		return false
	}
	t.release()
	t.last = allocated
	return true
}

// trimWhenIdle runs an idleTrimmer over the runtime's allocation counter
// every trimInterval until ctx ends, releasing with debug.FreeOSMemory.
func trimWhenIdle(ctx context.Context) {
	runTrimmer(ctx, trimInterval, &idleTrimmer{burst: trimBurst, quiet: trimQuiet, release: debug.FreeOSMemory})
}

// runTrimmer steps t over the runtime's allocation counter every interval
// until ctx ends.
func runTrimmer(ctx context.Context, interval time.Duration, t *idleTrimmer) {
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return sample[0].Value.Uint64()
	}
	t.last = read() // start-up has its own release
	t.prev = t.last
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			t.step(read())
		}
	}
}
