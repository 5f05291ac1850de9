// Package testkit holds the fixtures the transport and proxy tests share:
// an engine on an in-memory store, a service that accepts everything, a
// keyring, a clock moved by hand, a log sink safe for concurrent writers,
// bounded waits for a value or a condition, files to append to and the
// example configuration to start from, one way to send an HTTP request to
// a server under test, the gRPC service's methods with one way to call any
// of them and the list of services by reflection, and the recall answer
// and canned server the transport benchmarks share.
package testkit

import (
	"context"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testsync"
	"memsvc.dev/memsvc/pkg/engine"
	"memsvc.dev/memsvc/pkg/store"
)

// Engine opens an engine with opts on an in-memory store; both are closed
// when the test ends.
func Engine(t testing.TB, opts engine.Options) *engine.Engine {
	t.Helper()
	db, err := store.OpenInMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	e, err := engine.Open(context.Background(), db, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// Clock is a clock tests move by hand (testsync.Clock).
type Clock = testsync.Clock

// NewClock returns a clock reading t.
func NewClock(t time.Time) *Clock { return testsync.NewClock(t) }

// SyncBuffer is a bytes.Buffer for logs written from several goroutines
// (testsync.Buffer).
type SyncBuffer = testsync.Buffer

// Receive returns the next value on ch, waiting at most limit for it; when
// none comes in time the test fails, saying what it waited for (what: "the
// server to stop").
func Receive[T any](t testing.TB, ch <-chan T, limit time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(limit):
		t.Fatalf("waited %v for %s", limit, what)
		var none T
		return none
	}
}

// WaitFor polls cond every 10 ms until it holds and returns how long that
// took. When limit passes first the test fails, saying what it waited for
// (what: "the server to reload") and, when detail is not nil, what
// detail returns then (a log, the state last seen).
func WaitFor(t testing.TB, limit time.Duration, what string, cond func() bool, detail func() string) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			more := ""
			if detail != nil {
				more = ":\n" + detail()
			}
			t.Fatalf("%s: not within %v%s", what, limit, more)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}
