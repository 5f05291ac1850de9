package engine

import (
	"context"

	"memsvc.dev/memsvc/pkg/memory"
)

// VectorBackend names the vector search implementation in stats.
const VectorBackend = "brute_force"

// Stats implements memory.Service from counters kept up to date by every
// write; it never reads the stores.
func (e *Engine) Stats(ctx context.Context) (*memory.Stats, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s := &memory.Stats{
		RecordsByStore:         make(map[memory.StoreType]uint32, len(memory.AllStores)),
		AvgFidelityByStore:     make(map[memory.StoreType]float64, len(memory.AllStores)),
		TotalAssociations:      e.st.edges,
		RawJournalRecords:      e.raw.total,
		RawJournalPendingDream: e.raw.pending,
		VectorIndexRecords:     e.st.vectors,
		TotalRecallCount:       e.recalls.Load(),
		BackgroundDecayEnabled: e.bgDecay.Load(),
		BackgroundDreamEnabled: e.bgDream.Load(),
		VectorSearchBackend:    VectorBackend,
		DreamEpisodicSummaries: e.st.dreamt[dreamSummary],
		DreamSemanticNodes:     e.st.dreamt[dreamSemantic],
		EvolutionMetrics:       e.evolutionMetrics(),
		QuarantinedRecords:     uint32(e.db.QuarantinedCount()),
	}
	var sum float64
	sums := e.st.sums(e.clock())
	for _, st := range memory.AllStores {
		n := e.st.count[st]
		s.RecordsByStore[st] = n
		s.TotalRecords += n
		sum += sums[st]
		if n > 0 {
			s.AvgFidelityByStore[st] = clamp01(sums[st] / float64(n))
		}
	}
	if !e.lastDream.IsZero() {
		t := e.lastDream
		s.LastDreamTickAt = &t
	}
	if s.TotalRecords > 0 {
		s.AvgFidelity = clamp01(sum / float64(s.TotalRecords))
		oldest, newest := e.st.extremes()
		s.OldestRecord, s.NewestRecord = &oldest, &newest
	}
	return s, nil
}

// clamp01 hides the rounding drift of running sums.
func clamp01(v float64) float64 {
	switch {
	case v < 0:
		return 0
	case v > 1:
		return 1
	}
	return v
}

// Record implements memory.Service. Reading a record never changes it.
func (e *Engine) Record(ctx context.Context, req *memory.IntrospectRecordRequest) (*memory.MemoryRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e.big.RLock()
	defer e.big.RUnlock()
	rec, err := e.get(req.RecordID)
	if err != nil {
		return nil, err
	}
	e.present(rec)
	return rec, nil
}
