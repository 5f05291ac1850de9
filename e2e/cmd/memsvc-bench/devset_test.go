package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// Minimums of the development sets (issue 16): conversations of at least
// minSessions sessions over at least minSpan, questions of every known
// category and every miss pattern.
const (
	minSessions = 8
	minSpan     = 90 * 24 * time.Hour
)

// devSet is one of the development sets and what it must hold.
type devSet struct {
	file                          string
	conversations, turns, questns int
	perCategory, perTag           int
}

var devSets = []devSet{
	{file: "dialogue.jsonl", conversations: 5, turns: 1300, questns: 600, perCategory: 20, perTag: 20},
	{file: "agent.jsonl", conversations: 2, turns: 280, questns: 150, perCategory: 5, perTag: 5},
}

// TestDevSets checks the development sets: they load, meet the minimums,
// use only known categories and tags, and every tag is true of its
// question by a mechanical rule (devTagRules), so the per-tag figures
// measure what they say.
func TestDevSets(t *testing.T) {
	for _, want := range devSets {
		t.Run(want.file, func(t *testing.T) {
			ds, err := loadDataset(filepath.Join("..", "..", "testdata", "recall", want.file))
			if err != nil {
				t.Fatal(err)
			}
			st := ds.stats()
			t.Logf("%s: %+v", want.file, st)
			if st.Conversations < want.conversations || st.Turns < want.turns || st.Questions < want.questns {
				t.Errorf("%d conversations, %d turns, %d questions; want at least %d, %d, %d",
					st.Conversations, st.Turns, st.Questions, want.conversations, want.turns, want.questns)
			}
			for _, c := range ds.Conversations {
				span := c.Sessions[len(c.Sessions)-1].Date.Sub(c.Sessions[0].Date)
				if len(c.Sessions) < minSessions || span < minSpan {
					t.Errorf("conversation %s: %d sessions over %v; want at least %d over %v", c.ID, len(c.Sessions), span, minSessions, minSpan)
				}
				for i, s := range c.Sessions[1:] {
					if !s.Date.After(c.Sessions[i].Date) {
						t.Errorf("session %s is not after the session before it", s.ID)
					}
					if len(s.Turns) < 2 {
						t.Errorf("session %s has %d turns", s.ID, len(s.Turns))
					}
				}
			}
			for _, c := range knownCategories {
				if st.ByCategory[c] < want.perCategory {
					t.Errorf("category %s: %d questions, want at least %d", c, st.ByCategory[c], want.perCategory)
				}
			}
			for _, tag := range knownTags {
				if st.ByTag[tag] < want.perTag {
					t.Errorf("tag %s: %d questions, want at least %d", tag, st.ByTag[tag], want.perTag)
				}
			}
			texts := map[string]string{}
			for _, s := range ds.Sessions {
				for _, tr := range s.Turns {
					if prev, dup := texts[tr.Text]; dup {
						t.Errorf("turns %s and %s have the same text", prev, tr.ID)
					}
					texts[tr.Text] = tr.ID
				}
			}
			questions := map[string]string{}
			for _, q := range ds.Questions {
				if prev, dup := questions[q.Text]; dup {
					t.Errorf("questions %s and %s are the same", prev, q.ID)
				}
				questions[q.Text] = q.ID
				if !slices.Contains(knownCategories, q.Category) {
					t.Errorf("question %s: unknown category %q", q.ID, q.Category)
				}
				if q.Conversation == "" {
					t.Errorf("question %s names no conversation", q.ID)
				}
				for _, tag := range q.Tags {
					rule, ok := devTagRules[tag]
					if !ok {
						t.Errorf("question %s: unknown tag %q", q.ID, tag)
						continue
					}
					if err := rule(ds, q); err != nil {
						t.Errorf("question %s %q: tag %s: %v", q.ID, q.Text, tag, err)
					}
				}
			}
		})
	}
}

// questionWords are the function words of questions that issue 16 found
// ranking: a turn that shares them and a content word echoes the question.
var questionWords = map[string]bool{"what": true, "when": true, "where": true, "who": true, "which": true,
	"why": true, "how": true, "did": true, "does": true, "do": true, "kind": true, "is": true, "was": true}

var dateWords = regexp.MustCompile(`(?i)\b(january|february|march|april|may|june|july|august|september|october|november|december|` +
	`monday|tuesday|wednesday|thursday|friday|saturday|sunday|(19|20)\d\d)\b|^when\b|\bhow long\b|\b(what|which) (date|day|month|year)\b`)

