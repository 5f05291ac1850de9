package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/cputime"
	"memsvc.dev/memsvc/pkg/engine/searchindex"
	"memsvc.dev/memsvc/pkg/engine/textindex"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// The scale benchmarks load a generated corpus — textindex.CorpusGen text
// (English-like, Zipf-distributed words, about 40 words a record) and, for
// every record, a deterministic random 384-dimension embedding — into a
// fresh data directory, then measure. Run them with
//
//	go test -run '^$' -bench 'Scale$' -benchtime 200x -timeout 60m ./pkg/engine/
//	go test -run '^$' -bench ScaleStartup -benchtime 5x -timeout 60m ./pkg/engine/
//
// Latency percentiles are reported as p50-ms and p99-ms. The loading
// disables background similarity linking (a bulk load would otherwise
// queue a search per record).

const benchDims = 384

type scaleEnv struct {
	dir     string
	db      *store.DB
	e       *Engine
	queries []string
	vectors [][]float32
	load    time.Duration
	heap    float64 // bytes of live heap per record after loading
}

// recall runs the i-th of the environment's recalls without
// reconsolidation: by the text of query i, by vector i, by both (hybrid)
// or by neither (the most recent records).
func (env *scaleEnv) recall(b *testing.B, ctx context.Context, i int, text, vec bool) {
	req := memory.DefaultRecallQueryRequest()
	req.Reconsolidate = false
	if text {
		req.Cue.Text = &env.queries[i%len(env.queries)]
	}
	if vec {
		req.Cue.Embedding = env.vectors[i%len(env.vectors)]
	}
	if _, err := env.e.RecallQuery(ctx, &req); err != nil {
		b.Fatal(err)
	}
}

func loadScale(b *testing.B, n int) *scaleEnv {
	b.Helper()
	return loadScaleIn(b, context.Background(), n, 0)
}

// loadScaleIn loads n records into the namespace ctx names and, batch by
// batch between them, other records (from another generator) into a
// second namespace.
func loadScaleIn(b *testing.B, ctx context.Context, n, other int) *scaleEnv {
	b.Helper()
	return loadScaleWith(b, ctx, n, other, store.Options{}, true)
}

// loadScaleWith is loadScaleIn with the given store options (a
// passphrase) and index persistence.
func loadScaleWith(b *testing.B, ctx context.Context, n, other int, sopts store.Options, persist bool) *scaleEnv {
	b.Helper()
	env := &scaleEnv{dir: b.TempDir()}
	db, err := store.Open(env.dir, sopts)
	if err != nil {
		b.Fatal(err)
	}
	e, err := Open(context.Background(), db, Options{PersistIndexes: persist, SimilarLinks: -1})
	if err != nil {
		b.Fatal(err)
	}
	env.db, env.e = db, e
	gen := textindex.NewCorpusGen(42)
	rng := rand.New(rand.NewPCG(7, 9))
	vec := func() []float32 {
		v := make([]float32, benchDims)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	batch := func(ctx context.Context, gen *textindex.CorpusGen, vec func() []float32, k, from int) {
		recs := make([]memory.EncodeStoreRequest, k)
		for i := range recs {
			c := memory.TextContent(gen.Document())
			c.Blocks[0].Embedding = vec()
			st := memory.PersistentStores()[(from+i)%4]
			recs[i] = memory.EncodeStoreRequest{Content: c, Store: &st}
		}
		if _, err := e.EncodeBatch(ctx, &memory.EncodeBatchRequest{Records: recs}); err != nil {
			b.Fatal(err)
		}
	}
	otherCtx := memory.WithNamespace(context.Background(), "bench-other")
	otherGen, otherRng := textindex.NewCorpusGen(43), rand.New(rand.NewPCG(8, 10))
	otherVec := func() []float32 {
		v := make([]float32, benchDims)
		for i := range v {
			v[i] = float32(otherRng.NormFloat64())
		}
		return v
	}
	for done, otherDone := 0, 0; done < n || otherDone < other; {
		if done < n {
			k := min(1000, n-done)
			batch(ctx, gen, vec, k, done)
			done += k
		}
		// The other namespace's share of the records, in step.
		for want := other * done / max(n, 1); otherDone < other && (otherDone < want || done == n); {
			k := min(1000, other-otherDone)
			batch(otherCtx, otherGen, otherVec, k, otherDone)
			otherDone += k
		}
	}
	env.load = time.Since(start)
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	env.heap = float64(after.HeapInuse-before.HeapInuse) / float64(n+other)
	for i := 0; i < 200; i++ {
		env.queries = append(env.queries, gen.Query(1+i%4))
		env.vectors = append(env.vectors, vec())
	}
	b.Cleanup(func() {
		if env.e != nil {
			_ = env.e.Close()
			_ = env.db.Close()
		}
	})
	return env
}

// latencies runs op b.N times and reports its p50 and p99, and the
// process CPU time per op (background work included), which a busy
// machine inflates far less than the wall time.
func latencies(b *testing.B, op func(i int)) {
	b.Helper()
	d := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	cpu := cputime.Process()
	for i := 0; i < b.N; i++ {
		t := time.Now()
		op(i)
		d = append(d, time.Since(t))
	}
	if cpu > 0 {
		b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N)/1e3, "cpu-µs/op")
	}
	b.StopTimer()
	reportPercentiles(b, d)
}

