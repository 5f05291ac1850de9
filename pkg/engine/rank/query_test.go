package rank_test

import (
	"slices"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/engine/rank"
	"memsvc.dev/memsvc/pkg/engine/textindex"
)

// terms is the query's terms in the index's form, with repeats.
func terms(text string) []string {
	var out []string
	for _, w := range strings.Fields(text) {
		out = append(out, textindex.Tokenize(w)...)
	}
	return out
}

func TestAnalyze(t *testing.T) {
	a := rank.NewAnalyzer(textindex.Tokenize)
	for _, tc := range []struct {
		query string
		want  []rank.QueryTerm
	}{
		// Question words weigh nothing; "does" is stemmed to "doe" and
		// still recognised.
		{"What kind of bike does Maya ride when it rains?", []rank.QueryTerm{
			{"what", 0}, {"kind", 0}, {"bike", 1}, {"doe", 0}, {"maya", 1}, {"ride", 1}, {"when", 0}, {"rain", 1}}},
		// A repeated word counts once.
		{"bike bikes biking", []rank.QueryTerm{{"bike", 1}}},
		// A query of function words only keeps them all.
		{"What did you do?", []rank.QueryTerm{{"what", 1}, {"did", 1}, {"do", 1}}},
		// "May" the month is not a function word.
		{"What happened in May?", []rank.QueryTerm{{"what", 0}, {"happen", 0}, {"may", 1}}},
		{"", []rank.QueryTerm{}},
	} {
		got := a.Analyze(terms(tc.query))
		if !slices.Equal(got, tc.want) {
			t.Errorf("Analyze(%q) = %v, want %v", tc.query, got, tc.want)
		}
	}
}

func TestFunctionWordsAreTerms(t *testing.T) {
	// Every function word either is an index stop word (and never
	// reaches a query) or is recognised in the form the index stores.
	a := rank.NewAnalyzer(textindex.Tokenize)
	for _, w := range strings.Fields(rank.FunctionWords) {
		ts := textindex.Tokenize(w)
		if len(ts) == 0 {
			continue
		}
		for _, term := range ts {
			if !a.IsFunction(term) {
				t.Errorf("%q: term %q is not a function term", w, term)
			}
		}
	}
	if a.IsFunction("bike") || a.IsFunction("may") {
		t.Error("content words are function terms")
	}
}
