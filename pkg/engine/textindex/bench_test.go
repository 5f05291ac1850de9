package textindex

import (
	"encoding/binary"
	"fmt"
	"slices"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// Benchmarks run on corpora from CorpusGen (see corpus.go): deterministic
// English-like documents of about 40 words with a Zipf vocabulary. Queries
// are drawn from the same distribution, so they often contain frequent
// words; the p99 numbers are the cost of those.
//
//	go test -run '^$' -bench . -benchtime 1x ./pkg/engine/textindex/   (build)
//	go test -run '^$' -bench Search ./pkg/engine/textindex/

const benchSeed = 42

// benchID is the id of the i-th benchmark document: increasing, like the
// version 7 ids of the engine.
func benchID(i int) memory.ID {
	var id memory.ID
	binary.BigEndian.PutUint64(id[:8], 0x0190_0000_0000_7000+uint64(i)<<16)
	binary.BigEndian.PutUint64(id[8:], 0x8000_0000_0000_0000|uint64(i)*0x9e3779b97f4a7c15>>2)
	return id
}

func buildIndex(tb testing.TB, db *store.DB, docs []string) *Index {
	tb.Helper()
	ix, err := Rebuild(db, []byte("xt"), func(add AddFunc) error {
		for i, d := range docs {
			if err := add(benchID(i), []byte{byte(i % 5)}, d); err != nil {
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

func openMem(tb testing.TB) *store.DB {
	tb.Helper()
	db, err := store.OpenInMemory()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

func BenchmarkTokenize(b *testing.B) {
	docs := Corpus(benchSeed, 1000)
	var n int64
	for _, d := range docs {
		n += int64(len(d))
	}
	b.SetBytes(n / int64(len(docs)))
	i := 0
	for b.Loop() {
		Tokenize(docs[i%len(docs)])
		i++
	}
}

// BenchmarkRebuild measures building an index from scratch (the engine's
// start-up rebuild of an in-memory index).
func BenchmarkRebuild(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			docs := Corpus(benchSeed, n)
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				db := openMem(b)
				b.StartTimer()
				buildIndex(b, db, docs)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
		})
	}
}

// BenchmarkPut measures indexing one document per synced batch, as the
// engine does on store.
func BenchmarkPut(b *testing.B) {
	docs := Corpus(benchSeed, 10_000)
	db := openMem(b)
	ix := buildIndex(b, db, nil)
	i := 0
	for b.Loop() {
		batch := db.NewBatch()
		c, err := ix.Put(batch, benchID(i%len(docs)), []byte{1}, docs[i%len(docs)])
		if err != nil {
			b.Fatal(err)
		}
		if err := batch.Commit(); err != nil {
			b.Fatal(err)
		}
		batch.Close()
		ix.Apply(c)
		i++
	}
}

// putIndex builds an index the way a server fills it over time: one Put
// per document, 100 documents per committed batch.
func putIndex(tb testing.TB, db *store.DB, docs []string) *Index {
	tb.Helper()
	ix, err := Rebuild(db, []byte("xt"), func(AddFunc) error { return nil })
	if err != nil {
		tb.Fatal(err)
	}
	for start := 0; start < len(docs); start += 100 {
		batch := db.NewBatch()
		var c Change
		for i := start; i < min(start+100, len(docs)); i++ {
			ci, err := ix.Put(batch, benchID(i), []byte{byte(i % 5)}, docs[i])
			if err != nil {
				tb.Fatal(err)
			}
			c = c.Merge(ci)
		}
		if err := batch.CommitNoSync(); err != nil {
			tb.Fatal(err)
		}
		batch.Close()
		ix.Apply(c)
	}
	return ix
}

// BenchmarkSearch measures Search with Limit 30 (the engine asks for
// 3·limit candidates) for queries of 1, 2 and 4 terms, ranked (any) and
// conjunctive (all), on indexes built by Rebuild and by Put.
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		for _, build := range []string{"rebuild", "put"} {
			b.Run(fmt.Sprintf("docs=%d/build=%s", n, build), func(b *testing.B) {
				docs := Corpus(benchSeed, n)
				db := openMem(b)
				var ix *Index
				if build == "rebuild" {
					ix = buildIndex(b, db, docs)
				} else {
					ix = putIndex(b, db, docs)
				}
				benchSearch(b, ix)
			})
		}
	}
}

func benchSearch(b *testing.B, ix *Index) {
	for _, terms := range []int{1, 2, 4} {
		g := NewCorpusGen(benchSeed + 1)
		queries := make([]string, 512)
		for i := range queries {
			queries[i] = g.Query(terms)
		}
		for _, all := range []bool{false, true} {
			mode := "any"
			if all {
				mode = "all"
			}
			if all && terms == 1 {
				continue
			}
			b.Run(fmt.Sprintf("terms=%d/%s", terms, mode), func(b *testing.B) {
				// Warm the block cache (and let the build's
				// compactions progress) before measuring.
				for _, q := range queries {
					if _, err := ix.Search(Query{Text: q, Limit: 30, All: all}); err != nil {
						b.Fatal(err)
					}
				}
				var lat []time.Duration
				var hits int
				i := 0
				for b.Loop() {
					start := time.Now()
					res, err := ix.Search(Query{Text: queries[i%len(queries)], Limit: 30, All: all})
					lat = append(lat, time.Since(start))
					if err != nil {
						b.Fatal(err)
					}
					hits += res.Total
					i++
				}
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
				b.ReportMetric(float64(hits)/float64(len(lat)), "matches/op")
			})
		}
	}
}

// BenchmarkAnalyze measures the tokenizer as the index uses it, with the
// stem cache warm.
func BenchmarkAnalyze(b *testing.B) {
	docs := Corpus(benchSeed, 1000)
	var n int64
	for _, d := range docs {
		n += int64(len(d))
	}
	b.SetBytes(n / int64(len(docs)))
	w := writer{stems: &stemCache{}}
	i := 0
	for b.Loop() {
		w.analyze(docs[i%len(docs) : i%len(docs)+1])
		i++
	}
}