// overlap is the number of content stems a and b share.
func overlap(a, b map[string]bool) int {
	n := 0
	for w := range a {
		if b[w] {
			n++
		}
	}
	return n
}

func evidenceStems(ds *dataset, q *question) map[string]bool {
	var texts []string
	for _, id := range q.Evidence {
		texts = append(texts, ds.Turns[id].Text)
	}
	return contentStems(strings.Join(texts, " "))
}

// conversationOf is the conversation of q's first evidence turn.
func conversationOf(ds *dataset, q *question) *conversation {
	return ds.Turns[q.Evidence[0]].Session.Conv
}

// devTagRules say when a tag is true of a question.
var devTagRules = map[string]func(ds *dataset, q *question) error{
	// (1) Another turn, itself a question, shares a question word and a
	// content word with it.
	"echo": func(ds *dataset, q *question) error {
		qs := contentStems(q.Text)
		qw := map[string]bool{}
		for _, w := range splitWords(q.Text) {
			if questionWords[w] {
				qw[w] = true
			}
		}
		for _, s := range conversationOf(ds, q).Sessions {
			for _, tr := range s.Turns {
				if slices.Contains(q.Evidence, tr.ID) || !strings.Contains(tr.Text, "?") {
					continue
				}
				shared := slices.ContainsFunc(splitWords(tr.Text), func(w string) bool { return qw[w] })
				if shared && overlap(qs, contentStems(tr.Text)) > 0 {
					return nil
				}
			}
		}
		return fmt.Errorf("no other question turn shares a question word and a content word")
	},
	// (2) The turn before an evidence turn shares more content words with
	// the question than the evidence turn does.
	"adjacent": func(ds *dataset, q *question) error {
		qs := contentStems(q.Text)
		for _, id := range q.Evidence {
			tr := ds.Turns[id]
			i := slices.Index(tr.Session.Turns, tr)
			if i == 0 {
				continue
			}
			prev := tr.Session.Turns[i-1]
			if slices.Contains(q.Evidence, prev.ID) {
				continue
			}
			if p := overlap(qs, contentStems(prev.Text)); p > 0 && p > overlap(qs, contentStems(tr.Text)) {
				return nil
			}
		}
		return fmt.Errorf("no evidence turn follows a turn that shares more of the question's words")
	},
	// (3) It asks about a date or names one.
	"date": func(ds *dataset, q *question) error {
		if !dateWords.MatchString(q.Text) {
			return fmt.Errorf("names no date and asks for none")
		}
		return nil
	},
	// (4) It shares no content word with its evidence.
	"vocab": func(ds *dataset, q *question) error {
		if n := overlap(contentStems(q.Text), evidenceStems(ds, q)); n > 0 {
			var shared []string
			ev := evidenceStems(ds, q)
			for w := range contentStems(q.Text) {
				if ev[w] {
					shared = append(shared, w)
				}
			}
			slices.Sort(shared)
			return fmt.Errorf("shares %q with its evidence", shared)
		}
		return nil
	},
	// (5) It needs more than one turn.
	"multi": func(ds *dataset, q *question) error {
		if len(q.Evidence) < 2 {
			return fmt.Errorf("has %d evidence turn", len(q.Evidence))
		}
		return nil
	},
	// (6) Another question of the conversation, answered by other turns,
	// shares at least two content words with it (names of the speakers
	// aside): reinforcing one answer can push the other out.
	"drift": func(ds *dataset, q *question) error {
		conv := conversationOf(ds, q)
		names := map[string]bool{}
		for _, s := range conv.Speakers {
			names[stem(strings.ToLower(s))] = true
		}
		mine := contentStems(q.Text)
		for w := range names {
			delete(mine, w)
		}
		for _, o := range ds.Questions {
			if o == q || conversationOf(ds, o) != conv || slices.ContainsFunc(o.Evidence, func(id string) bool { return slices.Contains(q.Evidence, id) }) {
				continue
			}
			if overlap(mine, contentStems(o.Text)) >= 2 {
				return nil
			}
		}
		return fmt.Errorf("no question with other evidence shares two content words with it")
	},
	// (7) Its expected answer is given, and some of its content words are
	// in the evidence, so human-mode rendering can show or hide them.
	"visibility": func(ds *dataset, q *question) error {
		var words []string
		for _, id := range q.Evidence {
			words = append(words, splitWords(ds.Turns[id].Text)...)
		}
		for _, w := range splitWords(q.Answer) {
			if !functionWords[w] && slices.Contains(words, w) {
				return nil
			}
		}
		return fmt.Errorf("no content word of answer %q is in the evidence", q.Answer)
	},
}
