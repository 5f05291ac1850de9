package engine

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// The decay model (DESIGN §5).
//
// Fidelity follows a power law over a record's decay age t (days):
//
//	score = (1 + t/(S·A))^(-d)
//
// with stability S in days, emotional anchor A = 1 + 2·intensity (set once
// from the emotion, never compounding) and decay rate d. noise_level is
// 1 - score. Records under DormantBelow are dormant: human-mode recall skips
// them; nothing is deleted unless pruning is configured.
//
// Decay age is kept as a clock. The engine holds one decay-clock reading C
// (seconds, persisted) and every namespace an offset O (persisted with it);
// a record remembers its namespace's reading C+O at its last reinforcement
// (FidelityState.ClockBase), so its own clock shows C+O minus that base.
// The background loop advances C by the real time elapsed since its last
// tick, which ages every record of every namespace at once; decay-tick
// advances the caller's namespace's O by a given duration, which ages that
// namespace only. Neither rewrites records. The forecast uses the same
// formula, so forecasts and ticks agree.
//
// A recall that returns a record whose clock shows more than
// ReinforceAfter·S·A reinforces it: reinforcement_count + 1, S doubles, and
// its clock restarts (score back to 1). Quick repeats do not inflate
// stability.

// Model constants.
const (
	// DormantBelow is the score under which a record is dormant.
	DormantBelow = 0.05
	// ReinforceAfter is the share of S·A that must have passed on a
	// record's clock before a recall reinforces it again.
	ReinforceAfter = 0.1
	secondsPerDay  = 86400
)

// DecayConfig holds the parameters of the decay model.
type DecayConfig struct {
	// StabilityDays is the initial stability per store, in days.
	StabilityDays map[memory.StoreType]float64
	// DecayRate is the exponent d of new records.
	DecayRate float64
	// PruneBelow, when positive, makes decay ticks delete records whose
	// score fell under it (each deletion is audited). Zero never deletes.
	PruneBelow float64
}

// DefaultStabilityDays returns the initial stabilities, a new map per
// call: an episode fades over days, an emotional memory over weeks, facts
// over months and skills over seasons.
func DefaultStabilityDays() map[memory.StoreType]float64 {
	return map[memory.StoreType]float64{
		memory.StoreEpisodic:   1,
		memory.StoreEmotional:  14,
		memory.StoreSemantic:   30,
		memory.StoreProcedural: 90,
		memory.StoreWorking:    1,
	}
}

// DefaultDecayRate is the exponent d of new records.
const DefaultDecayRate = 0.5

func (c DecayConfig) withDefaults() DecayConfig {
	out := DecayConfig{StabilityDays: DefaultStabilityDays(), DecayRate: c.DecayRate, PruneBelow: c.PruneBelow}
	for st := range out.StabilityDays {
		if v, ok := c.StabilityDays[st]; ok && v > 0 {
			out.StabilityDays[st] = v
		}
	}
	if out.DecayRate <= 0 {
		out.DecayRate = DefaultDecayRate
	}
	return out
}

// anchor is the emotional anchor A of a record with this emotion.
func anchor(e memory.EmotionVector) float64 {
	return 1 + 2*math.Max(0, math.Min(1, e.Intensity))
}

// fidelityScore is the score after ageDays on a record's clock.
func fidelityScore(ageDays, stability, anchor, rate float64) float64 {
	if ageDays <= 0 {
		return 1
	}
	sa := stability * anchor
	if sa <= 0 || math.IsNaN(sa) {
		return 0
	}
	s := math.Pow(1+ageDays/sa, -rate)
	if math.IsNaN(s) {
		return 0
	}
	return math.Max(0, math.Min(1, s))
}

// ageForScore inverts fidelityScore: the age in days at which the score
// falls to target; +Inf when it never does.
func ageForScore(target, stability, anchor, rate float64) float64 {
	if target >= 1 {
		return 0
	}
	if target <= 0 || rate <= 0 {
		return math.Inf(1)
	}
	return stability * anchor * (math.Pow(target, -1/rate) - 1)
}

// decays reports whether records of store st age (the working store does
// not).
func decays(st memory.StoreType) bool { return st.Persistent() }

// newFidelity is the fidelity state of a record created now in store st
// of namespace ns.
func (e *Engine) newFidelity(ns *nsState, st memory.StoreType, emo memory.EmotionVector, now time.Time) memory.FidelityState {
	return memory.FidelityState{
		Score:           1,
		DecayRate:       e.opts.Decay.DecayRate,
		EmotionalAnchor: anchor(emo),
		Stability:       ns.stabilityFor(st),
		LastDecayTick:   now,
		ClockBase:       ns.clock(),
	}
}

