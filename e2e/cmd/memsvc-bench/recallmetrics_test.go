package main

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// tinyDataset is a dataset small enough to score by hand.
const tinyDataset = `# two sessions, three questions
{"type":"conversation","id":"c1","title":"tiny","speakers":["Ann","Bo"]}
{"type":"session","id":"s1","conversation":"c1","date":"2023-05-07T14:00:00Z"}
{"type":"turn","id":"t1","session":"s1","speaker":"Ann","text":"What kind of bike did you end up buying?"}
{"type":"turn","id":"t2","session":"s1","speaker":"Bo","text":"A dark green steel frame, second hand."}
{"type":"turn","id":"t3","session":"s1","speaker":"Ann","text":"Our cat Biscuit knocked the fern over again."}
{"type":"session","id":"s2","conversation":"c1","date":"2023-08-02"}
{"type":"turn","id":"t4","session":"s2","speaker":"Bo","text":"I rode sixty miles on Saturday along the river."}
{"type":"turn","id":"t5","session":"s2","speaker":"Ann","text":"Sixty miles! My legs hurt just hearing that.","time":"2023-08-02T09:30:00Z"}
{"type":"question","id":"q1","conversation":"c1","question":"What kind of bike did Bo buy?","answer":"a steel frame","evidence":["t2"],"category":"single-hop","tags":["echo","adjacent"]}
{"type":"question","id":"q2","question":"What pets does Ann have?","answer":"a cat named Biscuit","evidence":["t3"],"category":"open-domain","tags":["vocab"]}
{"type":"question","id":"q3","conversation":"c1","question":"How far did Bo ride by the river?","evidence":["t4","t5"],"category":"multi-hop","tags":["multi","adjacent"]}
`

