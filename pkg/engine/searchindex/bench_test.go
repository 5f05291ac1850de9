package searchindex_test

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/cputime"
	"memsvc.dev/memsvc/pkg/engine/searchindex"
	"memsvc.dev/memsvc/pkg/engine/textindex"
	"memsvc.dev/memsvc/pkg/memory"
)

// Benchmarks on CorpusGen corpora (textindex/corpus.go): English-like
// documents of about 40 words with a Zipf vocabulary; queries are drawn
// from the same distribution. See the package comment for the figures
// and the commands.

const benchSeed = 42

func benchID(i int) memory.ID {
	var id memory.ID
	binary.BigEndian.PutUint64(id[:8], 0x0190_0000_0000_7000+uint64(i)<<16)
	binary.BigEndian.PutUint64(id[8:], 0x8000_0000_0000_0000|uint64(i)*0x9e3779b97f4a7c15>>2)
	return id
}

// benchConfig has one field (content) or three: content, a short meta
// text and a date field.
func benchConfig(fields int) searchindex.Config {
	an := textindex.NewAnalyzer()
	cfg := searchindex.Config{Analyzer: an, AnalyzerVersion: an.Version(), Fields: []searchindex.Field{{Name: "content", Weight: 1, B: 0.75}}}
	if fields == 3 {
		cfg.Fields = append(cfg.Fields, searchindex.Field{Name: "meta", Weight: 0.5, B: 0.5}, searchindex.Field{Name: "time", Weight: 0.3, B: 0})
	}
	return cfg
}

var months = [...]string{"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"}

func benchDoc(i int, text string, fields int) *searchindex.Document {
	d := &searchindex.Document{ID: benchID(i), Attrs: searchindex.Attrs{Tag: uint32(i % 5), Time: int64(i)}}
	d.Fields[0] = []string{text}
	if fields == 3 {
		if i%4 == 0 {
			d.Fields[1] = []string{text[:min(len(text), 60)]}
		}
		d.Fields[2] = []string{fmt.Sprintf("%d %s %d-%02d-%02d", 2023+i%3, months[i%12], 2023+i%3, 1+i%12, 1+i%28)}
	}
	return d
}

func buildNew(tb testing.TB, docs []string, fields int) *searchindex.Index {
	tb.Helper()
	ix, err := searchindex.Build(benchConfig(fields), func(add searchindex.AddFunc) error {
		for i, text := range docs {
			if err := add(benchDoc(i, text, fields)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return ix
}

func benchQueries(terms int) []string {
	g := textindex.NewCorpusGen(benchSeed + 1)
	qs := make([]string, 512)
	for i := range qs {
		qs[i] = g.Query(terms)
	}
	return qs
}

func corpus(n int) []string { return textindex.Corpus(benchSeed, n) }

// reportCPU reports the process CPU time per operation since since (all
// threads, including the garbage collector's).
func reportCPU(b *testing.B, since time.Duration) {
	if since > 0 {
		b.ReportMetric(float64(cputime.Process()-since)/float64(b.N)/1e6, "cpu-ms/op")
	}
}

func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
}

// BenchmarkSearch measures top 30 for queries of 1, 3 and 6 terms over
// one field and over three.
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		docs := corpus(n)
		for _, impl := range []string{"mem", "mem3"} {
			var search func(q string) (int, error)
			built := false
			build := func() {
				if built {
					return
				}
				built = true
				fields := 1
				if impl == "mem3" {
					fields = 3
				}
				ix := buildNew(b, docs, fields)
				search = func(q string) (int, error) {
					hits, err := ix.Search(searchindex.Query{Terms: ix.QueryTerms(q), Limit: 30})
					return len(hits), err
				}
			}
			for _, terms := range []int{1, 3, 6} {
				b.Run(fmt.Sprintf("docs=%d/impl=%s/terms=%d", n, impl, terms), func(b *testing.B) {
					build()
					queries := benchQueries(terms)
					for _, q := range queries { // warm caches
						if _, err := search(q); err != nil {
							b.Fatal(err)
						}
					}
					lat := make([]time.Duration, 0, 1024)
					i := 0
					cpu := cputime.Process()
					for b.Loop() {
						start := time.Now()
						if _, err := search(queries[i%len(queries)]); err != nil {
							b.Fatal(err)
						}
						lat = append(lat, time.Since(start))
						i++
					}
					if cpu > 0 {
						b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N)/1e3, "cpu-µs/op")
					}
					reportLatency(b, lat)
				})
			}
		}
	}
}

