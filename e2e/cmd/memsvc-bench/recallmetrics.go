package main

import (
	"slices"
	"strings"
)

// scores are the retrieval figures of a set of questions. For one
// question with evidence turns E and a ranked answer R (the turns recall
// returned, best first):
//
//   - hit@k is 1 when some turn of E is among the first k of R;
//   - evidence@k is the share of E among the first k of R;
//   - the reciprocal rank is 1/r for the rank r of the first turn of E in
//     R, 0 when R holds none (R is at most --limit long).
//
// Each figure is the mean over the questions.
type scores struct {
	Questions  int     `json:"questions"`
	Hit1       float64 `json:"hit_at_1"`
	Hit5       float64 `json:"hit_at_5"`
	Hit10      float64 `json:"hit_at_10"`
	Evidence5  float64 `json:"evidence_at_5"`
	Evidence10 float64 `json:"evidence_at_10"`
	MRR        float64 `json:"mrr"`
}

// questionScores are one question's figures.
type questionScores struct {
	rank                  int // of the first evidence turn, 1-based; 0: none
	evidence5, evidence10 float64
}

func scoreQuestion(q *question, ranked []string) questionScores {
	var s questionScores
	found5, found10 := 0, 0
	for i, id := range ranked {
		if !slices.Contains(q.Evidence, id) || slices.Contains(ranked[:i], id) {
			continue
		}
		if s.rank == 0 {
			s.rank = i + 1
		}
		if i < 5 {
			found5++
		}
		if i < 10 {
			found10++
		}
	}
	s.evidence5 = float64(found5) / float64(len(q.Evidence))
	s.evidence10 = float64(found10) / float64(len(q.Evidence))
	return s
}

// score computes the figures of questions qs whose ranked answers are
// ranked[i] for qs[i].
func score(qs []*question, ranked [][]string) scores {
	s := scores{Questions: len(qs)}
	if len(qs) == 0 {
		return s
	}
	for i, q := range qs {
		qs := scoreQuestion(q, ranked[i])
		if qs.rank == 1 {
			s.Hit1++
		}
		if qs.rank >= 1 && qs.rank <= 5 {
			s.Hit5++
		}
		if qs.rank >= 1 && qs.rank <= 10 {
			s.Hit10++
		}
		if qs.rank > 0 {
			s.MRR += 1 / float64(qs.rank)
		}
		s.Evidence5 += qs.evidence5
		s.Evidence10 += qs.evidence10
	}
	n := float64(len(qs))
	s.Hit1 /= n
	s.Hit5 /= n
	s.Hit10 /= n
	s.Evidence5 /= n
	s.Evidence10 /= n
	s.MRR /= n
	return s
}

// groupScores are the figures of one group of questions: all of them, one
// category ("category: temporal") or one tag ("tag: vocab").
type groupScores struct {
	Group  string `json:"group"`
	Scores scores `json:"scores"`
}

// Known categories and tags, reported in this order before any other
// (which follow in alphabetical order).
var (
	knownCategories = []string{"single-hop", "multi-hop", "temporal", "open-domain"}
	knownTags       = []string{"echo", "adjacent", "date", "vocab", "multi", "drift", "visibility"}
)

// byGroup scores all questions, then each category, then each tag.
func byGroup(qs []*question, ranked [][]string) []groupScores {
	out := []groupScores{{Group: "all", Scores: score(qs, ranked)}}
	pick := func(keep func(*question) bool) ([]*question, [][]string) {
		var gq []*question
		var gr [][]string
		for i, q := range qs {
			if keep(q) {
				gq = append(gq, q)
				gr = append(gr, ranked[i])
			}
		}
		return gq, gr
	}
	var cats, tags []string
	for _, q := range qs {
		if !slices.Contains(cats, q.Category) {
			cats = append(cats, q.Category)
		}
		for _, t := range q.Tags {
			if !slices.Contains(tags, t) {
				tags = append(tags, t)
			}
		}
	}
	for _, c := range knownFirst(cats, knownCategories) {
		gq, gr := pick(func(q *question) bool { return q.Category == c })
		out = append(out, groupScores{Group: "category: " + c, Scores: score(gq, gr)})
	}
	for _, t := range knownFirst(tags, knownTags) {
		gq, gr := pick(func(q *question) bool { return slices.Contains(q.Tags, t) })
		out = append(out, groupScores{Group: "tag: " + t, Scores: score(gq, gr)})
	}
	return out
}