// clockState is the persisted decay clock: the engine's reading, or a
// namespace's offset.
type clockState struct {
	reading  float64   // seconds
	lastTick time.Time // wall time of the last tick (zero: never)
}

// clockKey is the engine-wide clock (a global setting, store.MetaKey);
// offsetKey a namespace's offset (store.NSMetaKey).
const (
	clockKey  = "decay_clock"
	offsetKey = "decay_offset"
)

func encodeClock(c clockState) []byte {
	b := binary.LittleEndian.AppendUint64(nil, math.Float64bits(c.reading))
	var t int64
	if !c.lastTick.IsZero() {
		t = c.lastTick.UnixNano()
	}
	return binary.LittleEndian.AppendUint64(b, uint64(t))
}

func decodeClock(b []byte) (clockState, error) {
	if len(b) != 16 {
		return clockState{}, fmt.Errorf("decay clock: %w", store.ErrCorrupt)
	}
	c := clockState{reading: math.Float64frombits(binary.LittleEndian.Uint64(b))}
	if t := int64(binary.LittleEndian.Uint64(b[8:])); t != 0 {
		c.lastTick = time.Unix(0, t).UTC()
	}
	return c, nil
}

// storedClock decodes a persisted clock from the result of reading it;
// ok is false when none is stored (or on an error).
func storedClock(v []byte, err error) (_ clockState, ok bool, _ error) {
	v, ok, err = setting(v, err)
	if !ok {
		return clockState{}, false, err
	}
	c, err := decodeClock(v)
	return c, err == nil, err
}

// loadClock reads the persisted clock; a new directory starts at zero.
func (e *Engine) loadClock() error {
	c, ok, err := storedClock(e.db.GetMeta(clockKey))
	if ok {
		e.setClock(c)
	}
	return err
}

func (e *Engine) setClock(c clockState) {
	e.clockBits.Store(math.Float64bits(c.reading))
	e.mu.Lock()
	e.lastTick = c.lastTick
	e.mu.Unlock()
}

// loadOffset reads a namespace's persisted clock offset; zero when unset
// (every namespace before its clients first tick, and the default one
// before namespaces existed).
func (e *Engine) loadOffset(ns *nsState) error {
	c, ok, err := storedClock(e.db.GetNSMeta(ns.id, offsetKey))
	if ok {
		ns.offset.Store(math.Float64bits(c.reading))
		ns.lastTick = c.lastTick
	}
	return err
}

// clock is the engine-wide decay-clock reading in seconds; a namespace's
// reading adds its offset (nsState.clock).
func (e *Engine) clock() float64 { return math.Float64frombits(e.clockBits.Load()) }

// ageDays is a record's decay age at clock reading c.
func ageDays(f *memory.FidelityState, st memory.StoreType, c float64) float64 {
	if !decays(st) {
		return 0
	}
	return (c - f.ClockBase) / secondsPerDay
}

// present fills the derived fidelity fields of rec, a record of namespace
// ns, for the namespace's current clock: score, noise level and the time
// of the last decay tick.
func (e *Engine) present(ns *nsState, rec *memory.MemoryRecord) {
	e.mu.RLock()
	last := ns.tickAtLocked()
	e.mu.RUnlock()
	presentAt(rec, ns.clock(), last)
}

// presentAt fills the derived fidelity fields for clock reading c and the
// engine's last decay tick (export presents every record at one reading).
func presentAt(rec *memory.MemoryRecord, c float64, lastTick time.Time) {
	f := &rec.Fidelity
	f.Score = fidelityScore(ageDays(f, rec.Store, c), f.Stability, f.EmotionalAnchor, f.DecayRate)
	f.NoiseLevel = 1 - f.Score
	f.LastDecayTick = lastDecayTick(rec, lastTick)
}

// lastDecayTick is the time decay last applied to rec: the engine's last
// tick, unless the record is younger, or carries a later tick from the
// engine it was exported from.
func lastDecayTick(rec *memory.MemoryRecord, engineTick time.Time) time.Time {
	t := rec.CreatedAt
	if rec.Fidelity.LastDecayTick.After(t) {
		t = rec.Fidelity.LastDecayTick
	}
	if engineTick.After(t) {
		t = engineTick
	}
	return t
}

// reinforce applies spaced reinforcement to a recalled record: when its
// clock shows more than ReinforceAfter·S·A, stability doubles and the clock
// restarts. It reports whether it did.
func reinforce(ns *nsState, rec *memory.MemoryRecord) bool {
	f := &rec.Fidelity
	if !decays(rec.Store) {
		return false
	}
	c := ns.clock()
	if ageDays(f, rec.Store, c) <= ReinforceAfter*f.Stability*f.EmotionalAnchor {
		return false
	}
	f.ReinforcementCount++
	f.Stability *= 2
	f.ClockBase = c
	return true
}
