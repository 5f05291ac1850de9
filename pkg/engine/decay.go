package engine

import (
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// DecayConfig holds the parameters of the decay model (DESIGN §5). Fidelity
// follows score = (1 + t/(S·A))^(-d) over a record's decay age t, with
// stability S in days, emotional anchor A = 1 + 2·intensity and decay rate d.
type DecayConfig struct {
	// StabilityDays is the initial stability per store, in days.
	StabilityDays map[memory.StoreType]float64
	// DecayRate is the exponent d of new records.
	DecayRate float64
}

// DefaultStabilityDays are the initial stabilities: an episode fades over
// days, an emotional memory over weeks, facts over months and skills over
// seasons.
var DefaultStabilityDays = map[memory.StoreType]float64{
	memory.StoreEpisodic:   1,
	memory.StoreEmotional:  14,
	memory.StoreSemantic:   30,
	memory.StoreProcedural: 90,
	memory.StoreWorking:    1,
}

// DefaultDecayRate is the exponent d of new records.
const DefaultDecayRate = 0.5

func (c DecayConfig) withDefaults() DecayConfig {
	out := DecayConfig{StabilityDays: make(map[memory.StoreType]float64, len(DefaultStabilityDays)), DecayRate: c.DecayRate}
	for st, d := range DefaultStabilityDays {
		out.StabilityDays[st] = d
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
	i := e.Intensity
	if i < 0 {
		i = 0
	}
	if i > 1 {
		i = 1
	}
	return 1 + 2*i
}

// newFidelity is the fidelity state of a record created now in store st.
func (e *Engine) newFidelity(st memory.StoreType, emo memory.EmotionVector, now time.Time) memory.FidelityState {
	return memory.FidelityState{
		Score:           1,
		DecayRate:       e.opts.Decay.DecayRate,
		EmotionalAnchor: anchor(emo),
		Stability:       e.opts.Decay.StabilityDays[st],
		LastDecayTick:   now,
	}
}
