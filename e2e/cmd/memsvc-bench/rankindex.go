package main

import (
	"slices"
	"strings"

	"memsvc.dev/memsvc/pkg/engine/rank"
	"memsvc.dev/memsvc/pkg/engine/textindex"
)

// rankIndex is an in-memory index of a dataset's turns for the rankeval
// subcommand: what the engine's search index knows about each record
// (its terms in order, with memsvc's tokenizer), plus the fields a
// ranking pipeline may use (speaker, time) and each turn's neighbours in
// its session. It exists to try ranking pipelines in milliseconds; the
// engine has its own index.
type rankIndex struct {
	docs     []rankDoc
	postings map[string][]posting // content term -> documents, ascending
	fields   [numFields]fieldStats
	length   int // total content terms
}

// Fields besides the content text.
const (
	fieldSpeaker = iota
	fieldTime
	fieldLex  // words related to the text's words by a lexical resource
	fieldGram // character n-grams of the text's content words
	numFields
)

type posting struct{ doc, tf int32 }

type fieldStats struct {
	df       map[string]int
	postings map[string][]int32
}

type rankDoc struct {
	turn   *turn
	terms  []string // content terms in order, with repeats
	fields [numFields][]string
	prev   int32 // index of the turn before in the session, -1 for none
	next   int32
}

// rankIndexOptions say how turns become documents.
type rankIndexOptions struct {
	speakerText bool // store "Speaker: text" as the content
	relative    bool // resolve spoken relative dates into the time field
	// Lexical expansion of the text's words: the first lexSenses senses,
	// and hypernyms up to lexDepth levels up (0: synonyms only).
	lexSenses, lexDepth int
	lexVerbs            bool
	lexStem             bool // expand index terms through wordNet.stemTable
	lexTagged           bool // keep only the table's sense-tagged lemmas
	gram                int  // n of the character n-grams (0: none)
}

// termSeq is the sequence of terms of text, with repeats. textindex
// exposes distinct terms only, so the text is tokenized one
// white-space-separated word at a time: the same terms in the same
// order, except that a compound repeating a part ("1.1.1") counts the
// part once.
func termSeq(text string) []string {
	var out []string
	for _, w := range strings.Fields(text) {
		out = append(out, textindex.Tokenize(w)...)
	}
	return out
}

// newRankIndex indexes every turn of ds, sessions in ingest order.
func newRankIndex(ds *dataset, opt rankIndexOptions, wn *wordNet) *rankIndex {
	x := &rankIndex{postings: map[string][]posting{}}
	for f := range x.fields {
		x.fields[f] = fieldStats{df: map[string]int{}, postings: map[string][]int32{}}
	}
	for _, s := range ds.ingestOrder() {
		first := int32(len(x.docs))
		for i, t := range s.Turns {
			text := t.Text
			if opt.speakerText {
				text = t.Speaker + ": " + text
			}
			d := rankDoc{turn: t, terms: termSeq(text), prev: -1, next: -1}
			if i > 0 {
				d.prev = first + int32(i) - 1
			}
			if i < len(s.Turns)-1 {
				d.next = first + int32(i) + 1
			}
			d.fields[fieldSpeaker] = textindex.Tokenize(t.Speaker)
			d.fields[fieldTime] = timeTerms(t, opt.relative)
			if opt.gram > 0 {
				d.fields[fieldGram] = charGrams(t.Text, opt.gram)
			}
			switch {
			case wn != nil && opt.lexSenses > 0 && opt.lexStem:
				d.fields[fieldLex] = stemLexTerms(wn.table(opt), d.terms)
			case wn != nil && opt.lexSenses > 0:
				d.fields[fieldLex] = lexTerms(wn, t.Text, opt)
			}
			x.add(d)
		}
	}
	return x
}

// timeTerms are the time-field terms of a turn: those of its time, and
// with relative those of the relative dates it speaks of.
func timeTerms(t *turn, relative bool) []string {
	out := rank.TimeTerms(t.Time, rank.Day)
	if relative {
		for _, r := range rank.ResolveRelative(t.Text, t.Time) {
			for _, term := range rank.TimeTerms(r.Time, r.Granularity) {
				if !slices.Contains(out, term) {
					out = append(out, term)
				}
			}
		}
	}
	return out
}

func (x *rankIndex) add(d rankDoc) {
	id := int32(len(x.docs))
	x.docs = append(x.docs, d)
	x.length += len(d.terms)
	tf := map[string]int32{}
	for _, t := range d.terms {
		tf[t]++
	}
	for _, t := range dedupeTerms(d.terms) {
		x.postings[t] = append(x.postings[t], posting{id, tf[t]})
	}
	for f, terms := range d.fields {
		for _, t := range dedupeTerms(terms) {
			x.fields[f].df[t]++
			x.fields[f].postings[t] = append(x.fields[f].postings[t], id)
		}
	}
}

func dedupeTerms(ts []string) []string {
	var out []string
	for _, t := range ts {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

func (x *rankIndex) avgdl() float64 {
	if len(x.docs) == 0 {
		return 1
	}
	return float64(x.length) / float64(len(x.docs))
}

func (x *rankIndex) idf(term string) float64 {
	return rank.IDF(len(x.docs), len(x.postings[term]))
}

func (x *rankIndex) fieldIDF(f int, term string) float64 {
	return rank.IDF(len(x.docs), x.fields[f].df[term])
}

// sequence is the rank.Sequence of the index: neighbours in a session.
type sequence struct{ x *rankIndex }

func (s sequence) Prev(d int32) (int32, bool) {
	p := s.x.docs[d].prev
	return p, p >= 0
}

func (s sequence) Next(d int32) (int32, bool) {
	n := s.x.docs[d].next
	return n, n >= 0
}

// lexTerms are the terms of the words related to the content words of
// text, without the text's own terms.
func lexTerms(wn *wordNet, text string, opt rankIndexOptions) []string {
	own := textindex.Tokenize(text)
	var out []string
	for _, w := range splitWords(text) {
		if functionWords[w] {
			continue
		}
		for _, r := range wn.related(w, opt.lexSenses, opt.lexDepth, opt.lexVerbs) {
			for _, t := range textindex.Tokenize(r) {
				if !slices.Contains(own, t) && !slices.Contains(out, t) {
					out = append(out, t)
				}
			}
		}
	}
	return out
}

// charGrams are the character n-grams of the content words of text,
// each word padded with a space at either end ("bike": " bi", "bik",
// "ike", "ke " for n = 3).
func charGrams(text string, n int) []string {
	var out []string
	for _, w := range splitWords(text) {
		if functionWords[w] {
			continue
		}
		rs := []rune(" " + w + " ")
		for i := 0; i+n <= len(rs); i++ {
			out = append(out, string(rs[i:i+n]))
		}
	}
	return out
}

// stemLexTerms are the related terms of a document's terms by table,
// without the document's own terms.
func stemLexTerms(table map[string][]string, terms []string) []string {
	var out []string
	for _, t := range terms {
		for _, r := range table[t] {
			if !slices.Contains(terms, r) && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return out
}
