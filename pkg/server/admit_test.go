package server

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/memory"
)

// heldRecalls is a memory.Service whose recalls run until released, and
// which notes the order they started in.
type heldRecalls struct {
	memory.Service // nil: only RecallQuery is called

	mu      sync.Mutex
	started []string
	release chan struct{}
}

func (h *heldRecalls) RecallQuery(ctx context.Context, req *memory.RecallQueryRequest) (*memory.RecallQueryResponse, error) {
	h.mu.Lock()
	h.started = append(h.started, *req.Cue.Text)
	h.mu.Unlock()
	<-h.release
	return &memory.RecallQueryResponse{}, nil
}

func (h *heldRecalls) order() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.started...)
}

func recallText(ctx context.Context, q memory.Service, text string) error {
	_, err := q.RecallQuery(ctx, &memory.RecallQueryRequest{Cue: memory.RecallCue{Text: &text}})
	return err
}

// TestRecallQueue: at most slots recalls run at once; the others wait and
// start in the order they came, each as soon as a running one ends; a
// recall whose context ends while it waits returns its context's error
// without running and without costing a later one its turn.
func TestRecallQueue(t *testing.T) {
	svc := &heldRecalls{release: make(chan struct{})}
	q := queueRecalls(svc, 2)
	errs := make(chan error, 8)
	recall := func(ctx context.Context, text string) {
		go func() { errs <- recallText(ctx, q, text) }()
	}
	recall(context.Background(), "run 1")
	recall(context.Background(), "run 2")
	testkit.WaitFor(t, 20*time.Second, "two recalls to run", func() bool { return len(svc.order()) == 2 }, nil)

	gone, leave := context.WithCancel(context.Background())
	for i, text := range []string{"wait 1", "wait 2 (leaves)", "wait 3", "wait 4"} {
		ctx := context.Background()
		if text == "wait 2 (leaves)" {
			ctx = gone
		}
		recall(ctx, text)
		testkit.WaitFor(t, 20*time.Second, fmt.Sprintf("%q to queue", text), func() bool { return q.queued() == i+1 }, nil)
	}
	leave()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Fatalf("the recall that left the queue returned %v, want %v", err, context.Canceled)
	}
	if n := q.queued(); n != 3 {
		t.Fatalf("%d recalls wait after one left, want 3", n)
	}
	if got := svc.order(); len(got) != 2 {
		t.Fatalf("started %v with two slots, want two", got)
	}
	// Each recall that ends lets exactly the next one in.
	for _, next := range []string{"wait 1", "wait 3", "wait 4"} {
		svc.release <- struct{}{}
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		testkit.WaitFor(t, 20*time.Second, fmt.Sprintf("%q to start", next), func() bool {
			got := svc.order()
			return got[len(got)-1] == next
		}, nil)
		if got := svc.order(); len(got) != 3+slices.Index([]string{"wait 1", "wait 3", "wait 4"}, next) {
			t.Fatalf("started %v after %q", got, next)
		}
	}
	want := []string{"wait 1", "wait 3", "wait 4"} // after the first two, in either order
	if got := svc.order(); !slices.Equal(got[2:], want) {
		t.Fatalf("started %v, want the waiting ones in order %v", got, want)
	}
	for range 2 {
		svc.release <- struct{}{}
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// All slots free again: two recalls run at once without waiting.
	recall(context.Background(), "again 1")
	recall(context.Background(), "again 2")
	testkit.WaitFor(t, 20*time.Second, "two recalls to run again", func() bool { return len(svc.order()) == 7 }, nil)
	if n := q.queued(); n != 0 {
		t.Fatalf("%d recalls wait with the slots free", n)
	}
	close(svc.release)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestLocalQueuesRecalls: the service of the data layer, which serve and
// every embedded command use, queues recalls with one slot per core.
func TestLocalQueuesRecalls(t *testing.T) {
	l, err := OpenLocal(context.Background(), loadConfig(t, t.TempDir()), LocalOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	q, ok := l.Service().(*recallQueue)
	if !ok {
		t.Fatalf("the local service is a %T, want recalls queued", l.Service())
	}
	if q.free != runtime.GOMAXPROCS(0) {
		t.Fatalf("%d recall slots, want %d (one per core)", q.free, runtime.GOMAXPROCS(0))
	}
	if err := recallText(context.Background(), q, "anything"); err != nil {
		t.Fatal(err)
	}
}
