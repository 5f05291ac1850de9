package engine

import (
	"context"

	"memsvc.dev/memsvc/pkg/memory"
)

// VectorBackend names the vector search implementation in stats.
const VectorBackend = "brute_force"

// Stats implements memory.Service for the caller's namespace, from
// counters kept up to date by every write; it never reads the stores.
func (e *Engine) Stats(ctx context.Context) (*memory.Stats, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ns := e.space(ctx)
	s := e.newStats()
	if ns == nil {
		s.EvolutionMetrics = e.evolutionMetrics(nil)
		return s, nil // a namespace that does not exist holds nothing
	}
	s.QuarantinedRecords = uint32(e.db.QuarantinedIn(ns.id))
	e.mu.Lock()
	defer e.mu.Unlock()
	e.addStatsLocked(s, ns)
	s.EvolutionMetrics = e.evolutionMetrics(ns)
	return s, nil
}

// StatsAll is Stats over every namespace together: the counts add up,
// averages are over all records, the oldest and newest records and the
// last dream tick are those of any namespace, and quarantined values are
// counted wherever they are. Evolution metrics are per namespace and left
// out (null). For a caller that may see every namespace.
func (e *Engine) StatsAll(ctx context.Context) (*memory.Stats, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := e.newStats()
	s.QuarantinedRecords = uint32(e.db.QuarantinedCount())
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ns := range e.spaces {
		e.addStatsLocked(s, ns)
	}
	return s, nil
}

// newStats is the answer of Stats before any namespace was added.
func (e *Engine) newStats() *memory.Stats {
	s := &memory.Stats{
		RecordsByStore:         make(map[memory.StoreType]uint32, len(memory.AllStores())),
		AvgFidelityByStore:     make(map[memory.StoreType]float64, len(memory.AllStores())),
		BackgroundDecayEnabled: e.bgDecay.Load(),
		BackgroundDreamEnabled: e.bgDream.Load(),
		VectorSearchBackend:    VectorBackend,
	}
	for _, st := range memory.AllStores() {
		s.RecordsByStore[st] = 0
	}
	return s
}

// addStatsLocked adds namespace ns to s: counts add up and averages
// become averages over every record added. Callers hold e.mu exclusively
// (the score sums are recomputed in place).
func (e *Engine) addStatsLocked(s *memory.Stats, ns *nsState) {
	st := ns.st
	s.TotalAssociations += st.edges
	s.RawJournalRecords += ns.raw.total
	s.RawJournalPendingDream += ns.raw.pending
	s.VectorIndexRecords += st.vectors
	s.TotalRecallCount += ns.recalls.Load()
	s.DreamEpisodicSummaries += st.dreamt[dreamSummary]
	s.DreamSemanticNodes += st.dreamt[dreamSemantic]
	sums := st.sums(ns.clock())
	before := s.TotalRecords
	sum := s.AvgFidelity * float64(before)
	for _, store := range memory.AllStores() {
		n := st.count[store]
		if n == 0 {
			continue
		}
		had := s.RecordsByStore[store]
		s.RecordsByStore[store] = had + n
		s.AvgFidelityByStore[store] = clamp01((s.AvgFidelityByStore[store]*float64(had) + sums[store]) / float64(had+n))
		s.TotalRecords += n
		sum += sums[store]
	}
	if !ns.lastDream.IsZero() && (s.LastDreamTickAt == nil || ns.lastDream.After(*s.LastDreamTickAt)) {
		t := ns.lastDream
		s.LastDreamTickAt = &t
	}
	if s.TotalRecords > before {
		s.AvgFidelity = clamp01(sum / float64(s.TotalRecords))
		oldest, newest := st.extremes()
		if s.OldestRecord == nil || oldest.Before(*s.OldestRecord) {
			s.OldestRecord = &oldest
		}
		if s.NewestRecord == nil || newest.After(*s.NewestRecord) {
			s.NewestRecord = &newest
		}
	}
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
	ns := e.space(ctx)
	if ns == nil {
		return nil, memory.NotFound(req.RecordID)
	}
	rec, err := e.get(ns, req.RecordID)
	if err != nil {
		return nil, err
	}
	e.present(ns, rec)
	return rec, nil
}
