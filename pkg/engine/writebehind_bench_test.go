package engine

import (
	"context"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/cputime"
	"memsvc.dev/memsvc/pkg/engine/textindex"
	"memsvc.dev/memsvc/pkg/memory"
)

// BenchmarkRecallEffects measures what reconsolidation adds to a recall
// in a server that answers recalls back to back: text recalls over
// 10,000 generated text records with the audit log on, as a server runs
// by default, with reconsolidation ("reinforce") and without ("plain").
// cpu-µs/op is the process's CPU time per recall, the write-behind the
// recalls caused included (the flusher, the audit appender): each run
// ends by writing and logging what is pending. Compare the two rows; run
// at most 10,000 iterations (-benchtime 3000x).
func BenchmarkRecallEffects(b *testing.B) {
	e := benchAuditedEngineWith(b, Options{SimilarLinks: -1})
	ctx := context.Background()
	docs := textindex.NewCorpusGen(42)
	for done := 0; done < 10_000; done += 1000 {
		reqs := make([]memory.EncodeStoreRequest, 1000)
		for i := range reqs {
			st := memory.PersistentStores()[(done+i)%4]
			reqs[i] = memory.EncodeStoreRequest{Content: memory.TextContent(docs.Document()), Store: &st}
		}
		if _, err := e.EncodeBatch(ctx, &memory.EncodeBatchRequest{Records: reqs}); err != nil {
			b.Fatal(err)
		}
	}
	// Distinct queries, as many as the longest run makes, so that no
	// recall repeats an earlier one: the records two recalls share are
	// only those their different queries both find.
	queries := make([]string, 10_000)
	for i := range queries {
		queries[i] = docs.Query(1 + i%4)
	}
	settle := func(b *testing.B) {
		e.big.RLock()
		err := e.flushRecalls()
		e.big.RUnlock()
		if err == nil {
			err = e.syncAudit()
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	for _, reinforce := range []bool{true, false} {
		name := "plain"
		if reinforce {
			name = "reinforce"
		}
		b.Run(name, func(b *testing.B) {
			settle(b)
			d := make([]time.Duration, 0, b.N)
			cpu := cputime.Process()
			b.ResetTimer()
			for i := range b.N {
				req := memory.DefaultRecallQueryRequest()
				req.Reconsolidate = reinforce
				req.Cue.Text = &queries[i%len(queries)]
				t := time.Now()
				if _, err := e.RecallQuery(ctx, &req); err != nil {
					b.Fatal(err)
				}
				d = append(d, time.Since(t))
			}
			settle(b)
			b.StopTimer()
			b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N)/1e3, "cpu-µs/op")
			reportPercentiles(b, d)
		})
	}
}
