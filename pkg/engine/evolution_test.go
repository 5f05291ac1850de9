package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

// TestEvolutionFeedsBack: when episodic memories are only ever recalled
// after they have faded, the engine raises the initial stability of new
// episodic records, explains why, remembers it across restarts, and new
// records get it.
func TestEvolutionFeedsBack(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: -1})
	ctx := context.Background()
	for i := 0; i < evolutionStep; i++ {
		h.store(fmt.Sprintf("walrus fact number %d", i), memory.StoreEpisodic)
	}
	tick(t, h, 5*day) // (1+5)^-0.5 = 0.41: faded
	req := memory.DefaultRecallQueryRequest()
	req.Cue.Text = ptr("walrus")
	req.Limit = evolutionStep
	req.Reconsolidate = false
	if _, err := h.e.RecallQuery(ctx, &req); err != nil {
		t.Fatal(err)
	}
	m, err := h.e.Evolution(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.ParameterAdjustments) != 1 {
		t.Fatalf("adjustments %+v", m.ParameterAdjustments)
	}
	adj := m.ParameterAdjustments[0]
	if adj.Store != memory.StoreEpisodic || adj.Parameter != "initial_stability_days" || adj.OriginalValue != 1 || adj.CurrentValue != 1.25 ||
		!strings.Contains(adj.Reason, "median fidelity at recall 0.41") {
		t.Fatalf("adjustment %+v", adj)
	}
	if !strings.Contains(strings.Join(m.DetectedPatterns, "\n"), "episodic: hit rate 1.00 over 1 recalls") {
		t.Fatalf("patterns %v", m.DetectedPatterns)
	}
	if s := h.stats(); len(s.EvolutionMetrics.ParameterAdjustments) != 1 {
		t.Fatalf("stats evolution %+v", s.EvolutionMetrics)
	}
	// New records use it; it survives a restart.
	h.reopen()
	id := h.store("a new walrus", memory.StoreEpisodic)
	if s := h.record(id).Fidelity.Stability; s != 1.25 {
		t.Fatalf("new record stability %v, want 1.25", s)
	}
	if s := h.record(h.store("semantic", memory.StoreSemantic)).Fidelity.Stability; s != 30 {
		t.Fatalf("other stores unaffected: %v", s)
	}
}

func TestEvolutionBounds(t *testing.T) {
	var ev evolution
	for st := range ev.factor {
		ev.factor[st] = 1
	}
	ev.obs[memory.StoreEpisodic].fid = []float64{0.1, 0.2}
	for i := 0; i < 20; i++ {
		ev.evaluate(memory.StoreEpisodic)
	}
	if f := ev.factor[memory.StoreEpisodic]; f != evolutionMax {
		t.Fatalf("growth not bounded: %v", f)
	}
	if ev.evaluate(memory.StoreEpisodic) {
		t.Fatal("an evaluation at the bound reported a change")
	}
	ev.obs[memory.StoreEpisodic].fid = []float64{0.99, 1}
	for i := 0; i < 100; i++ {
		ev.evaluate(memory.StoreEpisodic)
	}
	if f := ev.factor[memory.StoreEpisodic]; f != evolutionMin {
		t.Fatalf("shrink not bounded: %v", f)
	}
}