func tiny(t *testing.T) *dataset {
	t.Helper()
	ds, err := readDataset(strings.NewReader(tinyDataset))
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// TestScoreExact scores hand-made answers to the tiny dataset: q1 finds
// its turn at rank 2, q2 finds nothing, q3 finds one evidence turn at rank
// 1 and the other at rank 6 (a repeated id does not count twice).
func TestScoreExact(t *testing.T) {
	ds := tiny(t)
	ranked := [][]string{
		{"t1", "t2", "t3"},
		{},
		{"t5", "t5", "", "t1", "t2", "t4"},
	}
	got := score(ds.Questions, ranked)
	want := scores{Questions: 3, Hit1: 1.0 / 3, Hit5: 2.0 / 3, Hit10: 2.0 / 3,
		Evidence5: (1 + 0 + 0.5) / 3.0, Evidence10: (1 + 0 + 1) / 3.0, MRR: (0.5 + 0 + 1) / 3}
	if got.Questions != want.Questions || !near(got.Hit1, want.Hit1) || !near(got.Hit5, want.Hit5) || !near(got.Hit10, want.Hit10) ||
		!near(got.Evidence5, want.Evidence5) || !near(got.Evidence10, want.Evidence10) || !near(got.MRR, want.MRR) {
		t.Errorf("score = %+v\nwant    %+v", got, want)
	}

	// Past rank 5 and past rank 10.
	late := [][]string{
		{"x", "x2", "x3", "x4", "x5", "t2"},
		{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "t3"},
		{"t4", "t5"},
	}
	got = score(ds.Questions, late)
	want = scores{Questions: 3, Hit1: 1.0 / 3, Hit5: 1.0 / 3, Hit10: 2.0 / 3,
		Evidence5: 1.0 / 3, Evidence10: 2.0 / 3, MRR: (1.0/6 + 1.0/11 + 1) / 3}
	if !near(got.Hit1, want.Hit1) || !near(got.Hit5, want.Hit5) || !near(got.Hit10, want.Hit10) ||
		!near(got.Evidence5, want.Evidence5) || !near(got.Evidence10, want.Evidence10) || !near(got.MRR, want.MRR) {
		t.Errorf("late: score = %+v\nwant    %+v", got, want)
	}
	if s := score(nil, nil); s != (scores{}) {
		t.Errorf("no questions: %+v", s)
	}
}

// TestByGroup: overall first, then categories in the known order, then
// tags in the known order, each scored over its own questions.
func TestByGroup(t *testing.T) {
	ds := tiny(t)
	ranked := [][]string{{"t2"}, {"t1"}, {"t1", "t4"}}
	groups := byGroup(ds.Questions, ranked)
	var names []string
	for _, g := range groups {
		names = append(names, g.Group)
	}
	want := []string{"all", "category: single-hop", "category: multi-hop", "category: open-domain",
		"tag: echo", "tag: adjacent", "tag: vocab", "tag: multi"}
	if !slices.Equal(names, want) {
		t.Fatalf("groups %q, want %q", names, want)
	}
	hit1 := map[string]float64{"all": 1.0 / 3, "category: single-hop": 1, "category: multi-hop": 0, "category: open-domain": 0,
		"tag: echo": 1, "tag: adjacent": 0.5, "tag: vocab": 0, "tag: multi": 0}
	mrr := map[string]float64{"all": (1 + 0 + 0.5) / 3, "tag: adjacent": 0.75, "tag: multi": 0.5}
	for _, g := range groups {
		if !near(g.Scores.Hit1, hit1[g.Group]) {
			t.Errorf("%s: hit@1 %v, want %v", g.Group, g.Scores.Hit1, hit1[g.Group])
		}
		if m, ok := mrr[g.Group]; ok && !near(g.Scores.MRR, m) {
			t.Errorf("%s: MRR %v, want %v", g.Group, g.Scores.MRR, m)
		}
	}
	if got := knownFirst([]string{"zeta", "temporal", "alpha", "single-hop"}, knownCategories); !slices.Equal(got, []string{"single-hop", "temporal", "alpha", "zeta"}) {
		t.Errorf("knownFirst = %q", got)
	}
}

func TestTopChanged(t *testing.T) {
	a := [][]string{{"1", "2", "3", "4", "5", "6"}, {"1", "2"}, {"1", "2", "3"}, {}}
	b := [][]string{{"1", "2", "3", "4", "5", "7"}, {"2", "1"}, {"1", "2"}, {}}
	// Only the sixth result differs in the first: not a top-5 change.
	if n := topChanged(a, b, 5); n != 2 {
		t.Errorf("topChanged = %d, want 2", n)
	}
	if n := topChanged(a, a, 5); n != 0 {
		t.Errorf("topChanged(a, a) = %d", n)
	}
}

// TestVisibility counts words shown by position, answer words of
// evidence turns and question words, and memories under half shown.
func TestVisibility(t *testing.T) {
	ds := tiny(t)
	q := ds.Questions[0] // "What kind of bike did Bo buy?", answer "a steel frame", evidence t2
	mems := []returned{
		{turn: "t2", original: "A dark green steel frame, second hand.", rendered: "A ... green ... frame, second ..."},
		{turn: "t1", original: "What kind of bike did you end up buying?", rendered: "What kind of bike did you end up buying?"},
		{turn: "", original: "bikes bikes", rendered: "... ..."},
	}
	v := measureVisibility(q, mems, 5)
	want := visibility{Memories: 3, UnderHalf: 1, Words: 7 + 9 + 2, Shown: 4 + 9 + 0,
		EvidenceWords: 7, EvidenceShown: 4,
		AnswerWords: 2, AnswerShown: 1, // "steel" hidden, "frame," shown
		QueryWords: 0 + 2 + 2, QueryShown: 0 + 2 + 0} // "bike" and "buying" (stem buy) in t1, "bikes" twice
	if v != want {
		t.Errorf("visibility = %+v\nwant         %+v", v, want)
	}
	if v := measureVisibility(q, mems, 1); v.Memories != 1 || v.Words != 7 {
		t.Errorf("first memory only: %+v", v)
	}
	var sum visibility
	sum.addAll(want)
	sum.addAll(want)
	if sum.Words != 2*want.Words || sum.QueryShown != 2*want.QueryShown || sum.UnderHalf != 2 {
		t.Errorf("addAll: %+v", sum)
	}
}

// TestBM25 pins the reference's tokenisation and order on a tiny corpus.
func TestBM25(t *testing.T) {
	if got := bm25Terms("Maya's bikes, RIDING the 2023 route!"); !slices.Equal(got, []string{"maya", "s", "bike", "ride", "the", "2023", "rout"}) {
		t.Errorf("bm25Terms = %q", got)
	}
	x := newBM25()
	x.add("d1", "apple banana")
	x.add("d2", "apple apple cherry")
	x.add("d3", "cherry")
	x.add("d4", "apple banana")
	for _, c := range []struct {
		query string
		limit int
		want  []string
	}{
		// Two occurrences in a longer document beat one in a short one.
		{"apple", 10, []string{"d2", "d1", "d4"}},
		// Equal scores keep the order of addition; rarer terms weigh more.
		{"banana", 10, []string{"d1", "d4"}},
		{"cherry apple apple", 2, []string{"d2", "d3"}},
		{"durian", 10, []string{}},
		{"", 10, []string{}},
	} {
		if got := x.search(c.query, c.limit); !slices.Equal(got, c.want) {
			t.Errorf("search(%q, %d) = %q, want %q", c.query, c.limit, got, c.want)
		}
	}
}
