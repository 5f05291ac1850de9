package engine

import (
	"time"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// scanRawNewest is the store's newest-first scan of the raw index in rng,
// starting after the cursor before when one is given: first the cursor's
// own instant, skipping the ids an earlier page showed (the index alone
// says which), then everything older. The cursor's instant can hold any
// number of entries, since a batch stamps all of its entries with one time.
func (e *Engine) scanRawNewest(ns *nsState, rng store.RawRange, before *memory.PageCursor, fn func(memory.ID, store.RawFlags) (bool, error)) error {
	if before == nil || !rng.End.IsZero() && rng.End.Before(before.CreatedAt) {
		return e.db.ScanRawNewest(ns.id, rng, fn)
	}
	at := before.CreatedAt
	if !rng.Start.IsZero() && rng.Start.After(at) {
		return nil // the whole range lies on earlier pages
	}
	same := rng
	same.Start, same.End = at, at
	stopped := false
	err := e.db.ScanRawNewest(ns.id, same, func(id memory.ID, fl store.RawFlags) (bool, error) {
		if compareIDs(id, before.ID) >= 0 {
			return true, nil
		}
		more, err := fn(id, fl)
		stopped = !more
		return more, err
	})
	if err != nil || stopped {
		return err
	}
	older := rng
	older.End = at.Add(-time.Nanosecond)
	if !older.Start.IsZero() && older.Start.After(older.End) {
		return nil
	}
	return e.db.ScanRawNewest(ns.id, older, fn)
}
