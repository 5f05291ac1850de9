package textindex

import "testing"

// Benchmarks run on corpora from CorpusGen (see corpus.go): deterministic
// English-like documents of about 40 words with a Zipf vocabulary.
//
//	go test -run '^$' -bench . ./pkg/engine/textindex/

const benchSeed = 42

// benchDocs returns the 1,000 documents the tokenizer benchmarks take in
// turn, and sets the bytes an operation handles to their mean length.
func benchDocs(b *testing.B) []string {
	docs := Corpus(benchSeed, 1000)
	var n int64
	for _, d := range docs {
		n += int64(len(d))
	}
	b.SetBytes(n / int64(len(docs)))
	return docs
}

func BenchmarkTokenize(b *testing.B) {
	docs := benchDocs(b)
	i := 0
	for b.Loop() {
		Tokenize(docs[i%len(docs)])
		i++
	}
}

// BenchmarkAnalyze measures the tokenizer as the search index uses it,
// with the stem cache warm.
func BenchmarkAnalyze(b *testing.B) {
	docs := benchDocs(b)
	an := NewAnalyzer()
	var terms []string
	i := 0
	for b.Loop() {
		terms = an.AppendTerms(terms[:0], docs[i%len(docs)])
		i++
	}
}
