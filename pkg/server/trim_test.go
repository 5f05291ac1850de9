package server

import (
	"context"
	"runtime"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testkit"
)

// TestIdleTrimmer: memory is released at the first quiet interval after a
// burst, once per burst, never while the server keeps allocating, and
// never for a trickle of small allocations.
func TestIdleTrimmer(t *testing.T) {
	const MiB = 1 << 20
	releases := 0
	tr := &idleTrimmer{burst: 64 * MiB, quiet: 1 * MiB, release: func() { releases++ }}
	steps := []struct {
		name      string
		allocated uint64 // cumulative
		release   bool
	}{
		{"a quiet start", 0, false},
		{"a trickle", 512 * 1024, false},
		{"busy", 40 * MiB, false},
		{"busy, past the burst size", 100 * MiB, false},
		{"quiet after the burst: release", 100*MiB + 4096, true},
		{"still quiet: nothing new to release", 100*MiB + 8192, false},
		{"many quiet intervals of small work add up to no burst", 100*MiB + 900*1024, false},
		{"busy again", 200 * MiB, false},
		{"quiet again: release", 200 * MiB, true},
	}
	for i, s := range steps {
		if got := tr.step(s.allocated); got != s.release {
			t.Fatalf("step %d (%s): released %v, want %v", i, s.name, got, s.release)
		}
	}
	if releases != 2 {
		t.Fatalf("%d releases, want 2", releases)
	}
}

// TestRunTrimmerReleasesAfterBurst: over the runtime's real allocation
// counter, a burst of allocation followed by quiet leads to a release (a
// counter that read nothing, or a loop that did not step, never would).
func TestRunTrimmerReleasesAfterBurst(t *testing.T) {
	const MiB = 1 << 20
	released := make(chan struct{}, 1)
	tr := &idleTrimmer{burst: 32 * MiB, quiet: 4 * MiB, release: func() {
		select {
		case released <- struct{}{}:
		default:
		}
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		runTrimmer(ctx, 20*time.Millisecond, tr)
	}()
	defer func() {
		cancel()
		testkit.Receive(t, done, 10*time.Second, "runTrimmer to return after its context ended")
	}()
	// The goroutine may take its first reading of the counter after the
	// first burst, which then counts as released already: a burst comes
	// again each round until a release, and the second comes after that
	// reading.
	const rounds = 5
	for round := 1; ; round++ {
		burst := make([][]byte, 0, 48)
		for range cap(burst) {
			burst = append(burst, make([]byte, MiB))
		}
		runtime.KeepAlive(burst)
		select {
		case <-released:
			return
		case <-time.After(2 * time.Second):
		}
		if round == rounds {
			t.Fatalf("no release after %d bursts of 48 MiB, each followed by 2 s of quiet", rounds)
		}
	}
}

// TestTrimWhenIdleStops: the loop ends with its context.
func TestTrimWhenIdleStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		trimWhenIdle(ctx)
	}()
	cancel()
	testkit.Receive(t, done, 10*time.Second, "trimWhenIdle to return after its context ended")
}
