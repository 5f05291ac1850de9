package main

import (
	"errors"
	"io"
	"testing"
	"time"
)

// TestMemoryQuiet: memory is read after memoryQuiet of idleness whether or
// not the run is --quick (a quick run that read it after a second saw the
// garbage of the load the server had not yet returned), --memory-quiet
// overrides it, and a wait that is not positive is a usage error.
func TestMemoryQuiet(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want time.Duration
	}{
		{nil, memoryQuiet},
		{[]string{"--quick"}, memoryQuiet},
		{[]string{"--quick", "--memory-quiet", "3s"}, 3 * time.Second},
	} {
		cfg, err := parseFlags(tc.args, io.Discard)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if cfg.memoryQuiet != tc.want {
			t.Errorf("%v: memory read after %v of idleness, want %v", tc.args, cfg.memoryQuiet, tc.want)
		}
	}
	var usage *usageError
	if _, err := parseFlags([]string{"--memory-quiet", "0s"}, io.Discard); !errors.As(err, &usage) {
		t.Errorf("--memory-quiet 0s: %v, want a usage error", err)
	}
}
