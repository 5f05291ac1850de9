package engine

import (
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// TestSettleImportedCapsFutureTick: an archived last decay tick later than
// the import (the exporting machine's clock ran ahead) becomes the import
// time; an earlier one is kept.
func TestSettleImportedCapsFutureTick(t *testing.T) {
	now := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	cfg := DecayConfig{StabilityDays: DefaultStabilityDays(), DecayRate: 0.5}
	for _, tc := range []struct{ tick, want time.Time }{
		{now.Add(72 * time.Hour), now},
		{now.Add(-time.Hour), now.Add(-time.Hour)},
	} {
		rec := &memory.MemoryRecord{Store: memory.StoreEpisodic, Fidelity: memory.FidelityState{Score: 1, LastDecayTick: tc.tick}}
		settleImported(rec, 1000, cfg, now)
		if !rec.Fidelity.LastDecayTick.Equal(tc.want) {
			t.Errorf("archived tick %v: settled to %v, want %v", tc.tick, rec.Fidelity.LastDecayTick, tc.want)
		}
	}
}
