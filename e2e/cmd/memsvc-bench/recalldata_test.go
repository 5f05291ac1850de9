package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestReadDataset(t *testing.T) {
	ds := tiny(t)
	st := ds.stats()
	if st.Conversations != 1 || st.Sessions != 2 || st.Turns != 5 || st.Questions != 3 ||
		st.ByCategory["single-hop"] != 1 || st.ByCategory["multi-hop"] != 1 || st.ByTag["adjacent"] != 2 {
		t.Errorf("stats = %+v", st)
	}
	s2 := ds.Sessions[1]
	if !s2.Date.Equal(time.Date(2023, 8, 2, 0, 0, 0, 0, time.UTC)) || len(s2.Turns) != 2 ||
		!s2.Turns[0].Time.Equal(s2.Date) || !s2.Turns[1].Time.Equal(time.Date(2023, 8, 2, 9, 30, 0, 0, time.UTC)) {
		t.Errorf("session 2: %+v", s2)
	}
	if q := ds.Questions[2]; !slices.Equal(q.Evidence, []string{"t4", "t5"}) || q.Category != "multi-hop" || q.Answer != "" {
		t.Errorf("question 3: %+v", q)
	}
}

// TestReadDatasetErrors: every broken input is refused with its line.
func TestReadDatasetErrors(t *testing.T) {
	head := `{"type":"conversation","id":"c1","speakers":["A","B"]}
{"type":"session","id":"s1","conversation":"c1","date":"2023-05-07"}
{"type":"turn","id":"t1","session":"s1","speaker":"A","text":"hello there"}
`
	q := `{"type":"question","id":"q1","question":"hi?","evidence":["t1"],"category":"single-hop"}`
	for _, c := range []struct{ name, input, want string }{
		{"unknown field", head + `{"type":"question","id":"q1","question":"hi?","evidance":["t1"],"category":"x"}`, `line 4: json: unknown field "evidance"`},
		{"unknown evidence", head + `{"type":"question","id":"q1","question":"hi?","evidence":["t9"],"category":"x"}`, `question q1: evidence turn "t9" does not exist`},
		{"no evidence", head + `{"type":"question","id":"q1","question":"hi?","category":"x"}`, "line 4: question q1: evidence must name from 1"},
		{"no category", head + `{"type":"question","id":"q1","question":"hi?","evidence":["t1"]}`, "line 4: question q1: category is required"},
		{"evidence twice", head + `{"type":"question","id":"q1","question":"hi?","evidence":["t1","t1"],"category":"x"}`, "evidence turn t1 named twice"},
		{"wrong conversation", head + `{"type":"question","id":"q1","conversation":"c2","question":"hi?","evidence":["t1"],"category":"x"}`, "belongs to conversation c1, not c2"},
		{"session before conversation", `{"type":"session","id":"s1","conversation":"c1","date":"2023-05-07"}`, `line 1: session s1: conversation "c1" is not defined`},
		{"turn without session", head + `{"type":"turn","id":"t2","session":"s9","speaker":"A","text":"x"}`, `line 4: turn t2: session "s9" is not defined`},
		{"bad date", `{"type":"conversation","id":"c1"}` + "\n" + `{"type":"session","id":"s1","conversation":"c1","date":"May 7"}`, `line 2: session s1: date: "May 7": want RFC 3339`},
		{"duplicate turn", head + `{"type":"turn","id":"t1","session":"s1","speaker":"A","text":"again"}`, "line 4: turn t1: id used twice"},
		{"empty text", head + `{"type":"turn","id":"t2","session":"s1","speaker":"A","text":"  "}`, "line 4: turn t2: text must be"},
		{"field of another kind", head + `{"type":"turn","id":"t2","session":"s1","speaker":"A","text":"x","category":"y"}`, `line 4: turn t2: field "category" does not belong to a turn line`},
		{"unknown type", `{"type":"utterance","id":"u1"}`, `line 1: type "utterance": want conversation`},
		{"no id", `{"type":"conversation"}`, `line 1: id "": want 1 to`},
		{"two values", `{"type":"conversation","id":"c1"} {}`, "line 1: more than one JSON value"},
		{"not JSON", `type: conversation`, "line 1: invalid character"},
		{"no questions", head, "no questions"},
		{"no turns", q, "no turns"},
		{"line too long", head + `{"type":"turn","id":"t2","session":"s1","speaker":"A","text":"` + strings.Repeat("x", maxDatasetLine) + `"}`, "line 4: longer than"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := readDataset(strings.NewReader(c.input))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestSubset(t *testing.T) {
	ds := tiny(t)
	sub, err := ds.subset([]string{"c1"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(sub.Questions) != 2 || sub.Questions[1].ID != "q2" || len(sub.Turns) != 5 {
		t.Errorf("subset: %d questions, %d turns", len(sub.Questions), len(sub.Turns))
	}
	if _, err := ds.subset([]string{"c9"}, 0); err == nil || !strings.Contains(err.Error(), `no conversation "c9"`) {
		t.Errorf("unknown conversation: %v", err)
	}
	order := ds.ingestOrder()
	if len(order) != 2 || order[0].ID != "s1" {
		t.Errorf("ingest order %v", order)
	}
}
