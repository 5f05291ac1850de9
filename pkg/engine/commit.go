package engine

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Group commit of audited changes.
//
// An audited change carries its audit event in the outbox, under the next
// sequence number, in the same batch as the change itself, and the
// sequence must never have a hole. Committing changes one at a time, each
// holding the sequence through its own sync, would let audited writes
// through one disk sync at a time. Instead a change joins a queue. The
// change at the front leads: it takes the changes queued so far (at most
// maxGroup, itself first), numbers their events in queue order, appends
// their batches to one and commits that with a single sync, then tells
// every member its outcome and hands the lead to the new front of the
// queue, if any. Changes that arrive during a sync wait for the next
// group, so under load each sync carries everything that queued during
// the previous one.
//
// Members learn their outcome from the leader directly, not by taking a
// lock in turn: a finished member never waits behind the next group's
// sync.
//
// A group commits wholly or not at all, and the sequence advances only
// when it did, so a failed commit leaves no hole. A change the store would
// refuse on its own (store.Batch.Append) fails alone before it is
// numbered, and the rest of its group commits.
//
// The outbox appender moves the events to the log in groups of its own,
// one append and one fsync of the log per group (audit.go).

// maxGroup bounds the changes one group commit takes, so one sync does not
// wait for an unbounded amount of encoding.
const maxGroup = 256

// commitReq is one audited change waiting for a group commit.
type commitReq struct {
	t     *txn
	event *outboxEvent // without its time, which the leader sets
	err   error        // the outcome, set before wake receives true

	// wake receives true once the change is committed (or failed), false
	// when the change is to lead the next group.
	wake chan bool
}

// commitGroup commits r's change in a group and returns its outcome.
func (e *Engine) commitGroup(r *commitReq) error {
	a := e.aud
	r.wake = make(chan bool, 1)
	a.qmu.Lock()
	a.queue = append(a.queue, r)
	lead := !a.leading
	a.leading = true
	a.qmu.Unlock()
	if !lead && <-r.wake {
		return r.err
	}
	e.leadGroup()
	return r.err
}

// leadGroup commits the front of the queue, which holds the caller's
// change, tells the members their outcome and hands the lead on.
func (e *Engine) leadGroup() {
	a := e.aud
	a.mu.Lock()
	a.qmu.Lock()
	n := min(len(a.queue), maxGroup)
	group := a.queue[:n:n]
	a.queue = append([]*commitReq(nil), a.queue[n:]...)
	a.qmu.Unlock()
	e.commitLocked(group)
	a.qmu.Lock()
	var next *commitReq
	if len(a.queue) > 0 {
		next = a.queue[0]
	} else {
		a.leading = false
	}
	a.qmu.Unlock()
	a.mu.Unlock()
	// group[0] is the caller, who reads its outcome on return.
	for _, m := range group[1:] {
		m.wake <- true
	}
	if next != nil {
		next.wake <- false
	}
}

// commitLocked commits a group of changes with one sync and sets each
// member's outcome. Callers hold aud.mu.
func (e *Engine) commitLocked(group []*commitReq) {
	a := e.aud
	now := e.now()
	seq := a.next
	var members []*commitReq
	b := group[0].t.b
	if len(group) > 1 {
		b = e.db.NewBatch()
		defer b.Close()
	}
	for _, r := range group {
		r.event.Time = now
		body, err := json.Marshal(r.event)
		if err != nil {
			err = fmt.Errorf("audit event: %w", err)
		} else if b != r.t.b {
			err = b.Append(r.t.b)
		}
		if err != nil {
			r.err = err
			continue
		}
		b.PutOutbox(seq, body)
		seq++
		members = append(members, r)
	}
	if len(members) == 0 {
		return
	}
	// A group of lazy changes only (beginLazy) is written without a sync;
	// its events stay out of the log's reach until syncWAL makes them
	// durable.
	lazy := !slices.ContainsFunc(members, func(r *commitReq) bool { return !r.t.lazy })
	var err error
	if lazy {
		err = b.CommitNoSync()
	} else {
		if a.beforeSync != nil {
			a.beforeSync()
		}
		err = b.Commit()
	}
	a.groups.Add(1)
	a.grouped.Add(uint64(len(members)))
	for _, r := range members {
		r.err = err
	}
	if err != nil {
		return
	}
	a.next = seq
	a.written.Store(seq - 1)
	if !lazy {
		// The sync covers every earlier group, lazy ones included.
		a.markDurable(seq - 1)
	}
}

// markDurable records that the events up to seq are on disk and wakes the
// outbox appender.
func (a *auditState) markDurable(seq uint64) {
	for {
		d := a.durable.Load()
		if d >= seq || a.durable.CompareAndSwap(d, seq) {
			break
		}
	}
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// syncWAL makes every change committed so far durable, lazy ones
// (beginLazy) included, and lets the audit log take their events. Callers
// hold no lock of the engine above rank operation: the sync may take long.
func (e *Engine) syncWAL() error {
	var seq uint64
	if e.aud != nil {
		// Read before the sync: every event numbered up to here was
		// written to the log that the sync covers.
		seq = e.aud.written.Load()
	}
	if e.opts.beforeWALSync != nil {
		e.opts.beforeWALSync()
	}
	if err := e.db.SyncWAL(); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	if e.aud != nil {
		e.aud.markDurable(seq)
	}
	return nil
}
