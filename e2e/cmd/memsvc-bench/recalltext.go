package main

import (
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/kljensen/snowball/english"
)

// bm25 is the reference the recall-quality harness reports beside memsvc:
// what a generic full-text index gives on the same turns. It is plain
// Okapi BM25 (k1 = 1.2, b = 0.75, idf = ln(1 + (N − df + 0.5)/(df + 0.5)))
// over the terms of bm25Terms: no stop words, no phrases, no proximity, the
// query's distinct terms ORed. Equal scores keep the order the documents
// were added in.
type bm25 struct {
	docs     []string        // ids, in the order added
	lens     []int           // terms per document
	postings map[string][]tf // term -> documents holding it, in order
	total    int             // sum of lens
}

type tf struct{ doc, n int }

const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

func newBM25() *bm25 { return &bm25{postings: map[string][]tf{}} }

// add indexes a document.
func (x *bm25) add(id, text string) {
	doc := len(x.docs)
	terms := bm25Terms(text)
	x.docs = append(x.docs, id)
	x.lens = append(x.lens, len(terms))
	x.total += len(terms)
	counts := map[string]int{}
	for _, t := range terms {
		counts[t]++
	}
	for _, t := range terms {
		if n, ok := counts[t]; ok {
			x.postings[t] = append(x.postings[t], tf{doc, n})
			delete(counts, t)
		}
	}
}

// search returns the ids of the best limit documents for query.
func (x *bm25) search(query string, limit int) []string {
	if len(x.docs) == 0 || limit <= 0 {
		return nil
	}
	n := float64(len(x.docs))
	avg := float64(x.total) / n
	scores := map[int]float64{}
	seen := map[string]bool{}
	for _, t := range bm25Terms(query) {
		if seen[t] {
			continue
		}
		seen[t] = true
		ps := x.postings[t]
		if len(ps) == 0 {
			continue
		}
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range ps {
			f := float64(p.n)
			norm := bm25K1 * (1 - bm25B + bm25B*float64(x.lens[p.doc])/avg)
			scores[p.doc] += idf * f * (bm25K1 + 1) / (f + norm)
		}
	}
	docs := make([]int, 0, len(scores))
	for d := range scores {
		docs = append(docs, d)
	}
	slices.SortFunc(docs, func(a, b int) int {
		switch {
		case scores[a] > scores[b]:
			return -1
		case scores[a] < scores[b]:
			return 1
		}
		return a - b
	})
	out := make([]string, 0, min(limit, len(docs)))
	for _, d := range docs[:min(limit, len(docs))] {
		out = append(out, x.docs[d])
	}
	return out
}

// bm25Terms splits text the way a generic full-text index does (SQLite
// FTS5's unicode61 tokenizer with the porter stemmer): runs of letters and
// digits, lower-cased, each stemmed with the English Snowball (Porter 2)
// stemmer; no word is dropped.
func bm25Terms(text string) []string {
	words := splitWords(text)
	for i, w := range words {
		words[i] = stem(w)
	}
	return words
}

// stem is the English Snowball stem of the lower-case word w.
func stem(w string) string { return english.Stem(w, true) }

// splitWords returns the lower-case runs of letters and digits of text.
func splitWords(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
}

// functionWords are the words that carry no topic: articles, pronouns,
// auxiliaries, prepositions, conjunctions, question words and a few
// fillers. The harness uses them only to say which words of a question or
// an answer are content words (for the visibility figures and the checks
// of the development set); the BM25 reference does not drop them.
var functionWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		a an the this that these those some any each every all both either neither no not nor
		i me my mine myself you your yours yourself he him his himself she her hers herself it its itself
		we us our ours ourselves they them their theirs themselves one ones
		am is are was were be been being do does did doing done have has had having
		will would shall should can could may might must ought
		what which who whom whose when where why how whatever whenever
		and or but if then else so because as than too very just also only even still yet
		of in on at to from by for with about into onto over under after before since until while during
		up down out off again further once here there now ever
		s t d ll m re ve don didn doesn isn wasn aren weren won wouldn couldn shouldn haven hasn hadn
		kind sort type thing things something anything get got go going went gone make made
		say said tell told ask asked mention mentioned talk talked
		`) {
		m[w] = true
	}
	return m
}()

// contentStems returns the distinct stems of the content words of text.
func contentStems(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range splitWords(text) {
		if !functionWords[w] {
			out[stem(w)] = true
		}
	}
	return out
}