// heapInUse returns the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkBuild measures bulk building (analysis on every CPU) and the
// live heap the index takes per document.
func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		docs := corpus(n)
		for _, impl := range []string{"mem", "mem3"} {
			b.Run(fmt.Sprintf("docs=%d/impl=%s", n, impl), func(b *testing.B) {
				var heap uint64
				cpu := cputime.Process()
				for b.Loop() {
					before := heapInUse()
					fields := 1
					if impl == "mem3" {
						fields = 3
					}
					keep := buildNew(b, docs, fields)
					b.StopTimer()
					heap = heapInUse() - before
					runtime.KeepAlive(keep)
					b.StartTimer()
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
				b.ReportMetric(float64(heap)/float64(n), "heap-B/doc")
				reportCPU(b, cpu)
			})
		}
	}
}

// BenchmarkSnapshot measures writing and loading a snapshot.
func BenchmarkSnapshot(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		docs := corpus(n)
		for _, fields := range []int{1, 3} {
			ix := buildNew(b, docs, fields)
			data := ix.Snapshot().AppendTo(nil, nil)
			b.Run(fmt.Sprintf("docs=%d/fields=%d/op=write", n, fields), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				buf := make([]byte, 0, len(data))
				cpu := cputime.Process()
				for b.Loop() {
					buf = ix.Snapshot().AppendTo(buf[:0], nil)
				}
				reportCPU(b, cpu)
				b.ReportMetric(float64(len(data))/float64(n), "B/doc")
			})
			b.Run(fmt.Sprintf("docs=%d/fields=%d/op=load", n, fields), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				cpu := cputime.Process()
				for b.Loop() {
					if _, _, err := searchindex.LoadSnapshot(benchConfig(fields), data); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, cpu)
			})
		}
	}
}

// BenchmarkConcurrent runs 48 searchers over 40,000 documents while one
// writer adds a document and deletes an old one in a loop (yielding
// between writes like the searchers): search throughput, search latency
// and the writer's rate.
func BenchmarkConcurrent(b *testing.B) {
	const n, searchers = 40_000, 48
	docs := corpus(n)
	extra := textindex.Corpus(benchSeed+7, 2000)
	queries := benchQueries(3)
	b.Run("impl=mem", func(b *testing.B) {
		ix := buildNew(b, docs, 1)
		search := func(q string) error {
			_, err := ix.Search(searchindex.Query{Terms: ix.QueryTerms(q), Limit: 30})
			return err
		}
		write := func(i int) error {
			if err := ix.Add(benchDoc(n+i, extra[i%len(extra)], 1)); err != nil {
				return err
			}
			ix.Delete(benchID(i))
			return nil
		}
		var (
			next    atomic.Int64
			stop    atomic.Bool
			writes  int
			wg      sync.WaitGroup
			lats    = make([][]time.Duration, searchers)
			failure atomic.Value
		)
		b.ResetTimer()
		start := time.Now()
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				if err := write(i); err != nil {
					failure.Store(err)
					return
				}
				writes++
				runtime.Gosched()
			}
		})
		var sg sync.WaitGroup
		for s := range searchers {
			sg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(s), 1))
				for next.Add(1) <= int64(b.N) {
					q := queries[r.IntN(len(queries))]
					t0 := time.Now()
					if err := search(q); err != nil {
						failure.Store(err)
						return
					}
					lats[s] = append(lats[s], time.Since(t0))
					// A client waits for its answer and sends the next
					// request: yield, as a handler blocked on the network
					// would, or one goroutine keeps the CPU for a whole
					// scheduler time slice (10 ms) and the latencies
					// measure the scheduler rather than the index.
					runtime.Gosched()
				}
			})
		}
		sg.Wait()
		elapsed := time.Since(start)
		stop.Store(true)
		wg.Wait()
		b.StopTimer()
		if err, _ := failure.Load().(error); err != nil {
			b.Fatal(err)
		}
		var all []time.Duration
		for _, l := range lats {
			all = append(all, l...)
		}
		reportLatency(b, all)
		b.ReportMetric(float64(len(all))/elapsed.Seconds(), "searches/s")
		b.ReportMetric(float64(writes)/elapsed.Seconds(), "writes/s")
	})
}
