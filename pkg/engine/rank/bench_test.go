package rank_test

import (
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/engine/rank"
	"memsvc.dev/memsvc/pkg/engine/textindex"
)

// The benchmarks measure the cost each technique adds to one query, on
// documents of textindex.Corpus (about 40 words each): what the engine
// pays per recall on top of its first-stage search.
//
//	go test -run '^$' -bench . -benchmem ./pkg/engine/rank/

const question = "When did Maya start riding her new bike to work along the canal?"

func benchDocs(b *testing.B, n int) [][]string {
	b.Helper()
	docs := textindex.Corpus(7, n)
	out := make([][]string, n)
	for i, d := range docs {
		out[i] = terms(d)
	}
	return out
}

// benchQuery is a query of five content terms taken from the corpus, so
// candidates match it.
func benchQuery(docs [][]string) []rank.QueryTerm {
	var q []rank.QueryTerm
	for _, d := range docs {
		if len(q) == 5 {
			break
		}
		q = append(q, rank.QueryTerm{Term: d[len(d)/2], Weight: 1})
	}
	return q
}

func BenchmarkAnalyze(b *testing.B) {
	a := rank.NewAnalyzer(textindex.Tokenize)
	ts := terms(question)
	b.ReportAllocs()
	for b.Loop() {
		a.Analyze(ts)
	}
}

func BenchmarkQueryTimeTerms(b *testing.B) {
	for b.Loop() {
		rank.QueryTimeTerms("What did Tom confide in Maya on Saturday 10 June 2023?", true)
	}
}

func BenchmarkTimeTerms(b *testing.B) {
	at := time.Date(2023, 6, 10, 19, 0, 0, 0, time.UTC)
	for b.Loop() {
		rank.TimeTerms(at, rank.Day)
	}
}

func BenchmarkResolveRelative(b *testing.B) {
	text := strings.Repeat("We went to the coast yesterday and came back on the train, tired. ", 3)
	at := time.Date(2023, 6, 10, 19, 0, 0, 0, time.UTC)
	for b.Loop() {
		rank.ResolveRelative(text, at)
	}
}

// BenchmarkScorer scores 30 documents (the recommended candidates) from
// their term sequences: BM25 alone, and with proximity.
func BenchmarkScorer(b *testing.B) {
	docs := benchDocs(b, 30)
	q := benchQuery(docs)
	idf := []float64{1, 2, 3, 4, 5}
	s := rank.NewScorer(rank.Recommended().BM25, q, idf, 40)
	b.Run("bm25", func(b *testing.B) {
		for b.Loop() {
			for _, d := range docs {
				s.BM25(d)
			}
		}
	})
	b.Run("proximity", func(b *testing.B) {
		for b.Loop() {
			for _, d := range docs {
				s.Proximity(d, 5)
			}
		}
	})
}

// seqDocs is a rank.Docs over documents 0..n-1 in one conversation.
type seqDocs [][]string

func (s seqDocs) Prev(d int) (int, bool)           { return d - 1, d > 0 }
func (s seqDocs) Next(d int) (int, bool)           { return d + 1, d+1 < len(s) }
func (s seqDocs) Terms(d int) []string             { return s[d] }
func (s seqDocs) Fields(int) (shared, own float64) { return 0, 0 }

// BenchmarkRerank is the whole second stage with the recommended
// parameters over 30 candidates spread through 1,000 documents: proximity
// and neighbour smoothing (the neighbours scored from their sequences).
func BenchmarkRerank(b *testing.B) {
	docs := benchDocs(b, 1000)
	q := benchQuery(docs)
	s := rank.NewScorer(rank.Recommended().BM25, q, []float64{1, 2, 3, 4, 5}, 40)
	cands := make([]rank.Scored[int], 30)
	for i := range cands {
		cands[i] = rank.Scored[int]{Doc: i * 31, Score: float64(30 - i)}
	}
	b.ReportAllocs()
	for b.Loop() {
		rank.Rerank(rank.Recommended(), s, cands, seqDocs(docs))
	}
}

func BenchmarkSmoothNeighbours(b *testing.B) {
	docs := seqDocs(make([][]string, 1000))
	cands := make([]rank.Scored[int], 30)
	for i := range cands {
		cands[i] = rank.Scored[int]{Doc: i * 31, Score: float64(30 - i)}
	}
	b.ReportAllocs()
	for b.Loop() {
		rank.SmoothNeighbours(cands, docs, rank.Recommended().Context, func(int) float64 { return 1 })
	}
}

func BenchmarkFeedbackExpand(b *testing.B) {
	docs := benchDocs(b, 10)
	q := benchQuery(docs)
	scores := []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}
	f := rank.Feedback{Docs: 3, Terms: 20, Weight: 0.2, IDF: true}
	idf := func(string) float64 { return 1 }
	b.ReportAllocs()
	for b.Loop() {
		f.Expand(q, docs, scores, idf, nil)
	}
}
