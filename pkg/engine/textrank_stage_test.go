package engine

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/engine/rank"
	"memsvc.dev/memsvc/pkg/engine/searchindex"
	"memsvc.dev/memsvc/pkg/memory"
)

// TestSecondStageMatchesReference ranks random queries over random
// corpora of conversations with random settings and filters, and checks
// that the second stage gives what it gave with maps and
// rank.SmoothNeighbours (rankAdmittedReference): the same records in the
// same order with bit-identical scores.
func TestSecondStageMatchesReference(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { testSecondStage(t, seed) })
	}
}

func testSecondStage(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 99))
	h := newHarness(t, Options{ArchiveKDF: testKDF, SimilarLinks: -1})
	ctx := context.Background()
	vocab := strings.Fields("when did alice visit paris kettle garden river lamp budget violin tunnel pepper orbit deploy " +
		"rollback meeting friday march birthday dinner concert trip guitar lesson")
	speakers := []string{"", "alice", "bob"}
	dates := []string{"", "1 May 2023", "8 May 2023", "3 June 2023"}
	sentence := func() string {
		var b strings.Builder
		for i := range 2 + rng.IntN(12) {
			if i > 0 {
				b.WriteString(" ")
			}
			b.WriteString(vocab[rng.IntN(len(vocab))])
		}
		return b.String()
	}
	for s := range 40 + rng.IntN(40) {
		h.clock.Advance(1)
		req := memory.EncodeBatchRequest{InferAssociations: rng.IntN(4) == 0}
		session := fmt.Sprint("s", s)
		for range 1 + rng.IntN(8) {
			kv := []string{}
			if rng.IntN(5) > 0 {
				kv = append(kv, "session", `"`+session+`"`)
			}
			if d := dates[rng.IntN(len(dates))]; d != "" {
				kv = append(kv, "session_date", `"`+d+`"`)
			}
			if sp := speakers[rng.IntN(len(speakers))]; sp != "" {
				kv = append(kv, "speaker", `"`+sp+`"`)
			}
			st := memory.PersistentStores()[rng.IntN(4)]
			req.Records = append(req.Records, memory.EncodeStoreRequest{Content: memory.TextContent(sentence()), Metadata: md(kv...), Store: &st})
		}
		if _, err := h.e.EncodeBatch(ctx, &req); err != nil {
			t.Fatal(err)
		}
	}
	ns := h.e.defaultSpace()
	h.e.mu.RLock()
	defer h.e.mu.RUnlock()
	base := recommendedTextRanking()
	for qn := range 300 {
		r := base
		switch rng.IntN(4) {
		case 0:
			r.Candidates = []int{0, 1, 3, 30}[rng.IntN(4)]
		case 1:
			r.Context = rank.Context{Before: rng.Float64(), After: rng.Float64()}
			r.Proximity = 2 * rng.Float64()
		case 2:
			r.Context = rank.Context{}
		}
		if rng.IntN(3) == 0 {
			r.Time, r.Speaker = rng.Float64(), rng.Float64()
		}
		q := ""
		for i := range 1 + rng.IntN(4) {
			if i > 0 {
				q += " "
			}
			q += vocab[rng.IntN(len(vocab))]
		}
		if rng.IntN(4) == 0 {
			q += " on " + dates[1+rng.IntN(3)]
		}
		k := 1 + rng.IntN(60)
		hide := rng.IntN(4) // hides about a quarter of the records when not 0
		eligibleID := func(id memory.ID) bool { return hide == 0 || (id[15]+byte(hide))%4 != 0 }
		admit := func(c searchindex.Candidate) bool { return eligibleID(c.ID()) }
		var seq rank.Sequence[memory.ID] = conversation{ns.st}
		if rng.IntN(4) == 0 {
			seq = hiddenPlaces{conversation{ns.st}}
		}
		want, werr := r.rankAdmittedReference(ns.text, h.e.function, seq, q, k, eligibleID, admit)
		got, gerr := r.rankAdmitted(ns.text, h.e.function, seq, q, k, eligibleID, admit)
		if werr != nil || gerr != nil {
			t.Fatalf("query %d %q: %v, %v", qn, q, gerr, werr)
		}
		if len(got) != len(want) {
			t.Fatalf("query %d %q (%+v, k %d): %d hits, want %d", qn, q, r, k, len(got), len(want))
		}
		for i := range got {
			if got[i].Doc != want[i].Doc || math.Float64bits(got[i].Score) != math.Float64bits(want[i].Score) {
				t.Fatalf("query %d %q (%+v, k %d): hit %d is %s %v, want %s %v", qn, q, r, k, i, got[i].Doc, got[i].Score, want[i].Doc, want[i].Score)
			}
		}
	}
}
