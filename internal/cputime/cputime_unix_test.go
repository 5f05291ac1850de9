//go:build unix

package cputime

import (
	"testing"
	"time"
)

// TestProcessGrowsWithWork spins until the CPU time the process reports
// has grown: a Process that returned a constant (or 0) fails.
func TestProcessGrowsWithWork(t *testing.T) {
	start := Process()
	if start <= 0 {
		t.Fatalf("Process() = %v at the start of a running test, want > 0", start)
	}
	deadline := time.Now().Add(10 * time.Second)
	x := uint64(1)
	for Process() <= start {
		if time.Now().After(deadline) {
			t.Fatalf("Process() stayed at %v through 10 s of spinning", start)
		}
		for range 1 << 16 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	if x == 0 {
		t.Log(x) // keeps the spin from being optimised away
	}
}
