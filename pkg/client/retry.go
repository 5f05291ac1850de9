package client

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// Retry defaults (Options.Retries, Options.MaxRetryWait).
const (
	DefaultRetries      = 3
	DefaultMaxRetryWait = 10 * time.Second
)

// RetriesExhaustedError is a call the server refused as rate limited or
// busy on every attempt, the retries included. Err is the last refusal
// (a *memory.Error, so errors.Is and memory.CodeOf see through it).
type RetriesExhaustedError struct {
	Attempts int
	Waited   time.Duration
	Err      error
}

func (e *RetriesExhaustedError) Error() string {
	return fmt.Sprintf("%v (gave up after %d attempts over %s)", e.Err, e.Attempts, e.Waited.Round(100*time.Millisecond))
}

func (e *RetriesExhaustedError) Unwrap() error { return e.Err }

// retryable reports whether a call may be sent again: reads, and writes
// that cannot apply twice (PUT, raw stores whose every entry carries a
// client-generated id). A refusal for rate or load is answered before the
// server does anything, but a connection can also break after the server
// acted, so only calls that are safe to repeat are repeated.
type retryable bool

const (
	once   retryable = false
	repeat retryable = true
)

// refusalWait says whether err is a refusal worth waiting out, and for
// how long the server asked: RATE_LIMITED (at least a second), or a busy
// server (WORKING_MEMORY_FULL, DECAY_ENGINE_BUSY,
// CONSOLIDATION_IN_PROGRESS) that named a Retry-After.
func refusalWait(err error) (time.Duration, bool) {
	var me *memory.Error
	if !errors.As(err, &me) {
		return 0, false
	}
	switch me.Code {
	case memory.CodeRateLimited:
		return time.Duration(max(me.RetryAfter, 1)) * time.Second, true
	case memory.CodeWorkingMemoryFull, memory.CodeDecayEngineBusy, memory.CodeConsolidationInProgress:
		if me.RetryAfter > 0 {
			return time.Duration(me.RetryAfter) * time.Second, true
		}
	}
	return 0, false
}

// withRetries runs attempt and, for a retryable call the server refused
// for rate or load, runs it again after the wait the server named plus up
// to a quarter more (jitter, so clients refused together do not return
// together), at most Options.Retries times. It gives up at once when the
// wait is longer than Options.MaxRetryWait or would pass ctx's deadline,
// returning the refusal as it is; after the last retry it returns a
// *RetriesExhaustedError.
func (c *Client) withRetries(ctx context.Context, r retryable, attempt func() error) error {
	err := attempt()
	if !r || c.retries <= 0 {
		return err
	}
	var waited time.Duration
	for n := 1; ; n++ {
		wait, ok := refusalWait(err)
		if !ok {
			return err
		}
		if n > c.retries {
			return &RetriesExhaustedError{Attempts: n, Waited: waited, Err: err}
		}
		wait += time.Duration(rand.Int64N(int64(wait)/4 + 1))
		if wait > c.maxRetryWait {
			return err
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return err
		}
		if serr := c.sleep(ctx, wait); serr != nil {
			return err
		}
		waited += wait
		err = attempt()
	}
}

// sleepCtx waits for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
