package rank

import (
	"slices"
	"testing"
)

func TestFeedbackExpand(t *testing.T) {
	q := []QueryTerm{{"what", 0}, {"bike", 1}, {"ride", 1}}
	docs := [][]string{seq("bike cycl cycl what"), seq("cycl road")}
	scores := []float64{3, 1}
	idf := func(string) float64 { return 1 }
	skip := func(t string) bool { return t == "what" }
	f := Feedback{Docs: 2, Terms: 2, Weight: 0.5}
	got := f.Expand(q, docs, scores, idf, skip)
	// P(w|R): cycl 0.75·2/4 + 0.25·1/2 = 0.5, bike 0.75/4 = 0.1875,
	// road 0.125; the best two are cycl and bike, whose shares of
	// λ·W = 0.5·2 = 1 are 0.5/0.6875 and 0.1875/0.6875.
	want := []QueryTerm{{"what", 0}, {"bike", 0.5 + 0.1875/0.6875}, {"ride", 0.5}, {"cycl", 0.5 / 0.6875}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i].Term != want[i].Term || !near(got[i].Weight, want[i].Weight) {
			t.Errorf("term %d = %v, want %v", i, got[i], want[i])
		}
	}
	// Off, or nothing to learn from: q unchanged.
	for _, g := range []Feedback{{}, {Docs: 2, Terms: 2}, {Docs: 0, Terms: 2, Weight: 0.5}} {
		if out := g.Expand(q, docs, scores, idf, skip); !slices.Equal(out, q) {
			t.Errorf("%+v changed the query: %v", g, out)
		}
	}
	// With IDF, a term found everywhere loses to a rare one.
	rare := func(t string) float64 {
		if t == "road" {
			return 10
		}
		return 1
	}
	g := Feedback{Docs: 2, Terms: 1, Weight: 0.5, IDF: true}
	if out := g.Expand(q, docs, scores, rare, skip); out[len(out)-1].Term != "road" {
		t.Errorf("IDF-weighted expansion picked %v", out)
	}
}

func TestFeedbackDeterministic(t *testing.T) {
	// Equal probabilities break by term.
	q := []QueryTerm{{"x", 1}}
	docs := [][]string{seq("b a d c")}
	got := Feedback{Docs: 1, Terms: 2, Weight: 0.5}.Expand(q, docs, []float64{1}, func(string) float64 { return 1 }, nil)
	if len(got) != 3 || got[1].Term != "a" || got[2].Term != "b" {
		t.Errorf("got %v", got)
	}
}
