package engine

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/engine/internal/lockorder"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// Audit logging through an outbox: every committed state change carries its
// audit event, with the next sequence number, in the same store batch as
// the change itself. A background appender moves events from the outbox to
// the hash-chained log (group commits, one fsync per group) and then deletes
// them. A crash between the commit and the append leaves the event in the
// outbox, and Open appends it; a crash between the append and the delete
// leaves an event the log already has, and Open drops it. So every change
// is logged exactly once.
//
// The data directory also remembers the last sequence it saw appended; a
// log that ends before it was truncated or replaced, and the engine refuses
// to start on it.
const (
	auditHeadKey   = "audit_head"
	auditBatch     = 256 // events per append
	auditMaxIDs    = 1000
	auditQueueWake = 1
)

// auditState is the engine's side of the audit log.
type auditState struct {
	log *audit.Log

	// mu is held by the leader of a group commit through the commit, so
	// groups commit one after another and take their sequences in order.
	mu   lockorder.Mutex
	next uint64 // sequence of the next event; guarded by mu

	qmu     lockorder.Mutex // guards queue and leading
	queue   []*commitReq    // changes waiting for a group commit (commit.go)
	leading bool            // a change leads a group now
	// groups and grouped count the group commits and the changes they
	// carried (benchmarks, tests); beforeSync, when set, runs in a group
	// commit just before its sync (tests).
	groups, grouped atomic.Uint64
	beforeSync      func()
	// durable is the last sequence whose commit has returned. Pebble makes
	// a synced batch visible to readers before its fsync completes, so the
	// appender must not take an event it can already see: the change could
	// still be lost, leaving a log entry for something that never happened.
	durable atomic.Uint64
	// written is the last sequence committed, with or without a sync
	// (commit.go: lazy groups).
	written atomic.Uint64

	flushMu lockorder.Mutex // one flush of the outbox at a time

	wake chan struct{}
	stop chan struct{}
	done chan struct{}
}

// auditEvent is a change to log, attached to a txn.
type auditEvent struct {
	op      string
	ids     []memory.ID
	stores  []memory.StoreType
	summary map[string]any
}

type outboxEvent struct {
	Time       time.Time       `json:"time"`
	Operation  string          `json:"operation"`
	RecordIDs  []string        `json:"record_ids"`
	StoreTypes []string        `json:"store_types"`
	Summary    json.RawMessage `json:"summary"`
}

