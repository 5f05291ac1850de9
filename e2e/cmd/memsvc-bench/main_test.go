package main

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestWhyStopped: a failure after the deadline names --timeout, one after
// an interrupt says so, and every other outcome passes unchanged.
func TestWhyStopped(t *testing.T) {
	failed := errors.New("recall: connection refused")
	live := context.Background()
	late, stopLate := context.WithDeadline(live, time.Unix(0, 0))
	defer stopLate()
	cut, interrupt := context.WithCancel(live)
	interrupt()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		want string
	}{
		{"success", late, nil, ""},
		{"failure while running", live, failed, failed.Error()},
		{"failure past the deadline", late, failed, "run exceeded --timeout 1m0s: " + failed.Error()},
		{"failure after an interrupt", cut, failed, "interrupted: " + failed.Error()},
	} {
		got := whyStopped(tc.ctx, time.Minute, tc.err)
		if tc.want == "" {
			if got != nil {
				t.Errorf("%s: %v, want nil", tc.name, got)
			}
			continue
		}
		if got == nil || got.Error() != tc.want || !errors.Is(got, failed) {
			t.Errorf("%s: %v, want %q wrapping the failure", tc.name, got, tc.want)
		}
	}
}