// knownFirst orders names: those of known in known's order, then the rest
// alphabetically.
func knownFirst(names, known []string) []string {
	var out, rest []string
	for _, k := range known {
		if slices.Contains(names, k) {
			out = append(out, k)
		}
	}
	for _, n := range names {
		if !slices.Contains(known, n) {
			rest = append(rest, n)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// topChanged counts the questions whose first k results differ (in
// members or order) between two passes.
func topChanged(a, b [][]string, k int) int {
	n := 0
	for i := range a {
		if !slices.Equal(a[i][:min(k, len(a[i]))], b[i][:min(k, len(b[i]))]) {
			n++
		}
	}
	return n
}

// visibility counts what human-mode rendering leaves readable in the
// memories a recall returned. A word is shown when the rendered text has
// the same word at the same position (masking replaces words in place).
type visibility struct {
	Memories      int `json:"memories"`
	UnderHalf     int `json:"memories_under_half_shown"`
	Words         int `json:"words"`
	Shown         int `json:"words_shown"`
	EvidenceWords int `json:"evidence_words"`
	EvidenceShown int `json:"evidence_words_shown"`
	// Answer words: words of returned evidence turns that are content
	// words of the question's expected answer.
	AnswerWords int `json:"answer_words"`
	AnswerShown int `json:"answer_words_shown"`
	// Query words: words of returned memories that are content words of
	// the question (compared by stem).
	QueryWords int `json:"query_words"`
	QueryShown int `json:"query_words_shown"`
}

func (v *visibility) addAll(o visibility) {
	v.Memories += o.Memories
	v.UnderHalf += o.UnderHalf
	v.Words += o.Words
	v.Shown += o.Shown
	v.EvidenceWords += o.EvidenceWords
	v.EvidenceShown += o.EvidenceShown
	v.AnswerWords += o.AnswerWords
	v.AnswerShown += o.AnswerShown
	v.QueryWords += o.QueryWords
	v.QueryShown += o.QueryShown
}

// returned is one recalled memory as the harness sees it.
type returned struct {
	turn     string // dataset turn id, "" when the memory is no turn
	original string // stored text
	rendered string // text as recall rendered it
}

// measureVisibility looks at the first k memories returned for q.
func measureVisibility(q *question, mems []returned, k int) visibility {
	var v visibility
	query := contentStems(q.Text)
	answer := map[string]bool{}
	for _, w := range splitWords(q.Answer) {
		if !functionWords[w] {
			answer[w] = true
		}
	}
	for _, m := range mems[:min(k, len(mems))] {
		orig, rend := strings.Fields(m.original), strings.Fields(m.rendered)
		if len(orig) == 0 {
			continue
		}
		evidence := slices.Contains(q.Evidence, m.turn)
		shown := 0
		for i, w := range orig {
			vis := i < len(rend) && rend[i] == w
			if vis {
				shown++
			}
			words := splitWords(w)
			if evidence {
				v.EvidenceWords++
				if vis {
					v.EvidenceShown++
				}
				if slices.ContainsFunc(words, func(x string) bool { return answer[x] }) {
					v.AnswerWords++
					if vis {
						v.AnswerShown++
					}
				}
			}
			if slices.ContainsFunc(words, func(x string) bool { return !functionWords[x] && query[stem(x)] }) {
				v.QueryWords++
				if vis {
					v.QueryShown++
				}
			}
		}
		v.Memories++
		v.Words += len(orig)
		v.Shown += shown
		if 2*shown < len(orig) {
			v.UnderHalf++
		}
	}
	return v
}