func reportPercentiles(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	ms := func(p int) float64 { return float64(d[min(len(d)-1, len(d)*p/100)]) / 1e6 }
	b.ReportMetric(ms(50), "p50-ms")
	b.ReportMetric(ms(99), "p99-ms")
}

func BenchmarkScale(b *testing.B) {
	for _, n := range []int{2_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			env := loadScale(b, n)
			ctx := context.Background()
			b.Run("load", func(b *testing.B) {
				b.ReportMetric(float64(env.load)/float64(n)/1e3, "µs/record")
				b.ReportMetric(env.heap, "heap-bytes/record")
			})
			recall := func(text bool, vec bool) func(i int) {
				return func(i int) { env.recall(b, ctx, i, text, vec) }
			}
			b.Run("recall-text", func(b *testing.B) { latencies(b, recall(true, false)) })
			// The default: the recalled records are reinforced, a synced
			// write of ten records.
			b.Run("recall-text-reinforce", func(b *testing.B) {
				latencies(b, func(i int) {
					req := memory.DefaultRecallQueryRequest()
					req.Cue.Text = &env.queries[i%len(env.queries)]
					if _, err := env.e.RecallQuery(ctx, &req); err != nil {
						b.Fatal(err)
					}
				})
			})
			b.Run("recall-vector", func(b *testing.B) { latencies(b, recall(false, true)) })
			b.Run("recall-hybrid", func(b *testing.B) { latencies(b, recall(true, true)) })
			b.Run("recall-recent", func(b *testing.B) { latencies(b, recall(false, false)) })
			b.Run("raw-text-index-only", func(b *testing.B) {
				latencies(b, func(i int) {
					ix := env.e.defaultSpace().text
					if _, err := ix.Search(searchindex.Query{Terms: ix.QueryTerms(env.queries[i%len(env.queries)]), Limit: 50}); err != nil {
						b.Fatal(err)
					}
				})
			})
			// A store as a server makes it: synced, with similarity
			// linking on, which runs in the background after the store
			// returns (the next store competes with it for the CPU).
			storeReq := func(i int) *memory.EncodeStoreRequest {
				c := memory.TextContent(env.queries[i%len(env.queries)] + " stored for linking")
				c.Blocks[0].Embedding = env.vectors[i%len(env.vectors)]
				return &memory.EncodeStoreRequest{Content: c}
			}
			// With waitLinks, each store is timed with its linking, until
			// both are done; without, linking is waited for after the
			// last store, outside the timings.
			stores := func(b *testing.B, waitLinks bool) {
				env.e.opts.SimilarLinks = 3
				defer func() { env.e.opts.SimilarLinks = -1 }()
				syncLinks := func() {
					if err := env.e.syncLinks(ctx); err != nil {
						b.Fatal(err)
					}
				}
				latencies(b, func(i int) {
					if _, err := env.e.EncodeStore(ctx, storeReq(i)); err != nil {
						b.Fatal(err)
					}
					if waitLinks {
						syncLinks()
					}
				})
				syncLinks()
			}
			b.Run("store", func(b *testing.B) { stores(b, false) })
			b.Run("store-linked", func(b *testing.B) { stores(b, true) })
			b.Run("decay-tick", func(b *testing.B) {
				latencies(b, func(int) {
					if _, err := env.e.DecayTick(ctx, &memory.DecayTickRequest{TickDurationSeconds: ptr(uint32(3600))}); err != nil {
						b.Fatal(err)
					}
				})
			})
			// Request latency while decay ticks run back to back.
			duringTicks := func(b *testing.B, op func(i int)) {
				stop := make(chan struct{})
				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						if _, err := env.e.DecayTick(ctx, &memory.DecayTickRequest{TickDurationSeconds: ptr(uint32(60))}); err != nil {
							b.Error(err)
							return
						}
					}
				}()
				latencies(b, op)
				close(stop)
				wg.Wait()
			}
			b.Run("recall-during-ticks", func(b *testing.B) { duringTicks(b, recall(true, false)) })
			b.Run("store-during-ticks", func(b *testing.B) {
				duringTicks(b, func(i int) {
					if _, err := env.e.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: memory.TextContent(env.queries[i%len(env.queries)] + " stored while ticking")}); err != nil {
						b.Fatal(err)
					}
				})
			})
		})
	}
}

