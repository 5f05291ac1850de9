package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/cputime"
	"memsvc.dev/memsvc/pkg/engine/textindex"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// BenchmarkScaleVector measures recall by embedding, alone and with text
// (hybrid), at 20,000 records with embeddings of 64 and of 384 dimensions:
// the sizes the HTTP targets name. Besides the wall-time percentiles it
// reports the process CPU time per recall, which other work on a shared
// machine does not inflate:
//
//	go test -run '^$' -bench ScaleVector -benchtime 400x -count 6 -timeout 60m ./pkg/engine/
func BenchmarkScaleVector(b *testing.B) {
	const n = 20_000
	for _, dims := range []int{64, 384} {
		b.Run(fmt.Sprintf("n=%d/dims=%d", n, dims), func(b *testing.B) {
			env := loadVectors(b, n, dims)
			ctx := context.Background()
			for _, c := range []struct {
				name      string
				text, vec bool
			}{{"recall-vector", false, true}, {"recall-hybrid", true, true}} {
				b.Run(c.name, func(b *testing.B) {
					cpu := cputime.Process()
					latencies(b, func(i int) { env.recall(b, ctx, i, c.text, c.vec) })
					b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N)/1e3, "cpu-µs/op")
				})
			}
		})
	}
}

// loadVectors loads n records of generated text, each with a random
// embedding of dims dimensions, into a fresh data directory, and keeps
// 200 text queries and query vectors.
func loadVectors(b *testing.B, n, dims int) *scaleEnv {
	b.Helper()
	env := &scaleEnv{dir: b.TempDir()}
	db, err := store.Open(env.dir, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	e, err := Open(context.Background(), db, Options{SimilarLinks: -1})
	if err != nil {
		_ = db.Close()
		b.Fatal(err)
	}
	env.db, env.e = db, e
	b.Cleanup(func() {
		_ = env.e.Close()
		_ = env.db.Close()
	})
	gen := textindex.NewCorpusGen(42)
	rng := rand.New(rand.NewPCG(7, uint64(dims)))
	vec := func() []float32 {
		v := make([]float32, dims)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	start := time.Now()
	for done := 0; done < n; {
		recs := make([]memory.EncodeStoreRequest, min(1000, n-done))
		for i := range recs {
			c := memory.TextContent(gen.Document())
			c.Blocks[0].Embedding = vec()
			st := memory.PersistentStores()[(done+i)%4]
			recs[i] = memory.EncodeStoreRequest{Content: c, Store: &st}
		}
		if _, err := e.EncodeBatch(context.Background(), &memory.EncodeBatchRequest{Records: recs}); err != nil {
			b.Fatal(err)
		}
		done += len(recs)
	}
	env.load = time.Since(start)
	// Settle the store, so that its background compactions do not count
	// in the first recalls' CPU time.
	if err := db.Compact(context.Background()); err != nil {
		b.Fatal(err)
	}
	for i := range 200 {
		env.queries = append(env.queries, gen.Query(1+i%4))
		env.vectors = append(env.vectors, vec())
	}
	return env
}
