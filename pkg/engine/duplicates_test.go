package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/engine/vecindex"
	"memsvc.dev/memsvc/pkg/memory"
)

// allPairsDuplicates is the near-duplicate pairing as it was first
// written: every pair compared, in pool order. The indexed search must
// give exactly its answer.
func allPairsDuplicates(e *Engine, ns *nsState, pool []*memory.MemoryRecord, clock float64) []merge {
	var out []merge
	used := map[memory.ID]bool{}
	terms := make([]map[string]bool, len(pool))
	vecs := make([]unitVec, len(pool))
	for i, rec := range pool {
		terms[i] = recordTermSet(rec)
		v := rec.Content.Embedding()
		vecs[i] = unitVec{dims: len(v), unit: vecindex.Normalize(v)}
	}
	for i, a := range pool {
		if used[a.ID] {
			continue
		}
		for j := i + 1; j < len(pool); j++ {
			b := pool[j]
			if used[b.ID] || !nearDuplicate(vecs[i], vecs[j], terms[i], terms[j]) {
				continue
			}
			keep, drop := a, b
			if e.entryScore(ns, b.ID, clock) > e.entryScore(ns, a.ID, clock) {
				keep, drop = b, a
			}
			out = append(out, merge{keep, drop})
			used[a.ID], used[b.ID] = true, true
			break
		}
	}
	return out
}

// dupCorpus makes n records rich in near-duplicates: texts drawn from a
// small vocabulary, many of them an earlier text with a word or two
// changed, added or dropped (so pairs, chains and exact copies occur),
// some empty, some with embeddings of two sizes (near-copies of earlier
// ones, zero vectors among them).
func dupCorpus(rng *rand.Rand, n int) []*memory.MemoryRecord {
	vocab := make([]string, 60)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%sq", crashWord(i))
	}
	var texts [][]string
	var vecs [][]float32
	out := make([]*memory.MemoryRecord, n)
	for i := range out {
		var words []string
		switch {
		case len(texts) > 0 && rng.IntN(3) > 0:
			words = append([]string(nil), texts[rng.IntN(len(texts))]...)
			for range rng.IntN(3) {
				switch k := rng.IntN(len(words) + 1); {
				case k == len(words):
					words = append(words, vocab[rng.IntN(len(vocab))])
				case rng.IntN(2) == 0:
					words[k] = vocab[rng.IntN(len(vocab))]
				default:
					words = append(words[:k], words[k+1:]...)
				}
			}
		case rng.IntN(20) > 0:
			for range 1 + rng.IntN(25) {
				words = append(words, vocab[rng.IntN(len(vocab))])
			}
		}
		texts = append(texts, words)
		rec := &memory.MemoryRecord{ID: memory.ID{byte(i >> 8), byte(i), 1}, Store: memory.StoreEpisodic,
			Content: memory.TextContent(strings.Join(words, " "))}
		if rng.IntN(3) == 0 {
			var v []float32
			if len(vecs) > 0 && rng.IntN(2) == 0 {
				base := vecs[rng.IntN(len(vecs))]
				v = make([]float32, len(base))
				for k := range v {
					v[k] = base[k] + float32(rng.NormFloat64()*0.15)
				}
			} else {
				v = make([]float32, 4+4*rng.IntN(2))
				if rng.IntN(10) > 0 {
					for k := range v {
						v[k] = float32(rng.NormFloat64())
					}
				}
			}
			vecs = append(vecs, v)
			rec.Content.Blocks[0].Embedding = v
		}
		out[i] = rec
	}
	return out
}

// TestDuplicatesEqualAllPairs: on random corpora full of near-duplicates
// the indexed search pairs exactly the records that comparing every pair
// does, in the same order, with the same record kept.
func TestDuplicatesEqualAllPairs(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: -1})
	ns := h.e.defaultSpace()
	never := func() bool { return false }
	merged := 0
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 23))
		pool := dupCorpus(rng, 50+rng.IntN(400))
		want := allPairsDuplicates(h.e, ns, pool, 0)
		got := h.e.duplicates(ns, pool, 0, never)
		if len(got) != len(want) {
			t.Fatalf("seed %d: %d pairs, want %d", seed, len(got), len(want))
		}
		for i := range want {
			if got[i].keep.ID != want[i].keep.ID || got[i].drop.ID != want[i].drop.ID {
				t.Fatalf("seed %d: pair %d is %v+%v, want %v+%v", seed, i, got[i].keep.ID, got[i].drop.ID, want[i].keep.ID, want[i].drop.ID)
			}
		}
		merged += len(want)
	}
	if merged < 1000 {
		t.Fatalf("only %d pairs in all the corpora: they do not exercise the search", merged)
	}
}

// TestDuplicatesKeepsFitterRecord: the record with the higher fidelity is
// kept, wherever it stands in the pool.
func TestDuplicatesKeepsFitterRecord(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: -1})
	old := h.store("The release train leaves every second Thursday at four.", memory.StoreEpisodic)
	if _, err := h.e.DecayTick(context.Background(), &memory.DecayTickRequest{TickDurationSeconds: ptr(uint32(48 * 3600))}); err != nil {
		t.Fatal(err)
	}
	young := h.store("The release train leaves every second Thursday at four!", memory.StoreEpisodic)
	ns := h.e.defaultSpace()
	pool := []*memory.MemoryRecord{h.record(old), h.record(young)}
	got := h.e.duplicates(ns, pool, ns.clock(), func() bool { return false })
	if len(got) != 1 || got[0].keep.ID != young || got[0].drop.ID != old {
		t.Fatalf("pairs %+v: want the younger (fitter) record kept", got)
	}
}
