package rank

import (
	"math"
	"strings"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestIDFAndTermScore(t *testing.T) {
	if got, want := IDF(10, 1), math.Log(1+9.5/1.5); !near(got, want) {
		t.Errorf("IDF(10, 1) = %v, want %v", got, want)
	}
	if IDF(10, 10) <= 0 || IDF(3, 5) <= 0 {
		t.Error("IDF must stay positive")
	}
	p := BM25{K1: 1.2, B: 0.75}
	// tf 2 in a document of average length: idf · 2 · 2.2 / (2 + 1.2).
	if got, want := p.TermScore(1.5, 2, 10, 10), 1.5*2*2.2/3.2; !near(got, want) {
		t.Errorf("TermScore = %v, want %v", got, want)
	}
	if p.TermScore(1.5, 0, 10, 10) != 0 {
		t.Error("tf 0 must score 0")
	}
	// A longer document scores lower for the same tf.
	if p.TermScore(1, 1, 20, 10) >= p.TermScore(1, 1, 5, 10) {
		t.Error("length normalisation")
	}
}

func seq(s string) []string { return strings.Fields(s) }

func TestScorerBM25(t *testing.T) {
	p := BM25{K1: 1.2, B: 0.5}
	q := []QueryTerm{{"bike", 1}, {"what", 0}, {"ride", 0.5}}
	s := NewScorer(p, q, []float64{2, 9, 1}, 4)
	doc := seq("bike ride bike what")
	want := p.TermScore(2, 2, 4, 4) + 0.5*p.TermScore(1, 1, 4, 4)
	if got := s.BM25(doc); !near(got, want) {
		t.Errorf("BM25 = %v, want %v (the weight-0 term must not count)", got, want)
	}
	if got := s.BM25(seq("what what")); got != 0 {
		t.Errorf("only a weight-0 term: %v", got)
	}
	// The scorer is reusable.
	if got := s.BM25(doc); !near(got, want) {
		t.Errorf("second call = %v", got)
	}
}

func TestProximity(t *testing.T) {
	p := BM25{K1: 1.2, B: 0}
	q := []QueryTerm{{"a", 1}, {"b", 1}, {"c", 0}}
	s := NewScorer(p, q, []float64{2, 3, 5}, 4)
	// One adjacent pair: tpi = 1; min weight 2; K = k1 with b = 0.
	if got, want := s.Proximity(seq("a b x y"), 5), 2*2.2*1/(1.2+1); !near(got, want) {
		t.Errorf("adjacent pair = %v, want %v", got, want)
	}
	// Distance 2 counts 1/4; beyond the window nothing.
	if got, want := s.Proximity(seq("a x b y"), 5), 2*2.2*0.25/(1.2+0.25); !near(got, want) {
		t.Errorf("distance 2 = %v, want %v", got, want)
	}
	if got := s.Proximity(seq("a x x b"), 2); got != 0 {
		t.Errorf("outside the window = %v", got)
	}
	// Together beats scattered; a term with itself and weight-0 terms
	// are no pair.
	if s.Proximity(seq("a b x x x x"), 5) <= s.Proximity(seq("a x x x b x"), 5) {
		t.Error("adjacent terms must score above scattered ones")
	}
	if got := s.Proximity(seq("a a c a c"), 5); got != 0 {
		t.Errorf("no pair of different weighted terms = %v", got)
	}
	one := NewScorer(p, q[:1], []float64{2}, 4)
	if got := one.Proximity(seq("a a"), 5); got != 0 {
		t.Errorf("one-term query = %v", got)
	}
}
