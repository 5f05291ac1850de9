package engine

import (
	"context"
	"fmt"
	"math"
	"time"

	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/memory"
)

// DefaultTickSeconds is the span of a decay tick that does not name one.
const DefaultTickSeconds = 3600

// pruneBatch bounds how many records one prune commit deletes, so a tick
// over many records holds the engine exclusively for one short commit at
// a time.
const pruneBatch = 64

// DecayTick implements memory.Service: it advances the decay clock of the
// caller's namespace by the given span (default an hour), which ages every
// record of that namespace at once and no other.
func (e *Engine) DecayTick(ctx context.Context, req *memory.DecayTickRequest) (*memory.DecayTickResponse, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	d := uint32(DefaultTickSeconds)
	if req.TickDurationSeconds != nil {
		d = *req.TickDurationSeconds
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e.tickMu.Lock()
	defer e.tickMu.Unlock()
	ns := e.space(ctx)
	if ns == nil {
		return &memory.DecayTickResponse{}, nil // a namespace that does not exist holds nothing to age
	}
	seconds := float64(d)
	for {
		resp, scored, done, err := e.tickSpace(ns, seconds)
		switch {
		case err != nil:
			return nil, err
		case !done:
			continue // the namespace was reset meanwhile: score again
		case scored == nil:
			return resp, nil // dropped meanwhile
		}
		return resp, e.pruneAll(ctx, []scoredSpace{*scored}, resp)
	}
}

// tickSpace advances namespace ns's clock by seconds. It scores the
// records without holding the engine (ticks are serialised by tickMu) and
// holds it, shared, for the commit of the new offset only. done is false
// when the offset changed meanwhile (a drop or replacing import reset the
// namespace); scored is nil when the namespace was dropped.
func (e *Engine) tickSpace(ns *nsState, seconds float64) (resp *memory.DecayTickResponse, scored *scoredSpace, done bool, err error) {
	now := e.now()
	base := ns.offset.Load()
	next := clockState{reading: math.Float64frombits(base) + seconds, lastTick: now}
	resp = &memory.DecayTickResponse{}
	s := e.score(ns, e.clock()+next.reading, resp)
	e.big.RLock()
	defer e.big.RUnlock()
	switch {
	case e.isDropped(ns):
		return &memory.DecayTickResponse{}, nil, true, nil
	case ns.offset.Load() != base:
		return nil, nil, false, nil
	}
	t := e.begin(ns)
	defer t.close()
	t.b.PutNSMeta(ns.id, offsetKey, encodeClock(next))
	t.audit(audit.OpDecayTick, nil, nil, map[string]any{"seconds": seconds, "records_updated": resp.RecordsUpdated, "records_below_threshold": resp.RecordsBelowThreshold})
	if err := t.commit(); err != nil {
		return nil, nil, true, fmt.Errorf("decay tick: %w", err)
	}
	ns.offset.Store(math.Float64bits(next.reading))
	e.mu.Lock()
	ns.lastTick = now
	s.keepSums()
	e.mu.Unlock()
	return resp, &s, true, nil
}

// AdvanceDecay advances the engine-wide decay clock by the real time
// elapsed since the last tick (including time the server was down), which
// ages the records of every namespace. The background loop calls it; the
// first call on a new directory only starts the clock. The answer counts
// the records of every namespace.
func (e *Engine) AdvanceDecay(ctx context.Context) (*memory.DecayTickResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e.tickMu.Lock()
	defer e.tickMu.Unlock()
	e.mu.RLock()
	last := e.lastTick
	e.mu.RUnlock()
	elapsed := 0.0
	if !last.IsZero() {
		elapsed = math.Max(0, e.now().Sub(last).Seconds())
	}
	next := clockState{reading: e.clock() + elapsed, lastTick: e.now()}
	resp := &memory.DecayTickResponse{}
	var scored []scoredSpace
	for _, ns := range e.allSpaces() {
		scored = append(scored, e.score(ns, next.reading+math.Float64frombits(ns.offset.Load()), resp))
	}
	// The clock itself is one durable write whatever the number of
	// records.
	t := e.begin(nil)
	t.b.PutMeta(clockKey, encodeClock(next))
	t.audit(audit.OpDecayTick, nil, nil, map[string]any{"namespace": allNamespaces, "seconds": elapsed,
		"records_updated": resp.RecordsUpdated, "records_below_threshold": resp.RecordsBelowThreshold})
	err := t.commit()
	t.close()
	if err != nil {
		return nil, fmt.Errorf("decay tick: %w", err)
	}
	e.setClock(next)
	e.mu.Lock()
	for _, s := range scored {
		s.keepSums()
	}
	e.mu.Unlock()
	return resp, e.pruneAll(ctx, scored, resp)
}

// allNamespaces names every namespace in audit summaries of engine-wide
// changes.
const allNamespaces = "*"

// scoredSpace is a namespace's records scored at a clock reading.
type scoredSpace struct {
	ns      *nsState
	clock   float64
	sums    [memory.StoreWorking + 1]float64
	version uint64      // of the entries scored
	prune   []memory.ID // under the prune threshold
}

// score scores the entries of namespace ns at clock reading c and counts
// them in resp. It copies the entries under a short read lock and scores
// them outside it, so writers are not held up by a tick over many records.
func (e *Engine) score(ns *nsState, c float64, resp *memory.DecayTickResponse) scoredSpace {
	type item struct {
		id  memory.ID
		ent *entry
	}
	e.mu.RLock()
	items := make([]item, 0, len(ns.st.entries))
	for id, ent := range ns.st.entries {
		items = append(items, item{id, ent})
	}
	out := scoredSpace{ns: ns, clock: c, version: ns.st.version}
	e.mu.RUnlock()
	for _, it := range items {
		s := it.ent.score(c)
		out.sums[it.ent.store] += s
		if !decays(it.ent.store) {
			continue
		}
		resp.RecordsUpdated++
		if s < DormantBelow {
			resp.RecordsBelowThreshold++
		}
		if s < e.opts.Decay.PruneBelow {
			out.prune = append(out.prune, it.id)
		}
	}
	return out
}

// keepSums hands the score sums to the stats unless records changed since
// they were scored (then the stats recompute them when asked). Callers
// hold e.mu.
func (s scoredSpace) keepSums() {
	if st := s.ns.st; st.version == s.version {
		st.sumScore, st.sumClock = s.sums, s.clock
	}
}

// pruneAll deletes, namespace by namespace and pruneBatch at a time, the
// records that scored under the prune threshold, counting them in resp.
func (e *Engine) pruneAll(ctx context.Context, scored []scoredSpace, resp *memory.DecayTickResponse) error {
	for _, s := range scored {
		for ids := s.prune; len(ids) > 0; {
			n := min(len(ids), pruneBatch)
			deleted, err := e.prune(ctx, s.ns, ids[:n], s.clock)
			if err != nil {
				return err
			}
			resp.RecordsPruned += deleted
			ids = ids[n:]
		}
	}
	return nil
}

// prune deletes records of namespace ns that are still under the prune
// threshold at the namespace's clock reading, removing the edges other
// records hold to them, in one commit. It holds the engine exclusively
// for that commit, which does not wait for the disk, and syncs once it has
// let go of it (as a consolidation chunk does): a crash before the sync
// loses the prune, which the next tick does again.
func (e *Engine) prune(ctx context.Context, ns *nsState, ids []memory.ID, clock float64) (uint32, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	n, wrote, err := e.pruneLocked(ns, ids, clock)
	if wrote {
		if serr := e.syncWAL(); err == nil {
			err = serr
		}
	}
	if err != nil {
		return 0, err
	}
	return n, nil
}

// pruneLocked is prune's commit under the engine; it reports whether it
// committed anything (the recalls' pending effects included).
func (e *Engine) pruneLocked(ns *nsState, ids []memory.ID, clock float64) (uint32, bool, error) {
	e.big.Lock()
	defer e.big.Unlock()
	wrote, err := e.writeRecalls()
	if err != nil {
		return 0, wrote, err
	}
	doomed := map[memory.ID]memory.StoreType{}
	e.mu.RLock()
	if !ns.dropped {
		for _, id := range ids {
			if ent, ok := ns.st.entries[id]; ok && ent.score(clock) < e.opts.Decay.PruneBelow {
				doomed[id] = ent.store
			}
		}
	}
	e.mu.RUnlock()
	if len(doomed) == 0 {
		return 0, wrote, nil
	}
	t := e.beginLazy(ns)
	defer t.close()
	if err := e.deleteIn(t, doomed, audit.OpDecayPrune, map[string]any{"prune_below": e.opts.Decay.PruneBelow, "records_pruned": len(doomed)}); err != nil {
		return 0, true, fmt.Errorf("prune: %w", err)
	}
	return uint32(len(doomed)), true, nil
}

// DecayForecast implements memory.Service: each record's fidelity at
// forecast_at, assuming the clock advances with real time (as the
// background loop makes it), and when it will become dormant.
func (e *Engine) DecayForecast(ctx context.Context, req *memory.DecayForecastRequest) (*memory.DecayForecastResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if req.ForecastAt.IsZero() {
		return nil, memory.Invalid("forecast_at", "required")
	}
	now := e.now()
	ahead := math.Max(0, req.ForecastAt.Sub(now).Seconds()) / secondsPerDay
	resp := &memory.DecayForecastResponse{Forecasts: make([]memory.DecayForecast, 0, len(req.RecordIDs))}
	ns := e.space(ctx)
	if ns == nil {
		if len(req.RecordIDs) > 0 {
			return nil, memory.NotFound(req.RecordIDs[0]) // a namespace that does not exist holds nothing
		}
		return resp, nil
	}
	c := ns.clock()
	for _, id := range req.RecordIDs {
		rec, err := e.get(ns, id)
		if err != nil {
			return nil, err
		}
		f := &rec.Fidelity
		age := ageDays(f, rec.Store, c)
		fc := memory.DecayForecast{
			RecordID:           id,
			CurrentFidelity:    fidelityScore(age, f.Stability, f.EmotionalAnchor, f.DecayRate),
			ForecastedFidelity: fidelityScore(age+ahead, f.Stability, f.EmotionalAnchor, f.DecayRate),
		}
		if decays(rec.Store) {
			if at := ageForScore(DormantBelow, f.Stability, f.EmotionalAnchor, f.DecayRate); !math.IsInf(at, 1) && at > age && at-age < maxForecastDays {
				t := now.Add(time.Duration((at - age) * secondsPerDay * float64(time.Second))).UTC()
				fc.EstimatedThresholdDate = &t
			}
		}
		resp.Forecasts = append(resp.Forecasts, fc)
	}
	return resp, nil
}

// maxForecastDays is how far a threshold date may lie (a thousand years);
// beyond that the record is reported as never fading.
const maxForecastDays = 365250
