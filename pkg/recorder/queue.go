package recorder

import (
	"context"
	"time"
)

// FlushSpoolWait is FlushSpool for a recorder that has just queued events
// (a Recorder without a Sender spools every batch, in the order of the
// calls): when another recorder process is flushing, it waits for it, up to
// wait, and then sends what is left. FlushSpool would return at once, and a
// batch queued after the other process's last look at the directory would
// wait for the next run.
//
// Hooks use the two together for order: each hook queues its events in the
// foreground (the agent fires the next hook only after this one returns),
// so the spool holds them in firing order, and one flusher at a time sends
// the spool oldest first, stopping at the first failure, so no event
// overtakes an earlier one.
func (r *Recorder) FlushSpoolWait(ctx context.Context, wait time.Duration) error {
	lctx, cancel := context.WithTimeout(ctx, wait)
	unlock, err := r.cfg.Spool.Lock(lctx, flushLock)
	cancel()
	if err != nil {
		r.log.Warn("spool not flushed: another recorder kept flushing it; the next run sends what is left", "err", err)
		return r.Err()
	}
	defer unlock()
	r.flushPending(ctx)
	return r.Err()
}

// Queue runs events through the pipeline as Record does (validation,
// redaction, duplicate dropping) but writes them to the spool instead of
// sending them, behind the files already there.
func (r *Recorder) Queue(ctx context.Context, events []Event) error {
	sender := r.cfg.Sender
	r.cfg.Sender = nil // holding: no server, so every batch is spooled
	defer func() { r.cfg.Sender = sender }()
	return r.Record(ctx, events)
}
