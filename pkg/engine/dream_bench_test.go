package engine

import (
	"context"
	"fmt"
	"testing"

	"memsvc.dev/memsvc/pkg/engine/textindex"
	"memsvc.dev/memsvc/pkg/memory"
)

// BenchmarkDreamTick times a default dream tick (10 groups) over a backlog
// of 5,000 to 10,000 raw entries that arrived in bursts, sessions of 50
// turns, next to 1,000 curated records: no pause separates the entries,
// the case in which grouping cannot stop early. Each tick consumes 10
// sessions; more are added, off the clock, as the backlog shrinks.
func BenchmarkDreamTick(b *testing.B) {
	env := loadScale(b, 1000)
	ctx := context.Background()
	gen := textindex.NewCorpusGen(3)
	sessions := 0
	ingest := func(n int) {
		for range n {
			recs := make([]memory.EncodeStoreRawRequest, 50)
			for i := range recs {
				recs[i] = memory.EncodeStoreRawRequest{SessionID: fmt.Sprintf("session-%04d", sessions), Source: memory.SourceConversation,
					Speaker: memory.SpeakerUser, Visibility: memory.VisibilityNormal, SecrecyLevel: memory.SecrecyPublic,
					Content: memory.TextContent(fmt.Sprintf("%s (turn %d)", gen.Document(), i))}
			}
			if _, err := env.e.EncodeBatchRaw(ctx, &memory.EncodeBatchStoreRawRequest{Records: recs}); err != nil {
				b.Fatal(err)
			}
			sessions++
		}
	}
	ingest(200)
	pending := 200
	b.ResetTimer()
	for range b.N {
		if pending < 100 {
			// Keep the backlog between 10,000 and 5,000 entries.
			b.StopTimer()
			ingest(100)
			pending += 100
			b.StartTimer()
		}
		req := memory.DefaultDreamTickRequest()
		resp, err := env.e.DreamTick(ctx, &req)
		if err != nil {
			b.Fatal(err)
		}
		if resp.GroupsProcessed != 10 {
			b.Fatalf("%d groups processed, want 10", resp.GroupsProcessed)
		}
		pending -= 10
	}
}
