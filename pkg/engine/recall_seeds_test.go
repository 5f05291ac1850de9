package engine

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

// TestBestSeedsIsStableSortHead compares bestSeeds with what activation
// took before: the first activationSeeds of the candidates sorted stably
// by descending score, on random candidates with many ties.
func TestBestSeedsIsStableSortHead(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 2000 {
		cands := make([]candidate, rng.IntN(9))
		for i := range cands {
			cands[i] = candidate{score: float64(rng.IntN(4)) / 2}
			cands[i].id[0] = byte(i)
		}
		ranked := slices.Clone(cands)
		slices.SortStableFunc(ranked, func(a, b candidate) int { return cmp.Compare(b.score, a.score) })
		want := ranked[:min(activationSeeds, len(ranked))]
		if got := bestSeeds(cands); !slices.EqualFunc(got, want, func(a, b candidate) bool { return a.id == b.id && a.score == b.score }) {
			t.Fatalf("round %d: seeds %v, want %v", round, got, want)
		}
	}
}

// TestRelevanceAddsUp compares relevance, which keeps scores in a slice
// indexed by an idtable.Table, with a map that adds up the same scores,
// on random ids that repeat.
func TestRelevanceAddsUp(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for round := range 200 {
		var r relevance
		want := map[memory.ID]float64{}
		var order []memory.ID
		for range rng.IntN(300) {
			var id memory.ID
			id[15] = byte(rng.IntN(150)) // with colliding homes: same high bytes
			id[3] = byte(rng.IntN(2))
			s := rng.Float64()
			if _, ok := want[id]; !ok {
				order = append(order, id)
			}
			want[id] += s
			r.add(id, s)
		}
		if !slices.Equal(r.order, order) {
			t.Fatalf("round %d: order %v, want %v", round, r.order, order)
		}
		for i, id := range r.order {
			if r.score[i] != want[id] {
				t.Fatalf("round %d: %s scored %v, want %v", round, id, r.score[i], want[id])
			}
		}
	}
}
