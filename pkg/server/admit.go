package server

import (
	"context"
	"slices"
	"sync"

	"memsvc.dev/memsvc/pkg/memory"
)

// Recall admission.
//
// A recall is CPU work of a millisecond or so. With many clients at once,
// every recall running concurrently shares the few cores with all the
// others, and the Go scheduler, which is not fair among goroutines, lets
// some of them wait far longer than the rest: the median stays low while
// the slowest recalls take many times as long. Recalls therefore run at
// most a few at a time (about one per core) and the others wait their turn
// in arrival order: the same throughput, a tail close to the median.
//
// The queue is no admission control: a waiting recall is never refused,
// and the rate limit (429) and connection limits stay as they are, in
// front of it. A recall whose context ends while it waits (the client went
// away, or its deadline passed) leaves the queue with the context's error
// and does no work.

// recallQueue runs recalls at most a given number at a time, the rest in
// arrival order.
type recallQueue struct {
	memory.Service

	mu      sync.Mutex
	free    int             // slots free; 0 while any recall waits
	waiting []chan struct{} // the waiting recalls, first come first; closed to admit
}

// queueRecalls wraps svc so that at most slots recalls run at once.
func queueRecalls(svc memory.Service, slots int) *recallQueue {
	return &recallQueue{Service: svc, free: max(slots, 1)}
}

// RecallQuery implements memory.Service: it waits for its turn, then
// recalls.
func (q *recallQueue) RecallQuery(ctx context.Context, req *memory.RecallQueryRequest) (*memory.RecallQueryResponse, error) {
	if err := q.acquire(ctx); err != nil {
		return nil, err
	}
	defer q.release()
	return q.Service.RecallQuery(ctx, req)
}

// acquire takes a slot, waiting behind the recalls that came first, or
// returns ctx's error once ctx ends first.
func (q *recallQueue) acquire(ctx context.Context) error {
	q.mu.Lock()
	if q.free > 0 {
		q.free--
		q.mu.Unlock()
		return nil
	}
	turn := make(chan struct{})
	q.waiting = append(q.waiting, turn)
	q.mu.Unlock()
	select {
	case <-turn:
		return nil
	case <-ctx.Done():
	}
	q.mu.Lock()
	if i := slices.Index(q.waiting, turn); i >= 0 {
		q.waiting = slices.Delete(q.waiting, i, i+1)
		q.mu.Unlock()
		return ctx.Err()
	}
	q.mu.Unlock()
	// The slot came with the end of ctx: hand it on.
	q.release()
	return ctx.Err()
}

// release hands the caller's slot to the first waiting recall, if any.
func (q *recallQueue) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.waiting) == 0 {
		q.free++
		return
	}
	close(q.waiting[0])
	q.waiting = q.waiting[1:]
}

// queued is how many recalls wait (tests).
func (q *recallQueue) queued() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiting)
}
