package engine

import (
	"math"

	"memsvc.dev/memsvc/pkg/engine/searchindex"
	"memsvc.dev/memsvc/pkg/memory"
)

// Eligibility marks. Text recall asks of every record its search
// considers whether it is eligible (eligible: store, time, dormancy),
// and over a large namespace most of those questions cost a lookup in
// the map of all entries, about a third of the search. The curated
// index keeps a mark per document (searchindex.Index.SetMark), and
// recall keeps there what eligibility depends on besides the request:
// the record's store and the decay-clock reading before which it cannot
// be dormant. Every put or delete of an entry sets the mark from the new
// entry, or to 0 (unknown) when it went, before anyone can read the
// entry (remark, called with e.mu held exclusively wherever an entry is
// put or deleted); records loaded at start have no mark until a recall
// looks their entry up and leaves it. Recalls read and set marks under
// e.mu shared, so a mark that is not 0 always describes the entry as it
// is, and deciding from it gives exactly the answer eligible gives.
//
// A mark is the store in its low byte (stores are numbered from 1, so a
// known mark is never 0) and, above it, the decay-clock reading in whole
// seconds before which the record's score stays at or above
// DormantBelow (markNever when it never falls under it; 0 when that was
// not worked out).
const (
	markStoreBits = 8
	markNever     = 1<<(64-markStoreBits) - 1
)

// markOf returns the mark of entry ent, 0 when it cannot have one.
func markOf(ent *entry) uint64 {
	if ent.store == 0 || ent.store > memory.StoreWorking {
		return 0
	}
	return awakeUntil(ent)<<markStoreBits | uint64(ent.store)
}

// awakeUntil returns a decay-clock reading in whole seconds before which
// ent's score is at least DormantBelow (ent.score(c) >= DormantBelow for
// every c < awakeUntil(ent)); markNever when the record never becomes
// dormant, 0 when no such reading was found.
func awakeUntil(ent *entry) uint64 {
	if !decays(ent.store) {
		return markNever
	}
	if sa := ent.stability * ent.anchor; !(sa > 0) {
		return 0 // fidelityScore's degenerate case: dormant once it ages
	}
	age := ageForScore(DormantBelow, ent.stability, ent.anchor, ent.rate)
	if math.IsInf(age, 1) {
		return markNever
	}
	// A margin of a millionth of the age keeps rounding in ageForScore
	// and fidelityScore on the safe side; the check below makes sure.
	at := ent.base + age*(1-1e-6)*secondsPerDay
	if !(at >= 1) {
		return 0
	}
	if at >= markNever {
		return markNever
	}
	u := uint64(at)
	// The score falls as the clock advances: checking it at u checks it
	// for every reading before.
	if ent.score(float64(u)) < DormantBelow {
		return 0
	}
	return u
}

// fromMark decides eligibility from a document's mark m alone, as
// eligible would from the entry the mark describes; sure is false when
// the entry must be looked up (no mark, a time range or a page cursor,
// or a clock at or past the reading the mark vouches for).
func (p *recallPlan) fromMark(m uint64) (ok, sure bool) {
	if m == 0 || p.temporal != nil || p.before != nil {
		return false, false
	}
	st := memory.StoreType(m & (1<<markStoreBits - 1))
	if int(st) >= len(p.stores) {
		return false, false
	}
	if !p.stores[st] {
		return false, true
	}
	if p.modes[st] == memory.ModeHuman && !p.decayed && !(p.clock < float64(m>>markStoreBits)) {
		return false, false
	}
	return true, true
}

// admitLocked returns eligible as a filter of the namespace's text
// index (searchindex.Query.Admit): it decides from the document's mark
// when it can; otherwise it looks the entry up and leaves its mark.
// Callers hold e.mu (shared is enough) for as long as the filter is used.
func admitLocked(ns *nsState, p *recallPlan) func(searchindex.Candidate) bool {
	return func(c searchindex.Candidate) bool {
		if ok, sure := p.fromMark(c.Mark()); sure {
			return ok
		}
		id := c.ID()
		ent, found := ns.st.entries[id]
		if !found {
			// Indexed before its entry was put (txn.commit updates the
			// index first): nothing to remember yet.
			return false
		}
		c.SetMark(markOf(ent))
		return p.admits(id, ent)
	}
}

// remark sets the mark of record id in the namespace's text index from
// its entry, or to 0 when it has none: the entry changed or went.
// Callers hold e.mu exclusively.
func (ns *nsState) remark(id memory.ID) {
	if ns.text == nil {
		return
	}
	m := uint64(0)
	if ent, ok := ns.st.entries[id]; ok {
		m = markOf(ent)
	}
	ns.text.SetMark(id, m)
}
