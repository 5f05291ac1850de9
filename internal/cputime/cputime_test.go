//go:build unix

package cputime

import (
	"testing"
	"time"
)

// TestProcessGrows: CPU time spent spinning shows in Process.
func TestProcessGrows(t *testing.T) {
	before := Process()
	if before <= 0 {
		t.Fatalf("Process() = %v before any work, want the time used to start the test", before)
	}
	sum := 0
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		for i := range 1000 {
			sum += i
		}
	}
	if after := Process(); after <= before {
		t.Fatalf("Process() went from %v to %v over 50 ms of spinning (sum %d)", before, after, sum)
	}
}
