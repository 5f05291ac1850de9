package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// benchText is a memory of realistic length (~300 bytes).
var benchText = strings.Repeat("The deploy pipeline needs two approvals before production. ", 5)

func benchEngine(b *testing.B) *Engine {
	b.Helper()
	db, err := store.Open(b.TempDir(), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	e, err := Open(context.Background(), db, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close(); _ = db.Close() })
	return e
}

// BenchmarkEncodeStore measures one synced store (the write is durable when
// the call returns).
func BenchmarkEncodeStore(b *testing.B) {
	e := benchEngine(b)
	ctx := context.Background()
	req := &memory.EncodeStoreRequest{Content: memory.TextContent(benchText)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.EncodeStore(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeStoreParallel measures synced stores from concurrent
// clients, whose commits share disk syncs.
func BenchmarkEncodeStoreParallel(b *testing.B) {
	e := benchEngine(b)
	ctx := context.Background()
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		req := &memory.EncodeStoreRequest{Content: memory.TextContent(benchText)}
		for pb.Next() {
			if _, err := e.EncodeStore(ctx, req); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkEncodeBatch measures an atomic batch of 100 records with
// sequential association inference.
func BenchmarkEncodeBatch(b *testing.B) {
	e := benchEngine(b)
	ctx := context.Background()
	recs := make([]memory.EncodeStoreRequest, 100)
	for i := range recs {
		recs[i] = memory.EncodeStoreRequest{Content: memory.TextContent(fmt.Sprint(i, benchText))}
	}
	req := &memory.EncodeBatchRequest{Records: recs, InferAssociations: true}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.EncodeBatch(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
}

// BenchmarkEncodeBatchRaw measures a raw batch of 1,000 entries (the
// recorder's ingest path; the budget is 100 ms).
func BenchmarkEncodeBatchRaw(b *testing.B) {
	e := benchEngine(b)
	ctx := context.Background()
	recs := make([]memory.EncodeStoreRawRequest, 1000)
	for i := range recs {
		recs[i] = memory.DefaultEncodeStoreRawRequest()
		recs[i].SessionID = fmt.Sprint("session-", i/50)
		recs[i].Content = memory.TextContent(benchText)
	}
	req := &memory.EncodeBatchStoreRawRequest{Records: recs}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.EncodeBatchRaw(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// benchAuditedEngine is benchEngine with the audit log on, as a server
// runs by default.
func benchAuditedEngine(b *testing.B) *Engine {
	b.Helper()
	dir := b.TempDir()
	log, err := audit.Open(filepath.Join(dir, "audit.jsonl"), audit.Options{})
	if err != nil {
		b.Fatal(err)
	}
	db, err := store.Open(filepath.Join(dir, "data"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	e, err := Open(context.Background(), db, Options{Audit: log, SimilarLinks: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close(); _ = db.Close(); _ = log.Close() })
	return e
}

// BenchmarkAuditedStore measures synced stores with the audit log on, from
// one client and from 16 at once: concurrent commits share one sync of
// the data (group commit), so the 16-client rate (stores/s) should be a
// multiple of the single client's.
func BenchmarkAuditedStore(b *testing.B) {
	for _, clients := range []int{1, 16} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			e := benchAuditedEngine(b)
			ctx := context.Background()
			var n atomic.Int64
			n.Store(int64(b.N))
			var wg sync.WaitGroup
			b.ResetTimer()
			for c := 0; c < clients; c++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					req := &memory.EncodeStoreRequest{Content: memory.TextContent(fmt.Sprint(c, benchText))}
					for n.Add(-1) >= 0 {
						if _, err := e.EncodeStore(ctx, req); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "stores/s")
			b.ReportMetric(float64(e.aud.grouped.Load())/float64(e.aud.groups.Load()), "stores/sync")
		})
	}
}
