package rank_test

import (
	"cmp"
	"slices"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/engine/rank"
	"memsvc.dev/memsvc/pkg/engine/textindex"
)

// turn is one record of the fixed conversation of the pipeline tests.
type turn struct {
	speaker, date, text string
}

// chat is two sessions of a conversation, stored in order; sessions are
// separate sequences.
var chat = [][]turn{{
	{"Maya", "2023-05-06", "What kind of bike did you end up buying in the end?"},
	{"Tom", "2023-05-06", "A steel touring frame from a shop in Leeds, dark green with mudguards."},
	{"Maya", "2023-05-06", "Lovely. Did the shop fit it for you?"},
	{"Tom", "2023-05-06", "They did, and they threw in a bell. I rode it to work on Monday."},
	{"Maya", "2023-05-06", "I rode along the canal towpath to work twice this week."},
}, {
	{"Maya", "2023-06-10", "What did the vet say about Pickle?"},
	{"Tom", "2023-06-10", "Her kidneys are not great, so she is on a special diet now."},
	{"Maya", "2023-06-10", "Poor thing. The diet at work is not great either."},
	{"Tom", "2023-06-10", "Work at the shop is slow, the bike trade dips in June."},
}}

// corpus is chat indexed for the tests: documents numbered in order.
type corpus struct {
	terms    [][]string
	speaker  [][]string
	times    [][]string
	session  []int
	df       map[string]int
	timeDF   map[string]int
	speakDF  map[string]int
	totalLen int
}

func newCorpus() *corpus {
	c := &corpus{df: map[string]int{}, timeDF: map[string]int{}, speakDF: map[string]int{}}
	for s, sess := range chat {
		for _, tr := range sess {
			at, err := time.Parse(time.DateOnly, tr.date)
			if err != nil {
				panic(err)
			}
			ts := terms(tr.text)
			c.terms = append(c.terms, ts)
			c.speaker = append(c.speaker, textindex.Tokenize(tr.speaker))
			c.times = append(c.times, rank.TimeTerms(at, rank.Day))
			c.session = append(c.session, s)
			c.totalLen += len(ts)
			for _, t := range textindex.Tokenize(tr.text) {
				c.df[t]++
			}
			for _, t := range c.times[len(c.times)-1] {
				c.timeDF[t]++
			}
			c.speakDF[c.speaker[len(c.speaker)-1][0]]++
		}
	}
	return c
}

func (c *corpus) n() int               { return len(c.terms) }
func (c *corpus) avgdl() float64       { return float64(c.totalLen) / float64(c.n()) }
func (c *corpus) Terms(d int) []string { return c.terms[d] }

func (c *corpus) Prev(d int) (int, bool) { return d - 1, d > 0 && c.session[d-1] == c.session[d] }
func (c *corpus) Next(d int) (int, bool) {
	return d + 1, d+1 < c.n() && c.session[d+1] == c.session[d]
}

// search is a whole pipeline over the corpus: analysis, a first stage
// over every document, then Rerank.
type search struct {
	c      *corpus
	p      rank.Params
	q      []rank.QueryTerm
	scorer *rank.Scorer
	times  []string
}

func (s *search) Fields(d int) (shared, own float64) {
	for _, t := range s.times {
		if slices.Contains(s.c.times[d], t) {
			own += s.p.Time * rank.IDF(s.c.n(), s.c.timeDF[t])
		}
	}
	for _, t := range s.q {
		if t.Weight > 0 && slices.Contains(s.c.speaker[d], t.Term) {
			own += s.p.Speaker * t.Weight * rank.IDF(s.c.n(), s.c.speakDF[t.Term])
		}
	}
	return 0, own
}

func (s *search) Prev(d int) (int, bool) { return s.c.Prev(d) }
func (s *search) Next(d int) (int, bool) { return s.c.Next(d) }
func (s *search) Terms(d int) []string   { return s.c.Terms(d) }

func run(c *corpus, p rank.Params, analyse bool, question string) []int {
	a := rank.NewAnalyzer(textindex.Tokenize)
	var q []rank.QueryTerm
	if analyse {
		q = a.Analyze(terms(question))
	} else {
		for _, t := range textindex.Tokenize(question) {
			q = append(q, rank.QueryTerm{Term: t, Weight: 1})
		}
	}
	idf := make([]float64, len(q))
	for i, t := range q {
		idf[i] = rank.IDF(c.n(), c.df[t.Term])
	}
	s := &search{c: c, p: p, q: q, scorer: rank.NewScorer(p.BM25, q, idf, c.avgdl())}
	if p.Time > 0 {
		s.times = rank.QueryTimeTerms(question, false)
	}
	var cands []rank.Scored[int]
	for d := range c.n() {
		_, own := s.Fields(d)
		if v := s.scorer.BM25(c.terms[d]) + own; v > 0 {
			cands = append(cands, rank.Scored[int]{Doc: d, Score: v})
		}
	}
	// Best first, equal scores in document order.
	slices.SortStableFunc(cands, func(a, b rank.Scored[int]) int { return cmp.Compare(b.Score, a.Score) })
	var out []int
	for _, r := range rank.Rerank(p, s.scorer, cands, s) {
		out = append(out, r.Doc)
	}
	return out
}

func TestRerankPatterns(t *testing.T) {
	c := newCorpus()
	plain := rank.Params{BM25: rank.Okapi()}
	rec := rank.Recommended()
	for _, tc := range []struct {
		name     string
		p        rank.Params
		analyse  bool
		question string
		want     []int
	}{
		// Question words rank: without analysis the echo (0) wins on
		// "what kind bike did", and two other questions (5, 2) come in on
		// "what" and "did" alone.
		{"echo, plain BM25", plain, false, "What kind of bike did Tom buy?", []int{0, 5, 8, 2, 3}},
		// Analysed, only "bike" and "tom" count: no text names Tom, so the
		// echo and the shop turn tie on "bike" and stay in document order.
		{"echo, analysed", plain, true, "What kind of bike did Tom buy?", []int{0, 8}},
		// With neighbours the answer (1), which shares no word with the
		// question, follows the echo in and, being Tom's, goes first.
		{"adjacent", rec, true, "What kind of bike did Tom buy?", []int{1, 0, 8, 3, 6, 7, 2, 4, 5}},
		// Proximity: "rode work" together (4: "rode along ... to work";
		// 3: "rode it to work") beats the same words scattered.
		{"proximity", rank.Params{BM25: rank.Okapi(), Proximity: 1, Window: 5}, true, "Who rode to work?", []int{3, 4, 7, 8}},
		// Dates: "in June 2023" names the second session's month: its
		// turns about work (8, 7) lead; the date alone does not lift June
		// turns about something else (5, 6) above a May turn about work
		// (3).
		{"date", rank.Params{BM25: rank.Okapi(), Time: 1}, true, "What was said about work in June 2023?", []int{8, 7, 3, 5, 6, 4}},
		// A query of question words only still finds the questions (5, 0)
		// and, through them, their answers (6, 1).
		{"function words only", rec, true, "What did you do?", []int{5, 6, 1, 0, 3, 2, 4}},
	} {
		if got := run(c, tc.p, tc.analyse, tc.question); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q ranks %v, want %v", tc.name, tc.question, got, tc.want)
		}
	}
}

func TestRerankDeterministic(t *testing.T) {
	c := newCorpus()
	first := run(c, rank.Recommended(), true, "Is the bike shop slow in June?")
	for range 20 {
		if got := run(c, rank.Recommended(), true, "Is the bike shop slow in June?"); !slices.Equal(got, first) {
			t.Fatalf("ranking changed: %v then %v", first, got)
		}
	}
}
