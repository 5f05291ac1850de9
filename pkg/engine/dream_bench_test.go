package engine

import (
	"context"
	"fmt"
	"testing"

	"memsvc.dev/memsvc/pkg/engine/textindex"
	"memsvc.dev/memsvc/pkg/memory"
)

// BenchmarkDreamTick times a default dream tick (10 groups) over a backlog
// of 10,000 raw entries that arrived in one burst, 200 sessions of 50
// turns, next to 1,000 curated records: every entry is pending and no
// pause separates them, the case in which grouping cannot stop early. Run
// it with a fixed count (-benchtime 5x): each tick consumes 10 sessions.
func BenchmarkDreamTick(b *testing.B) {
	env := loadScale(b, 1000)
	ctx := context.Background()
	gen := textindex.NewCorpusGen(3)
	for s := range 200 {
		recs := make([]memory.EncodeStoreRawRequest, 50)
		for i := range recs {
			recs[i] = memory.EncodeStoreRawRequest{SessionID: fmt.Sprintf("session-%03d", s), Source: memory.SourceConversation,
				Speaker: memory.SpeakerUser, Visibility: memory.VisibilityNormal, SecrecyLevel: memory.SecrecyPublic,
				Content: memory.TextContent(fmt.Sprintf("%s (turn %d)", gen.Document(), i))}
		}
		if _, err := env.e.EncodeBatchRaw(ctx, &memory.EncodeBatchStoreRawRequest{Records: recs}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		req := memory.DefaultDreamTickRequest()
		resp, err := env.e.DreamTick(ctx, &req)
		if err != nil {
			b.Fatal(err)
		}
		if resp.GroupsProcessed != 10 {
			b.Fatalf("%d groups processed, want 10", resp.GroupsProcessed)
		}
	}
}