// openAudit replays the outbox into the log and starts the appender.
func (e *Engine) openAudit() error {
	if e.opts.Audit == nil {
		return nil
	}
	a := &auditState{log: e.opts.Audit, wake: make(chan struct{}, auditQueueWake), stop: make(chan struct{}), done: make(chan struct{})}
	a.mu.Init(e.order, "aud.mu", rankAudit)
	a.qmu.Init(e.order, "aud.queue", rankLeaf)
	a.flushMu.Init(e.order, "aud.flushMu", rankOutbox)
	last, _ := a.log.Last()
	if v, err := e.db.GetMeta(auditHeadKey); err == nil {
		if len(v) != 8 {
			return fmt.Errorf("audit head: %w", store.ErrCorrupt)
		}
		if head := binary.BigEndian.Uint64(v); head > last {
			return fmt.Errorf("audit log %s ends at entry %d but this data directory already logged entry %d: "+
				"the log was truncated or replaced; restore it from a backup (or disable security.audit_log_enabled to start without it)",
				a.log.Path(), last, head)
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("audit head: %w", err)
	}
	e.aud = a
	// Drop what the log already has, append the rest; new events continue
	// after the last one logged.
	if err := e.flushOutbox(true); err != nil {
		return fmt.Errorf("replay audit outbox: %w", err)
	}
	last, _ = a.log.Last()
	a.next = last + 1
	a.durable.Store(last)
	a.written.Store(last)
	go e.runAppender()
	return nil
}

// flushOutbox appends pending outbox events to the log and deletes them.
// At start-up (replay) events the log already holds are only deleted.
func (e *Engine) flushOutbox(replay bool) error {
	a := e.aud
	a.flushMu.Lock()
	defer a.flushMu.Unlock()
	for {
		last, _ := a.log.Last()
		// At start-up everything in the outbox was recovered from disk,
		// and events the log already holds are dropped. Later, scans
		// start after the last event logged: an event at or before it
		// whose deletion failed stays until the next start drops it.
		limit := uint64(math.MaxUint64)
		var from uint64
		if !replay {
			limit = a.durable.Load()
			from = last + 1
		}
		var events []audit.Event
		var stale []uint64
		err := e.db.ScanOutboxFrom(from, func(seq uint64, v []byte) (bool, error) {
			if seq > limit {
				return false, nil
			}
			if seq <= last {
				stale = append(stale, seq)
				return true, nil
			}
			var ev outboxEvent
			if err := json.Unmarshal(v, &ev); err != nil {
				return false, fmt.Errorf("outbox event %d: %w", seq, err)
			}
			events = append(events, audit.Event{Sequence: seq, Time: ev.Time, Operation: ev.Operation,
				RecordIDs: ev.RecordIDs, StoreTypes: ev.StoreTypes, Summary: ev.Summary})
			return len(events) < auditBatch, nil
		})
		if err != nil {
			return err
		}
		if len(events) > 0 {
			if err := a.log.Append(events...); err != nil {
				return fmt.Errorf("append to audit log: %w", err)
			}
		}
		if len(events) == 0 && len(stale) == 0 {
			return nil
		}
		b := e.db.NewBatch()
		for _, seq := range stale {
			b.DeleteOutbox(seq)
		}
		var head uint64
		for _, ev := range events {
			b.DeleteOutbox(ev.Sequence)
			head = ev.Sequence
		}
		if head > 0 {
			b.PutMeta(auditHeadKey, binary.BigEndian.AppendUint64(nil, head))
		}
		// The deletes need no sync: after a crash the events reappear
		// and are dropped as already logged.
		err = b.CommitNoSync()
		b.Close()
		if err != nil {
			return fmt.Errorf("clear audit outbox: %w", err)
		}
		if replay && len(events) > 0 {
			e.log.Info("audit outbox replayed", "events", len(events))
		}
		if len(events) < auditBatch {
			return nil
		}
	}
}

// auditRetry is how soon the appender tries again after a failed flush
// (a full disk): the audit log recovers by itself once space returns.
const auditRetry = 5 * time.Second

func (e *Engine) runAppender() {
	a := e.aud
	defer close(a.done)
	var retry <-chan time.Time // set while appends fail
	for {
		select {
		case <-a.wake:
		case <-retry:
		case <-a.stop:
			if err := e.flushOutbox(false); err != nil {
				e.log.Error("audit log", "err", err)
			}
			return
		}
		// The events stay in the outbox until they are appended: retry
		// on a timer, and log only when appending stops and resumes.
		err := e.flushOutbox(false)
		switch {
		case err != nil && retry == nil:
			e.log.Error("audit log: cannot append; retrying every few seconds", "err", err)
		case err == nil && retry != nil:
			e.log.Info("audit log: appending again")
		}
		retry = nil
		if err != nil {
			retry = time.After(auditRetry)
		}
	}
}

func (e *Engine) stopAudit() {
	if e.aud == nil {
		return
	}
	close(e.aud.stop)
	<-e.aud.done
}

// syncAudit appends everything committed so far (for tests and shutdown).
func (e *Engine) syncAudit() error {
	if e.aud == nil {
		return nil
	}
	return e.flushOutbox(false)
}

// audit attaches an event to the change.
func (t *txn) audit(op string, ids []memory.ID, stores []memory.StoreType, summary map[string]any) {
	t.event = &auditEvent{op: op, ids: ids, stores: stores, summary: summary}
}

// commitAudited commits the txn's batch with its event in the outbox, in
// a group commit with the audited changes of other goroutines that are
// waiting at the same time (see commitGroup).
func (t *txn) commitAudited() error {
	ev, err := t.auditSummary()
	if err != nil {
		return err
	}
	return t.e.commitGroup(&commitReq{t: t, event: ev})
}

// auditSummary is the outbox form of the txn's event, less its time and
// sequence, which the group commit assigns.
func (t *txn) auditSummary() (*outboxEvent, error) {
	ev := t.event
	ids := make([]string, 0, min(len(ev.ids), auditMaxIDs))
	for i, id := range ev.ids {
		if i == auditMaxIDs {
			break
		}
		ids = append(ids, id.String())
	}
	summary := ev.summary
	if summary == nil {
		summary = map[string]any{}
	}
	_, named := summary["namespace"]
	if _, several := summary["namespaces"]; !named && !several && t.ns != nil {
		// Every entry names the namespace it changed.
		summary["namespace"] = t.ns.name
	}
	if len(ev.ids) > auditMaxIDs {
		summary["record_ids_total"] = len(ev.ids)
	}
	var stores []string
	seen := map[memory.StoreType]bool{}
	for _, st := range ev.stores {
		if st.Valid() && !seen[st] {
			seen[st] = true
			stores = append(stores, st.String())
		}
	}
	sum, err := json.Marshal(summary)
	if err != nil {
		return nil, fmt.Errorf("audit summary: %w", err)
	}
	return &outboxEvent{Operation: ev.op, RecordIDs: ids, StoreTypes: stores, Summary: sum}, nil
}

// LogOperation writes an audit entry for a change made outside the engine
// (store encryption migration), through the outbox like every other. with,
// when not nil, adds writes of the caller's to the batch that carries the
// entry, so both are durable or neither is; without an audit log they are
// committed alone. Such a change concerns the whole data directory: the
// entry's namespace is "*" unless summary names one.
func (e *Engine) LogOperation(ctx context.Context, op string, summary map[string]any, with func(*store.Batch)) error {
	if summary == nil {
		summary = map[string]any{}
	}
	if _, ok := summary["namespace"]; !ok {
		summary["namespace"] = allNamespaces
	}
	if with == nil {
		return e.logOnly(ctx, op, summary)
	}
	t := e.begin(nil)
	defer t.close()
	with(t.b)
	if e.aud != nil {
		t.audit(op, nil, nil, summary)
	}
	return t.commit()
}

// logOnly records an event that changes no data (an export); summary
// names the namespaces.
func (e *Engine) logOnly(ctx context.Context, op string, summary map[string]any) error {
	if e.aud == nil {
		return nil
	}
	t := e.begin(nil)
	defer t.close()
	t.audit(op, nil, nil, summary)
	return t.commit()
}

func storesOf(recs []*memory.MemoryRecord) []memory.StoreType {
	out := make([]memory.StoreType, len(recs))
	for i, r := range recs {
		out[i] = r.Store
	}
	return out
}

func idsOf(recs []*memory.MemoryRecord) []memory.ID {
	out := make([]memory.ID, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}
