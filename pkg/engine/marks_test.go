package engine

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

// TestEligibilityMarks: text recall decides eligibility from the index's
// marks exactly as from the entries. A mark that is set always describes
// the record's current entry (markOf), so recalls, decay ticks,
// reinforcement and forgetting never leave one stale; every verdict a mark
// gives for any request (stores, mode, include_decayed, clock) is the
// entry's; and the ranking with marks returns what the ranking that looks
// every entry up returns, before and after records turn dormant and are
// reinforced again.
func TestEligibilityMarks(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: -1})
	ctx := context.Background()
	stores := memory.AllStores()
	var ids []memory.ID
	storeOf := map[memory.ID]memory.StoreType{}
	for i := range 40 {
		ids = append(ids, h.store(fmt.Sprintf("lighthouse keeper log %d", i), stores[i%len(stores)]))
	}
	for _, id := range ids {
		// A full working store moves its oldest record to episodic.
		storeOf[id] = h.record(id).Store
	}
	recall := func(mode memory.RecallMode, reconsolidate bool) []*memory.MemoryRecord {
		t.Helper()
		req := memory.DefaultRecallQueryRequest()
		req.Cue.Text = ptr("lighthouse")
		req.Limit = 50
		req.RecallMode = &mode
		req.Reconsolidate = reconsolidate
		resp, err := h.e.RecallQuery(ctx, &req)
		if err != nil {
			t.Fatal(err)
		}
		var out []*memory.MemoryRecord
		for _, m := range resp.Memories {
			out = append(out, &m.Record)
		}
		return out
	}
	// checkMarks checks every record's mark against its entry and
	// returns how many are set, by store.
	checkMarks := func(what string) map[memory.StoreType]int {
		t.Helper()
		ns := h.e.defaultSpace()
		h.e.mu.RLock()
		defer h.e.mu.RUnlock()
		marked := map[memory.StoreType]int{}
		for _, id := range ids {
			m, indexed := ns.text.Mark(id)
			ent, ok := ns.st.entries[id]
			if !indexed || !ok {
				if indexed || ok {
					t.Fatalf("%s: record %s indexed %v, has an entry %v", what, id, indexed, ok)
				}
				continue
			}
			if m == 0 {
				continue
			}
			marked[ent.store]++
			if m != markOf(ent) {
				t.Fatalf("%s: record %s (%s) has mark %#x, its entry %#x", what, id, ent.store, m, markOf(ent))
			}
			until := float64(m >> markStoreBits)
			for _, clock := range []float64{0, ns.clock(), until - 1, until, until + 1, math.Nextafter(until, 0), 1e15} {
				for _, only := range append(stores, 0) {
					for _, mode := range []memory.RecallMode{memory.ModeHuman, memory.ModePerfect} {
						for _, decayed := range []bool{false, true} {
							p := &recallPlan{clock: clock, decayed: decayed}
							for _, st := range stores {
								p.stores[st] = only == 0 || st == only
								p.modes[st] = mode
							}
							if ok, sure := p.fromMark(m); sure && ok != p.admits(id, ent) {
								t.Fatalf("%s: record %s (%s), clock %v, store %v, %s, decayed %v: mark says %v, entry %v",
									what, id, ent.store, clock, only, mode, decayed, ok, !ok)
							}
						}
					}
				}
			}
		}
		return marked
	}
	// sameRanking compares, for a human-mode text recall, the ranking
	// that decides from marks with the one that looks every entry up.
	sameRanking := func(what string) {
		t.Helper()
		ns := h.e.defaultSpace()
		req := memory.DefaultRecallQueryRequest()
		req.Cue.Text = ptr("lighthouse")
		req.RecallMode = ptr(memory.ModeHuman)
		p, err := h.e.planRecall(ns, &req)
		if err != nil {
			t.Fatal(err)
		}
		h.e.mu.RLock()
		defer h.e.mu.RUnlock()
		eligibleID := func(id memory.ID) bool { _, ok := eligible(ns, p, id); return ok }
		looked, err1 := h.e.ranking.rank(ns.text, h.e.function, conversation{ns.st}, p.text, 100, eligibleID)
		marked, err2 := h.e.ranking.rankAdmitted(ns.text, h.e.function, conversation{ns.st}, p.text, 100, eligibleID, admitLocked(ns, p))
		if err1 != nil || err2 != nil || !slices.Equal(looked, marked) {
			t.Fatalf("%s: ranking with marks %v (%v), looking entries up %v (%v)", what, marked, err2, looked, err1)
		}
	}
	countStore := func(recs []*memory.MemoryRecord, st memory.StoreType) int {
		n := 0
		for _, r := range recs {
			if r.Store == st {
				n++
			}
		}
		return n
	}

	total := func(m map[memory.StoreType]int) int {
		n := 0
		for _, c := range m {
			n += c
		}
		return n
	}
	if m := checkMarks("after storing"); total(m) != len(ids) {
		t.Fatalf("storing marked %v, want every record", m)
	}
	sameRanking("after storing")
	// Records loaded at start have no marks; the recalls that look them
	// up leave them. (The working store's records do not outlive the
	// engine.)
	h.reopen()
	ids = slices.DeleteFunc(ids, func(id memory.ID) bool { return storeOf[id] == memory.StoreWorking })
	if m := checkMarks("after a restart"); len(m) != 0 {
		t.Fatalf("marks set before any recall: %v", m)
	}
	if got := recall(memory.ModeHuman, false); len(got) != len(ids) {
		t.Fatalf("first recall: %d records, want all %d", len(got), len(ids))
	}
	if m := checkMarks("after a recall"); total(m) != len(ids) || m[memory.StoreEpisodic] == 0 {
		t.Fatalf("the recall left marks %v, want one on each of the %d records", m, len(ids))
	}
	sameRanking("before decay")

	// Episodic records turn dormant (stability one day); their marks,
	// set while they were fresh, must not let them back in.
	tick(t, h, 500*day)
	if m := checkMarks("after the decay tick"); m[memory.StoreEpisodic] == 0 {
		t.Fatal("no episodic record kept its mark through the tick")
	}
	got := recall(memory.ModeHuman, false)
	if n := countStore(got, memory.StoreEpisodic); n != 0 || countStore(got, memory.StoreSemantic) == 0 {
		t.Fatalf("human-mode recall after 500 days returned %d dormant episodic records (of %d)", n, len(got))
	}
	sameRanking("after decay")
	checkMarks("after recalling dormant records")

	// A perfect-mode recall returns and reinforces them: their entries
	// change, and so must what their marks say.
	if got := recall(memory.ModePerfect, true); countStore(got, memory.StoreEpisodic) == 0 {
		t.Fatalf("perfect-mode recall returned no episodic record: %d records", len(got))
	}
	checkMarks("after reinforcement")
	got = recall(memory.ModeHuman, false)
	if countStore(got, memory.StoreEpisodic) == 0 {
		t.Fatalf("reinforced episodic records stay out of human-mode recall: %d records", len(got))
	}
	checkMarks("after recalling reinforced records")
	sameRanking("after reinforcement")

	if _, err := h.e.Forget(ctx, &memory.ForgetRequest{RecordIDs: ids[:5], Confirm: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	checkMarks("after forgetting")
	sameRanking("after forgetting")
}
