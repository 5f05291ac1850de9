package server

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"memsvc.dev/memsvc/internal/cputime"
	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/memory"
)

// BenchmarkRecallQueue measures the recall queue's own cost per recall
// (two slots, a service that answers at once): from one goroutine, when
// a slot is always free, and from 48 at once, when most wait their turn
// and each release hands a slot to a waiting goroutine. cpu-ns/op is the
// process's CPU time per recall.
func BenchmarkRecallQueue(b *testing.B) {
	text := "queued"
	req := &memory.RecallQueryRequest{Cue: memory.RecallCue{Text: &text}}
	for _, clients := range []int{1, 48} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			q := queueRecalls(testkit.CannedRecall{Answer: &memory.RecallQueryResponse{}}, 2)
			ctx := context.Background()
			per := b.N/clients + 1
			var wg sync.WaitGroup
			cpu := cputime.Process()
			b.ResetTimer()
			for range clients {
				wg.Go(func() {
					for range per {
						if _, err := q.RecallQuery(ctx, req); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(cputime.Process()-cpu)/float64(per*clients), "cpu-ns/op")
		})
	}
}
