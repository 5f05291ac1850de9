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
// over many records never holds the engine for long.
const pruneBatch = 256

// DecayTick implements memory.Service: it advances every record's decay
// clock by the given span (default an hour) at once.
func (e *Engine) DecayTick(ctx context.Context, req *memory.DecayTickRequest) (*memory.DecayTickResponse, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	d := uint32(DefaultTickSeconds)
	if req.TickDurationSeconds != nil {
		d = *req.TickDurationSeconds
	}
	return e.advance(ctx, float64(d))
}

// AdvanceDecay advances the decay clock by the real time elapsed since the
// last tick (including time the server was down). The background loop
// calls it; the first call on a new directory only starts the clock.
func (e *Engine) AdvanceDecay(ctx context.Context) (*memory.DecayTickResponse, error) {
	e.mu.RLock()
	last := e.lastTick
	e.mu.RUnlock()
	elapsed := 0.0
	if !last.IsZero() {
		elapsed = math.Max(0, e.now().Sub(last).Seconds())
	}
	return e.advance(ctx, elapsed)
}

// advance moves the clock by seconds, persists it, and prunes when
// configured. The clock itself is one durable write whatever the number of
// records.
func (e *Engine) advance(ctx context.Context, seconds float64) (*memory.DecayTickResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e.tickMu.Lock()
	defer e.tickMu.Unlock()
	next := clockState{reading: e.clock() + seconds, lastTick: e.now()}
	// Copy the entries under a short read lock and score them outside it,
	// so writers are not held up by a tick over many records.
	type item struct {
		id  memory.ID
		ent *entry
	}
	e.mu.RLock()
	items := make([]item, 0, len(e.st.entries))
	for id, ent := range e.st.entries {
		items = append(items, item{id, ent})
	}
	version := e.st.version
	e.mu.RUnlock()
	resp := &memory.DecayTickResponse{}
	var prune []memory.ID
	var sums [memory.StoreWorking + 1]float64
	for _, it := range items {
		s := it.ent.score(next.reading)
		sums[it.ent.store] += s
		if !decays(it.ent.store) {
			continue
		}
		resp.RecordsUpdated++
		if s < DormantBelow {
			resp.RecordsBelowThreshold++
		}
		if s < e.opts.Decay.PruneBelow {
			prune = append(prune, it.id)
		}
	}
	t := e.begin()
	t.b.PutMeta(clockKey, encodeClock(next))
	t.audit(audit.OpDecayTick, nil, nil, map[string]any{"seconds": seconds, "records_updated": resp.RecordsUpdated, "records_below_threshold": resp.RecordsBelowThreshold})
	err := t.commit()
	t.close()
	if err != nil {
		return nil, fmt.Errorf("decay tick: %w", err)
	}
	e.setClock(next)
	// Hand the sums to the stats unless records changed meanwhile (then
	// the stats recompute them when asked).
	e.mu.Lock()
	if e.st.version == version {
		e.st.sumScore, e.st.sumClock = sums, next.reading
	}
	e.mu.Unlock()
	for len(prune) > 0 {
		n := min(len(prune), pruneBatch)
		deleted, err := e.prune(ctx, prune[:n], next.reading)
		if err != nil {
			return resp, err
		}
		resp.RecordsPruned += deleted
		prune = prune[n:]
	}
	return resp, nil
}

// prune deletes records that are still under the prune threshold, removing
// the edges other records hold to them, in one commit.
func (e *Engine) prune(ctx context.Context, ids []memory.ID, clock float64) (uint32, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	e.big.Lock()
	defer e.big.Unlock()
	doomed := map[memory.ID]memory.StoreType{}
	e.mu.RLock()
	for _, id := range ids {
		if ent, ok := e.st.entries[id]; ok && ent.score(clock) < e.opts.Decay.PruneBelow {
			doomed[id] = ent.store
		}
	}
	e.mu.RUnlock()
	if len(doomed) == 0 {
		return 0, nil
	}
	if err := e.deleteLocked(doomed, audit.OpDecayPrune, map[string]any{"prune_below": e.opts.Decay.PruneBelow, "records_pruned": len(doomed)}); err != nil {
		return 0, fmt.Errorf("prune: %w", err)
	}
	return uint32(len(doomed)), nil
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
	c := e.clock()
	resp := &memory.DecayForecastResponse{Forecasts: make([]memory.DecayForecast, 0, len(req.RecordIDs))}
	for _, id := range req.RecordIDs {
		rec, err := e.get(id)
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
