package textindex

import "testing"

// Benchmarks run on corpora from CorpusGen (see corpus.go): deterministic
// English-like documents of about 40 words with a Zipf vocabulary.
//
//	go test -run '^$' -bench . ./pkg/engine/textindex/

const benchSeed = 42

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

// BenchmarkAnalyze measures the tokenizer as the search index uses it,
// with the stem cache warm.
func BenchmarkAnalyze(b *testing.B) {
	docs := Corpus(benchSeed, 1000)
	var n int64
	for _, d := range docs {
		n += int64(len(d))
	}
	b.SetBytes(n / int64(len(docs)))
	an := NewAnalyzer()
	var terms []string
	i := 0
	for b.Loop() {
		terms = an.AppendTerms(terms[:0], docs[i%len(docs)])
		i++
	}
}
