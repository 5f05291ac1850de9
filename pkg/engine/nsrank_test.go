package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/engine/textindex"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// TestRankingUnaffectedByOtherNamespaces: recall in a namespace ranks
// exactly as before (the same top 10, with the same scores) after 50,000
// records were stored in another namespace, records made to shift every
// statistic BM25 uses if they leaked in: each repeats a query's words, so
// document frequencies, the document count and the average length would
// all change.
func TestRankingUnaffectedByOtherNamespaces(t *testing.T) {
	db, err := store.OpenInMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	e, err := Open(context.Background(), db, Options{SimilarLinks: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	mine, other := memory.WithNamespace(context.Background(), "mine"), memory.WithNamespace(context.Background(), "other")

	gen := textindex.NewCorpusGen(11)
	rng := rand.New(rand.NewPCG(3, 5))
	vec := func() []float32 {
		return []float32{float32(rng.NormFloat64()), float32(rng.NormFloat64()), float32(rng.NormFloat64())}
	}
	load := func(ctx context.Context, n int, doc func(i int) string) {
		for done := 0; done < n; {
			k := min(1000, n-done)
			recs := make([]memory.EncodeStoreRequest, k)
			for i := range recs {
				c := memory.TextContent(doc(done + i))
				c.Blocks[0].Embedding = vec()
				st := memory.PersistentStores()[(done+i)%4]
				recs[i] = memory.EncodeStoreRequest{Content: c, Store: &st}
			}
			must(e.EncodeBatch(ctx, &memory.EncodeBatchRequest{Records: recs}))(t)
			done += k
		}
	}
	load(mine, 2000, func(int) string { return gen.Document() })
	var queries []string
	for i := range 20 {
		queries = append(queries, gen.Query(1+i%3))
	}
	cues := make([][]float32, len(queries))
	for i := range cues {
		cues[i] = vec()
	}

	// top10 is every recall's answer (text, vector and both) as ids with
	// their scores, in order.
	top10 := func(ctx context.Context) []string {
		var out []string
		for i, q := range queries {
			for _, mode := range []string{"text", "vector", "hybrid"} {
				req := memory.DefaultRecallQueryRequest()
				req.Reconsolidate = false
				if mode != "vector" {
					req.Cue.Text = &q
				}
				if mode != "text" {
					req.Cue.Embedding = cues[i]
				}
				resp := must(e.RecallQuery(ctx, &req))(t)
				var line []string
				for _, m := range resp.Memories {
					line = append(line, fmt.Sprintf("%s %v", m.Record.ID, m.RelevanceScore))
				}
				out = append(out, mode+" "+q+": "+strings.Join(line, ", "))
			}
		}
		return out
	}
	before := top10(mine)
	found := 0
	for _, l := range before {
		found += strings.Count(l, ",") + 1
	}
	if found < 10*len(before)/2 {
		t.Fatalf("the queries find too little to compare (%d results over %d recalls)", found, len(before))
	}

	load(other, 50_000, func(i int) string {
		return gen.Document() + " " + queries[i%len(queries)] + " " + queries[(i+1)%len(queries)]
	})
	after := top10(mine)
	for i := range before {
		if before[i] != after[i] {
			t.Errorf("ranking changed by the other namespace:\nbefore %s\nafter  %s", before[i], after[i])
		}
	}
	if s := must(e.Stats(mine))(t); s.TotalRecords != 2000 {
		t.Errorf("mine counts %d records", s.TotalRecords)
	}
}
