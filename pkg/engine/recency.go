package engine

import (
	"slices"

	"memsvc.dev/memsvc/pkg/memory"
)

// recency orders a namespace's curated entries by creation time, so a
// recall without a query (the timeline) reads the newest eligible
// records without visiting the others: O(log n + k) when few of the
// newest are filtered out, where a scan of every entry was O(n).
//
// Records are nearly always created in time order, so they are appended
// to main, which stays sorted. One created out of order (an import, the
// stores read one after another at start) goes to side, an unsorted list
// of at most sideMax items that is sorted and merged into main when full;
// a listing reads all of side (a bounded cost) besides the newest part of
// main. Deletions and changes of creation time leave stale items behind,
// recognised by comparing with the entry and dropped when they make up
// half of main. It is part of state and guarded by Engine.mu.
type recency struct {
	main  []createdItem // ascending by (created, id)
	side  []createdItem // unsorted, at most sideMax
	stale int           // items in main or side whose entry is gone or changed
}

const recencySideMax = 512

// put records that entry id was created at created; old is the creation
// time of the entry it replaces, if there was one.
func (r *recency) put(id memory.ID, created int64, old *int64) {
	if old != nil {
		if *old == created {
			return
		}
		r.stale++
	}
	it := createdItem{created, id}
	if len(r.side) == 0 && (len(r.main) == 0 || compareCreated(r.main[len(r.main)-1], it) < 0) {
		r.main = append(r.main, it)
		return
	}
	r.side = append(r.side, it)
	if len(r.side) >= recencySideMax {
		r.merge()
	}
}

// build replaces the order with that of entries, sorted once: for the
// start, where the stores are read one after another and an item-by-item
// put would merge over and over.
func (r *recency) build(entries map[memory.ID]*entry) {
	main := make([]createdItem, 0, len(entries))
	for id, e := range entries {
		main = append(main, createdItem{e.created.UnixNano(), id})
	}
	slices.SortFunc(main, compareCreated)
	*r = recency{main: main}
}

// deleted records that an entry was removed.
func (r *recency) deleted(s *state) {
	r.stale++
	if r.stale > 64 && r.stale*2 > len(r.main) {
		r.compact(s)
	}
}

// merge sorts side into main.
func (r *recency) merge() {
	slices.SortFunc(r.side, compareCreated)
	out := make([]createdItem, 0, len(r.main)+len(r.side))
	i, j := 0, 0
	for i < len(r.main) && j < len(r.side) {
		if compareCreated(r.main[i], r.side[j]) <= 0 {
			out = append(out, r.main[i])
			i++
		} else {
			out = append(out, r.side[j])
			j++
		}
	}
	out = append(append(out, r.main[i:]...), r.side[j:]...)
	r.main, r.side = out, r.side[:0]
}

// live reports whether it is the current position of its entry.
func (it *createdItem) live(s *state) bool {
	e, ok := s.entries[it.id]
	return ok && e.created.UnixNano() == it.created
}

// compact drops stale and repeated items.
func (r *recency) compact(s *state) {
	r.merge()
	out := r.main[:0]
	for _, it := range r.main {
		if it.live(s) && (len(out) == 0 || out[len(out)-1] != it) {
			out = append(out, it)
		}
	}
	clear(r.main[len(out):])
	r.main, r.stale = out, 0
}

// newest calls fn with the ids of live entries, newest first (by creation
// time, then id), until fn returns false. An entry deleted and put back
// with the same creation time is listed once.
func (r *recency) newest(s *state, fn func(id memory.ID) bool) {
	side := make([]createdItem, 0, len(r.side))
	for _, it := range r.side {
		if it.live(s) {
			side = append(side, it)
		}
	}
	slices.SortFunc(side, func(a, b createdItem) int { return compareCreated(b, a) })
	var last createdItem
	emit := func(it createdItem) bool {
		if it == last {
			return true
		}
		last = it
		return fn(it.id)
	}
	i, j := len(r.main)-1, 0
	for i >= 0 || j < len(side) {
		var it createdItem
		switch {
		case i < 0:
			it = side[j]
			j++
		case j < len(side) && compareCreated(side[j], r.main[i]) > 0:
			it = side[j]
			j++
		default:
			it = r.main[i]
			i--
			if !it.live(s) {
				continue
			}
		}
		if !emit(it) {
			return
		}
	}
}
