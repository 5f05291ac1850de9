package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"memsvc.dev/memsvc/pkg/engine/internal/lockorder"
	"memsvc.dev/memsvc/pkg/memory"
)

// Evolution: the engine watches how memories are used and tunes the initial
// stability of each persistent store, within bounds, with the reason
// recorded.
//
// Observations, per store, over the last evolutionWindow recalls that
// returned a record of it:
//   - the fidelity a record had when a recall returned it (before the
//     recall reinforced it);
//   - the hit rate: the share of text/vector recalls searching the store
//     that returned at least one of its records.
//
// Rule: after every evolutionStep new observations of a store,
//   - if the median fidelity at recall is below evolutionLow, memories of
//     that store fade before they are needed: initial stability × 1.25;
//   - if it is above evolutionHigh, they are recalled while still fresh:
//     initial stability × 0.9;
//
// always within [0.5, 4] × the configured value. New records of the store
// get the adjusted stability; existing records keep theirs. Adjustments
// persist in the data directory; observations start afresh after a restart.
// Observations and adjustments are per namespace: one namespace's recalls
// never tune another's stores.
const (
	evolutionWindow = 200
	evolutionStep   = 50
	evolutionLow    = 0.5
	evolutionHigh   = 0.95
	evolutionGrow   = 1.25
	evolutionShrink = 0.9
	evolutionMin    = 0.5
	evolutionMax    = 4.0
	evolutionKey    = "evolution"
)

type storeObs struct {
	fid      []float64 // ring of fidelity at recall
	next     int
	since    int // observations since the last evaluation
	searches uint64
	hits     uint64
}

type evolution struct {
	mu     lockorder.Mutex
	obs    [memory.StoreWorking + 1]storeObs
	factor [memory.StoreWorking + 1]float64
	reason [memory.StoreWorking + 1]string
}

type evolutionState struct {
	Factors map[string]float64 `json:"factors"`
	Reasons map[string]string  `json:"reasons"`
}

// reset forgets every observation and adjustment.
func (ev *evolution) reset() {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	ev.obs = [memory.StoreWorking + 1]storeObs{}
	ev.reason = [memory.StoreWorking + 1]string{}
	for st := range ev.factor {
		ev.factor[st] = 1
	}
}

func (e *Engine) loadEvolution(ns *nsState) error {
	v, ok, err := setting(e.db.GetNSMeta(ns.id, evolutionKey))
	if !ok {
		return err
	}
	var s evolutionState
	if err := json.Unmarshal(v, &s); err != nil {
		return fmt.Errorf("evolution state: %w", err)
	}
	ev := &ns.evo
	ev.mu.Lock()
	defer ev.mu.Unlock()
	for name, f := range s.Factors {
		if st, err := memory.ParseStoreType(name); err == nil && f >= evolutionMin && f <= evolutionMax {
			ev.factor[st] = f
			ev.reason[st] = s.Reasons[name]
		}
	}
	return nil
}

// stabilityFor is the initial stability of a new record of store st in
// the namespace.
func (ns *nsState) stabilityFor(st memory.StoreType) float64 {
	ns.evo.mu.Lock()
	defer ns.evo.mu.Unlock()
	return ns.e.opts.Decay.StabilityDays[st] * ns.evo.factor[st]
}

// observeRecall records what a recall in namespace ns returned: the
// fidelity each record had before the recall touched it, and which
// searched stores it hit.
func (e *Engine) observeRecall(ns *nsState, searched []memory.StoreType, fidelity map[memory.StoreType][]float64) {
	ev := &ns.evo
	ev.mu.Lock()
	var changed bool
	for _, st := range searched {
		if !st.Persistent() {
			continue
		}
		o := &ev.obs[st]
		o.searches++
		if len(fidelity[st]) > 0 {
			o.hits++
		}
		for _, f := range fidelity[st] {
			if len(o.fid) < evolutionWindow {
				o.fid = append(o.fid, f)
			} else {
				o.fid[o.next] = f
				o.next = (o.next + 1) % evolutionWindow
			}
			o.since++
		}
		if o.since >= evolutionStep {
			o.since = 0
			changed = ev.evaluate(st) || changed
		}
	}
	var state []byte
	if changed {
		state = ev.marshal()
	}
	ev.mu.Unlock()
	if state != nil {
		b := e.db.NewBatch()
		b.PutNSMeta(ns.id, evolutionKey, state)
		if err := b.Commit(); err != nil {
			e.log.Warn("save evolution state", "namespace", ns.name, "err", err)
		}
		b.Close()
	}
}

// evaluate applies the rule to one store; callers hold mu.
func (ev *evolution) evaluate(st memory.StoreType) bool {
	o := &ev.obs[st]
	med := median(o.fid)
	f := ev.factor[st]
	var next float64
	var why string
	switch {
	case med < evolutionLow:
		next = math.Min(f*evolutionGrow, evolutionMax)
		why = fmt.Sprintf("is below %.2f: memories faded before they were needed, so new ones start more stable", evolutionLow)
	case med > evolutionHigh:
		next = math.Max(f*evolutionShrink, evolutionMin)
		why = fmt.Sprintf("is above %.2f: memories are recalled while still fresh, so new ones may start less stable", evolutionHigh)
	default:
		return false
	}
	if next == f {
		return false
	}
	ev.factor[st] = next
	ev.reason[st] = fmt.Sprintf("median fidelity at recall %.2f over the last %d recalls %s", med, len(o.fid), why)
	return true
}

func (ev *evolution) marshal() []byte {
	s := evolutionState{Factors: map[string]float64{}, Reasons: map[string]string{}}
	for _, st := range memory.PersistentStores() {
		if ev.factor[st] != 1 {
			s.Factors[st.String()] = ev.factor[st]
			s.Reasons[st.String()] = ev.reason[st]
		}
	}
	return mustJSON(s)
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Evolution implements memory.Service for the caller's namespace.
func (e *Engine) Evolution(ctx context.Context) (*memory.EvolutionMetrics, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return e.evolutionMetrics(e.space(ctx)), nil
}

// evolutionMetrics reports namespace ns's adjustments and observations
// (none for nil, a namespace that does not exist).
func (e *Engine) evolutionMetrics(ns *nsState) *memory.EvolutionMetrics {
	m := &memory.EvolutionMetrics{ParameterAdjustments: []memory.ParameterAdjustment{}, DetectedPatterns: []string{}, SchemaAdaptations: []string{}}
	if ns == nil {
		return m
	}
	ev := &ns.evo
	ev.mu.Lock()
	defer ev.mu.Unlock()
	for _, st := range memory.PersistentStores() {
		base := e.opts.Decay.StabilityDays[st]
		if ev.factor[st] != 1 {
			m.ParameterAdjustments = append(m.ParameterAdjustments, memory.ParameterAdjustment{
				Store: st, Parameter: "initial_stability_days", OriginalValue: base,
				CurrentValue: base * ev.factor[st], Reason: ev.reason[st],
			})
		}
		o := &ev.obs[st]
		if o.searches > 0 {
			m.DetectedPatterns = append(m.DetectedPatterns, fmt.Sprintf("%s: hit rate %.2f over %d recalls", st, float64(o.hits)/float64(o.searches), o.searches))
		}
		if len(o.fid) > 0 {
			m.DetectedPatterns = append(m.DetectedPatterns, fmt.Sprintf("%s: median fidelity at recall %.2f over %d recalled records", st, median(o.fid), len(o.fid)))
		}
	}
	return m
}