// BenchmarkScaleStartup measures opening a loaded data directory (engine
// open and close; the store stays open): loading the search indexes from
// the snapshot the previous close wrote, and building them from the
// records (what a start does without a usable snapshot, or with
// persistence off and no store encryption). Besides wall-time
// percentiles it reports the process CPU time per start, which a shared
// machine does not inflate.
func BenchmarkScaleStartup(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			env := loadScale(b, n)
			ctx := context.Background()
			_ = env.e.Close() // writes the snapshot
			start := func(b *testing.B, persist bool) {
				cpu := cputime.Process()
				latencies(b, func(int) {
					e, err := Open(ctx, env.db, Options{PersistIndexes: persist, SimilarLinks: -1})
					if err != nil {
						b.Fatal(err)
					}
					if loaded := e.defaultSpace().snap.saved.Load() != noSnapshot; loaded != persist {
						b.Fatalf("snapshot loaded %v with persistence %v", loaded, persist)
					}
					_ = e.Close()
				})
				b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N)/1e6, "cpu-ms/start")
			}
			b.Run("snapshot", func(b *testing.B) { start(b, true) })
			b.Run("rebuild", func(b *testing.B) { start(b, false) })
			env.e, _ = Open(ctx, env.db, Options{PersistIndexes: true, SimilarLinks: -1})
		})
	}
}

