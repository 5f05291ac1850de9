package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/cputime"
	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/engine/textindex"
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
	return benchAuditedEngineWith(b, Options{SimilarLinks: -1})
}

// benchAuditedEngineWith opens an engine with opts and the audit log on.
func benchAuditedEngineWith(b *testing.B, opts Options) *Engine {
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
	opts.Audit = log
	e, err := Open(context.Background(), db, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close(); _ = db.Close(); _ = log.Close() })
	return e
}

// BenchmarkAuditedStore measures synced stores with the audit log on, from
// one client and from 16 at once: concurrent commits share one sync of
// the data (group commit), so the 16-client rate should be a multiple of
// the single client's. Each iteration runs both phases, 256 stores each,
// one after the other, so that a change in the machine's load hits both
// alike; the rates (stores/s) and their ratio are reported.
func BenchmarkAuditedStore(b *testing.B) {
	e := benchAuditedEngine(b)
	ctx := context.Background()
	const perPhase = 256
	phase := func(clients int) time.Duration {
		start := time.Now()
		var wg sync.WaitGroup
		for c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req := &memory.EncodeStoreRequest{Content: memory.TextContent(fmt.Sprint(c, benchText))}
				for range perPhase / clients {
					if _, err := e.EncodeStore(ctx, req); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		return time.Since(start)
	}
	var one, sixteen time.Duration
	var groups, grouped uint64 // group commits of the 16-client phases
	for b.Loop() {
		one += phase(1)
		g, m := e.aud.groups.Load(), e.aud.grouped.Load()
		sixteen += phase(16)
		groups += e.aud.groups.Load() - g
		grouped += e.aud.grouped.Load() - m
	}
	n := float64(b.N * perPhase)
	b.ReportMetric(n/one.Seconds(), "stores/s-1client")
	b.ReportMetric(n/sixteen.Seconds(), "stores/s-16clients")
	b.ReportMetric(one.Seconds()/sixteen.Seconds(), "x")
	b.ReportMetric(float64(grouped)/float64(groups), "stores/sync-16clients")
}

// BenchmarkRecallReconsolidate measures a text recall of 5 records with
// reconsolidation (the default) over 2,000 records, audit log on: its
// effects are written behind, so the recall does not wait for a sync.
func BenchmarkRecallReconsolidate(b *testing.B) {
	e := benchAuditedEngine(b)
	ctx := context.Background()
	for i := range 2000 {
		req := &memory.EncodeStoreRequest{Content: memory.TextContent(fmt.Sprintf("%s note %d about topic%d", benchText, i, i%50))}
		if _, err := e.EncodeStore(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	i := 0
	for b.Loop() {
		text := fmt.Sprintf("topic%d pipeline", i%50)
		i++
		req := &memory.RecallQueryRequest{Cue: memory.RecallCue{Text: &text}, Stores: memory.PersistentStores(), Limit: 5, Reconsolidate: true}
		if _, err := e.RecallQuery(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// storeTexts stores n episodic records in batches, record i with text(i).
func storeTexts(b *testing.B, e *Engine, n int, text func(i int) string) {
	b.Helper()
	for i := 0; i < n; {
		var reqs []memory.EncodeStoreRequest
		for ; i < n && len(reqs) < 500; i++ {
			reqs = append(reqs, memory.EncodeStoreRequest{Content: memory.TextContent(text(i))})
		}
		if _, err := e.EncodeBatch(context.Background(), &memory.EncodeBatchRequest{Records: reqs}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConsolidateFull times a full consolidation of 4,000 episodic
// records (text only, none near-duplicates), audit log on: the copies are
// committed in chunks, and the near-duplicate search is indexed.
func BenchmarkConsolidateFull(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		e := benchAuditedEngine(b)
		ctx := context.Background()
		const n = 4000
		storeTexts(b, e, n, func(i int) string {
			return fmt.Sprintf("record %d talks about w%d and w%d and w%d with more words here", i, i%97, i%89, i)
		})
		b.StartTimer()
		resp, err := e.Consolidate(ctx, &memory.ConsolidateRequest{Strategy: memory.ConsolidateFull})
		if err != nil {
			b.Fatal(err)
		}
		if resp.SemanticNodesCreated != n {
			b.Fatalf("%d copies, want %d", resp.SemanticNodesCreated, n)
		}
	}
}

// BenchmarkConsolidateWhileRecalling times a full consolidation of
// 40,000 episodic records (generated documents, audit log on) while one client
// recalls in a loop, and reports the recalls' latencies: the
// consolidation holds the engine one chunk at a time.
func BenchmarkConsolidateWhileRecalling(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		e := benchAuditedEngine(b)
		ctx := context.Background()
		const n = 40_000
		docs := textindex.NewCorpusGen(5)
		storeTexts(b, e, n, func(int) string { return docs.Document() })
		b.StartTimer()
		done := make(chan error, 1)
		go func() {
			_, err := e.Consolidate(ctx, &memory.ConsolidateRequest{Strategy: memory.ConsolidateFull})
			done <- err
		}()
		var lat []time.Duration
	recall:
		for i := 0; ; i++ {
			select {
			case err := <-done:
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				slices.Sort(lat)
				if len(lat) > 0 {
					b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "recall-p99-ms")
					b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "recall-max-ms")
				}
				b.ReportMetric(float64(len(lat)), "recalls")
				b.StartTimer()
				break recall
			default:
			}
			text := docs.Query(1 + i%3)
			req := &memory.RecallQueryRequest{Cue: memory.RecallCue{Text: &text}, Stores: memory.PersistentStores(), Limit: 10, Reconsolidate: true}
			s := time.Now()
			if _, err := e.RecallQuery(ctx, req); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(s))
		}
	}
}

// BenchmarkLinkRecord measures the similarity linking of one record (the
// background linker's work for each stored record) over 2,000 generated
// documents, with every link already in place, so an iteration is the
// search for similar records and nothing is written. It reports the
// process's CPU time per link too, which a busy machine disturbs less
// than the wall time.
func BenchmarkLinkRecord(b *testing.B) {
	e := benchAuditedEngine(b)
	e.opts.SimilarLinks = 3 // benchAuditedEngine turns the background linker off
	ctx := context.Background()
	docs := textindex.NewCorpusGen(7)
	var ids []memory.ID
	for range 4 {
		reqs := make([]memory.EncodeStoreRequest, 500)
		for i := range reqs {
			reqs[i] = memory.EncodeStoreRequest{Content: memory.TextContent(docs.Document())}
		}
		resp, err := e.EncodeBatch(ctx, &memory.EncodeBatchRequest{Records: reqs})
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range resp.Results {
			ids = append(ids, r.RecordID)
		}
	}
	ns := e.space(ctx)
	for _, id := range ids {
		if err := e.linkRecord(ns, id); err != nil {
			b.Fatal(err)
		}
	}
	i := 0
	b.ReportAllocs()
	cpu := cputime.Process()
	for b.Loop() {
		if err := e.linkRecord(ns, ids[i%len(ids)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N)/1e3, "cpu-µs/op")
}

// BenchmarkLinkedStores measures what a server spends on synced stores
// from 16 clients at once with the audit log and the similarity linker
// on, as it runs by default, over 2,000 generated documents: each
// iteration stores 400 more and waits for the linker to link them. It
// reports the process's CPU time per store (the bound when the clients
// share two cores with the server) as well as the rate.
func BenchmarkLinkedStores(b *testing.B) {
	e := benchAuditedEngineWith(b, Options{})
	ctx := context.Background()
	docs := textindex.NewCorpusGen(9)
	next := func(n int) []memory.EncodeStoreRequest {
		reqs := make([]memory.EncodeStoreRequest, n)
		for i := range reqs {
			reqs[i] = memory.EncodeStoreRequest{Content: memory.TextContent(docs.Document())}
		}
		return reqs
	}
	for range 4 {
		if _, err := e.EncodeBatch(ctx, &memory.EncodeBatchRequest{Records: next(500)}); err != nil {
			b.Fatal(err)
		}
	}
	if err := e.syncLinks(ctx); err != nil {
		b.Fatal(err)
	}
	const clients, each = 16, 25
	var cpu, wall time.Duration
	for b.Loop() {
		b.StopTimer()
		reqs := next(clients * each)
		b.StartTimer()
		c0, t0 := cputime.Process(), time.Now()
		var wg sync.WaitGroup
		for c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					if _, err := e.EncodeStore(ctx, &reqs[c*each+i]); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		if err := e.syncLinks(ctx); err != nil {
			b.Fatal(err)
		}
		cpu += cputime.Process() - c0
		wall += time.Since(t0)
	}
	n := float64(b.N * clients * each)
	b.ReportMetric(float64(cpu.Microseconds())/n, "cpu-µs/store")
	b.ReportMetric(n/wall.Seconds(), "stores/s")
}
