package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/engine/textindex"
	"memsvc.dev/memsvc/pkg/memory"
)

// BenchmarkCrowdRecall times 48 clients recalling at once, 25 recalls
// each, over 40,000 episodic records that share one vocabulary (audit log
// on), with reconsolidation (the default) and without, and reports the
// latency percentiles: the tail, not the mean, is what a crowd feels.
//
// The one-client run makes the same recalls one after another: its tail is
// the cost of the slowest queries themselves, which the crowd's tail can be
// compared with.
func BenchmarkCrowdRecall(b *testing.B) {
	for _, k := range []struct {
		reconsolidate bool
		clients       int
	}{{true, 48}, {false, 48}, {false, 1}} {
		name := fmt.Sprintf("reconsolidate/clients=%d", k.clients)
		if !k.reconsolidate {
			name = fmt.Sprintf("read-only/clients=%d", k.clients)
		}
		reconsolidate, clients := k.reconsolidate, k.clients
		b.Run(name, func(b *testing.B) {
			e := benchAuditedEngine(b)
			ctx := context.Background()
			docs := textindex.NewCorpusGen(6)
			storeTexts(b, e, 40_000, func(int) string { return docs.Document() })
			each := 48 * 25 / clients
			qs := make([]string, clients*each)
			for i := range qs {
				qs[i] = docs.Query(1 + i%3)
			}
			var all []time.Duration
			for b.Loop() {
				lat := make([][]time.Duration, clients)
				var wg sync.WaitGroup
				for c := range clients {
					wg.Go(func() {
						for i := range each {
							req := memory.DefaultRecallQueryRequest()
							req.Cue.Text = &qs[c*each+i]
							req.Reconsolidate = reconsolidate
							s := time.Now()
							if _, err := e.RecallQuery(ctx, &req); err != nil {
								b.Error(err)
								return
							}
							lat[c] = append(lat[c], time.Since(s))
						}
					})
				}
				wg.Wait()
				for _, l := range lat {
					all = append(all, l...)
				}
			}
			slices.Sort(all)
			if len(all) > 0 {
				b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
				b.ReportMetric(float64(all[len(all)-1].Microseconds())/1000, "max-ms")
			}
		})
	}
}
