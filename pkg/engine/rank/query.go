package rank

import (
	"slices"
	"strings"
)

// QueryTerm is one distinct term of an analysed query and the weight its
// evidence gets in ranking: 1 for a content term, 0 for a function term
// of a query that has content terms, a fraction for expansion terms.
type QueryTerm struct {
	Term   string
	Weight float64
}

// FunctionWords are the words of a question that say what kind of answer
// is wanted rather than what it is about: interrogatives, auxiliaries,
// pronouns, determiners and prepositions beyond the index's stop words,
// and the vague nouns and verbs of question phrasing ("what kind of",
// "did she mention"). Queries over conversations repeat them in the
// turns that echo a question, so letting them rank promotes the echo over
// the answer. This is the "query stop list" of question-answering
// retrieval (as in the TREC QA track systems): the index keeps the words,
// only the query's weighting ignores them.
//
// "may" and "march" are missing on purpose: they are month names too.
const FunctionWords = `
	what when where who whom whose which why how whatever whenever wherever
	do does did done doing am be being can could would should shall might must ought
	me my mine myself your yours yourself him himself hers herself itself
	us our ours ourselves themselves theirs
	some any each every all both either neither other another such own same
	about after before during over under up down out off through since until while around
	also just only even still yet ever very really too again once
	kind sort type thing things something anything someone anyone
	get got getting go going went gone make made
	say said tell told ask asked mention mentioned talk talked describe name named
	happen happened
`

// Analyzer turns the terms of a query into weighted query terms.
type Analyzer struct {
	function map[string]struct{}
}

// NewAnalyzer returns an analyzer whose function terms are the terms
// tokenize makes of FunctionWords, so they are in the form the index
// stores (stemmed, for memsvc's tokenizer: "does" is "doe").
func NewAnalyzer(tokenize func(string) []string) *Analyzer {
	return NewAnalyzerWords(tokenize, FunctionWords)
}

// NewAnalyzerWords is NewAnalyzer with another list of function words
// (separated by white space).
func NewAnalyzerWords(tokenize func(string) []string, words string) *Analyzer {
	a := &Analyzer{function: map[string]struct{}{}}
	for _, w := range strings.Fields(words) {
		for _, t := range tokenize(w) {
			a.function[t] = struct{}{}
		}
	}
	return a
}

// IsFunction reports whether term is a function term.
func (a *Analyzer) IsFunction(term string) bool {
	_, ok := a.function[term]
	return ok
}

// Analyze weights the terms of a query (in the index's form, in query
// order, repeats allowed): each distinct term once, in order of first
// occurrence, so a repeated word is not counted twice; function terms get
// weight 0, unless the query has nothing else, in which case every term
// keeps weight 1 and a question made only of function words still finds
// what matches it.
func (a *Analyzer) Analyze(terms []string) []QueryTerm {
	out := make([]QueryTerm, 0, len(terms))
	content := false
	for _, t := range terms {
		if slices.ContainsFunc(out, func(q QueryTerm) bool { return q.Term == t }) {
			continue
		}
		w := 1.0
		if a.IsFunction(t) {
			w = 0
		} else {
			content = true
		}
		out = append(out, QueryTerm{Term: t, Weight: w})
	}
	if !content {
		for i := range out {
			out[i].Weight = 1
		}
	}
	return out
}