// BenchmarkScaleCommand measures what an embedded command of the CLI
// costs in process at 20,000 records: open the data directory (with store
// encryption, deriving the key from the passphrase), open the engine with
// the indexes persisted as the configuration's default says (yes without
// encryption, no with it), read one record, close. It reports the p50 of
// each and their ratio:
//
//	go test -run '^$' -bench ScaleCommand -benchtime 10x -timeout 60m ./pkg/engine/
func BenchmarkScaleCommand(b *testing.B) {
	const n = 20_000
	passphrase := []byte("correct horse battery staple")
	plain := loadScaleWith(b, context.Background(), n, 0, store.Options{}, true)
	sealed := loadScaleWith(b, context.Background(), n, 0, store.Options{Passphrase: passphrase}, false)
	ids := map[*scaleEnv]memory.ID{}
	for _, env := range []*scaleEnv{plain, sealed} {
		req := memory.DefaultRecallQueryRequest()
		req.Limit = 1
		resp, err := env.e.RecallQuery(context.Background(), &req)
		if err != nil || len(resp.Memories) != 1 {
			b.Fatalf("no record to read: %v", err)
		}
		ids[env] = resp.Memories[0].Record.ID
		_ = env.e.Close()
		_ = env.db.Close()
		env.e, env.db = nil, nil
	}
	command := func(env *scaleEnv, sopts store.Options, persist bool) time.Duration {
		ctx := context.Background()
		t := time.Now()
		db, err := store.Open(env.dir, sopts)
		if err != nil {
			b.Fatal(err)
		}
		e, err := Open(ctx, db, Options{PersistIndexes: persist, SimilarLinks: -1})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.Record(ctx, &memory.IntrospectRecordRequest{RecordID: ids[env]}); err != nil {
			b.Fatal(err)
		}
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		return time.Since(t)
	}
	var d [2][]time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d[0] = append(d[0], command(plain, store.Options{}, true))
		d[1] = append(d[1], command(sealed, store.Options{Passphrase: passphrase}, false))
	}
	b.StopTimer()
	p50 := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2]) / 1e6
	}
	a, s := p50(d[0]), p50(d[1])
	b.ReportMetric(a, "plain-p50-ms")
	b.ReportMetric(s, "encrypted-p50-ms")
	b.ReportMetric(s/a, "ratio")
}

// BenchmarkScaleNamespaces measures recall in a namespace of 10,000
// records in two stores: one that holds only those ("alone") and one that
// also holds 90,000 records of another namespace, loaded in step with them
// ("in-100k"). The measured namespace's records, queries and vectors are
// the same in both. Both stores are compacted after loading, so neither is
// measured while it digests the load, and each query runs on both stores
// in turn, so a busy machine slows both alike. It reports each store's p50
// and p99 and their ratio. Nothing on the recall path may scan or size by
// the other namespace, so the ratio should stay close to 1:
//
//	go test -run '^$' -bench ScaleNamespaces -benchtime 1000x -timeout 60m ./pkg/engine/
func BenchmarkScaleNamespaces(b *testing.B) {
	ctx := memory.WithNamespace(context.Background(), "bench")
	alone := loadScaleIn(b, ctx, 10_000, 0)
	among := loadScaleIn(b, ctx, 10_000, 90_000)
	for _, env := range []*scaleEnv{alone, among} {
		if err := env.db.Compact(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("load", func(b *testing.B) {
		for _, env := range []*scaleEnv{alone, among} {
			all, err := env.e.StatsAll(ctx)
			if err != nil {
				b.Fatal(err)
			}
			mine, err := env.e.Stats(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if mine.TotalRecords != 10_000 {
				b.Fatalf("the namespace holds %d records", mine.TotalRecords)
			}
			name := map[bool]string{true: "alone", false: "in-100k"}[env == alone]
			b.ReportMetric(float64(all.TotalRecords), name+"-store-records")
		}
	})
	for _, c := range []struct {
		name      string
		text, vec bool
	}{{"recall-text", true, false}, {"recall-vector", false, true}, {"recall-hybrid", true, true}, {"recall-recent", false, false}} {
		b.Run(c.name, func(b *testing.B) {
			var d [2][]time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for j, env := range []*scaleEnv{alone, among} {
					if i%2 == 1 {
						j, env = 1-j, []*scaleEnv{alone, among}[1-j] // alternate which store goes first
					}
					t := time.Now()
					env.recall(b, ctx, i, c.text, c.vec)
					d[j] = append(d[j], time.Since(t))
				}
			}
			b.StopTimer()
			p := func(d []time.Duration, q int) float64 {
				slices.Sort(d)
				return float64(d[min(len(d)-1, len(d)*q/100)]) / 1e6
			}
			for _, q := range []int{50, 99} {
				a, m := p(d[0], q), p(d[1], q)
				b.ReportMetric(a, fmt.Sprintf("alone-p%d-ms", q))
				b.ReportMetric(m, fmt.Sprintf("in-100k-p%d-ms", q))
				b.ReportMetric(m/a, fmt.Sprintf("ratio-p%d", q))
			}
		})
	}
}
