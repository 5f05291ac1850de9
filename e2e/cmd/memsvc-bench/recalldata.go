package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// A recall-quality dataset is a JSONL file: one JSON object per line, its
// kind in "type". Blank lines and lines starting with "#" are skipped.
//
//	{"type":"conversation","id":"c1","title":"...","speakers":["Maya","Tom"]}
//	{"type":"session","id":"c1-s1","conversation":"c1","date":"2023-03-04T10:15:00Z"}
//	{"type":"turn","id":"c1-s1-t1","session":"c1-s1","speaker":"Maya","text":"..."}
//	{"type":"question","id":"c1-q1","conversation":"c1","question":"...","answer":"...",
//	 "evidence":["c1-s1-t1"],"category":"single-hop","tags":["echo"]}
//
// A session follows its conversation and a turn its session; the turns of
// a session are in the order they were spoken. A session's date is RFC 3339
// or YYYY-MM-DD (midnight UTC); a turn may carry its own "time", else it
// has its session's. Questions may come anywhere; each names one or more
// evidence turns (the turns that answer it) and a category. "answer" (the
// expected answer, used to measure what human-mode recall leaves visible)
// and "tags" (the miss patterns a question exercises) are optional. Ids are
// unique per kind across the file. Unknown fields are errors, so a typo
// does not silently drop data.
type dataset struct {
	Conversations []*conversation
	Sessions      []*session // in file order
	Turns         map[string]*turn
	Questions     []*question
}

type conversation struct {
	ID       string
	Title    string
	Speakers []string
	Sessions []*session
}

type session struct {
	ID    string
	Conv  *conversation
	Date  time.Time
	Turns []*turn
}

type turn struct {
	ID      string
	Session *session
	Speaker string
	Text    string
	Time    time.Time
}

type question struct {
	ID           string
	Conversation string
	Text         string
	Answer       string
	Evidence     []string
	Category     string
	Tags         []string
}

// line is the union of the four kinds of line.
type line struct {
	Type         string   `json:"type"`
	ID           string   `json:"id"`
	Title        string   `json:"title"`
	Speakers     []string `json:"speakers"`
	Conversation string   `json:"conversation"`
	Date         string   `json:"date"`
	Session      string   `json:"session"`
	Speaker      string   `json:"speaker"`
	Text         string   `json:"text"`
	Time         string   `json:"time"`
	Question     string   `json:"question"`
	Answer       string   `json:"answer"`
	Evidence     []string `json:"evidence"`
	Category     string   `json:"category"`
	Tags         []string `json:"tags"`
}

// Bounds on what a dataset may hold.
const (
	maxDatasetLine = 1 << 20
	maxIDLen       = 200
	maxTurnText    = 64 << 10
	maxEvidence    = 100
)

// loadDataset reads and checks a dataset file.
func loadDataset(path string) (*dataset, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	defer f.Close()
	ds, err := readDataset(f)
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", path, err)
	}
	return ds, nil
}

// readDataset parses a dataset and checks every reference in it.
func readDataset(r io.Reader) (*dataset, error) {
	ds := &dataset{Turns: map[string]*turn{}}
	convs := map[string]*conversation{}
	sessions := map[string]*session{}
	questions := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxDatasetLine)
	n := 0
	for sc.Scan() {
		n++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 || raw[0] == '#' {
			continue
		}
		var l line
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("line %d: more than one JSON value", n)
		}
		if err := checkID(l.ID); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		var err error
		switch l.Type {
		case "conversation":
			err = ds.addConversation(&l, convs)
		case "session":
			err = ds.addSession(&l, convs, sessions)
		case "turn":
			err = ds.addTurn(&l, sessions)
		case "question":
			err = ds.addQuestion(&l, questions)
		default:
			err = fmt.Errorf("type %s: want conversation, session, turn or question", quoteShort(l.Type))
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("line %d: longer than %d bytes", n+1, maxDatasetLine)
		}
		return nil, err
	}
	return ds, ds.check()
}

func (ds *dataset) addConversation(l *line, convs map[string]*conversation) error {
	if convs[l.ID] != nil {
		return fmt.Errorf("conversation %s: id used twice", l.ID)
	}
	if err := onlyFields(l, "title", "speakers"); err != nil {
		return err
	}
	c := &conversation{ID: l.ID, Title: l.Title, Speakers: l.Speakers}
	convs[l.ID] = c
	ds.Conversations = append(ds.Conversations, c)
	return nil
}

func (ds *dataset) addSession(l *line, convs map[string]*conversation, sessions map[string]*session) error {
	if sessions[l.ID] != nil {
		return fmt.Errorf("session %s: id used twice", l.ID)
	}
	if err := onlyFields(l, "conversation", "date"); err != nil {
		return err
	}
	c := convs[l.Conversation]
	if c == nil {
		return fmt.Errorf("session %s: conversation %s is not defined on an earlier line", l.ID, quoteShort(l.Conversation))
	}
	d, err := parseDatasetTime(l.Date)
	if err != nil {
		return fmt.Errorf("session %s: date: %w", l.ID, err)
	}
	s := &session{ID: l.ID, Conv: c, Date: d}
	sessions[l.ID] = s
	c.Sessions = append(c.Sessions, s)
	ds.Sessions = append(ds.Sessions, s)
	return nil
}

func (ds *dataset) addTurn(l *line, sessions map[string]*session) error {
	if ds.Turns[l.ID] != nil {
		return fmt.Errorf("turn %s: id used twice", l.ID)
	}
	if err := onlyFields(l, "session", "speaker", "text", "time"); err != nil {
		return err
	}
	s := sessions[l.Session]
	if s == nil {
		return fmt.Errorf("turn %s: session %s is not defined on an earlier line", l.ID, quoteShort(l.Session))
	}
	if strings.TrimSpace(l.Text) == "" || len(l.Text) > maxTurnText {
		return fmt.Errorf("turn %s: text must be from 1 to %d bytes", l.ID, maxTurnText)
	}
	if strings.TrimSpace(l.Speaker) == "" {
		return fmt.Errorf("turn %s: speaker is required", l.ID)
	}
	t := &turn{ID: l.ID, Session: s, Speaker: l.Speaker, Text: l.Text, Time: s.Date}
	if l.Time != "" {
		var err error
		if t.Time, err = parseDatasetTime(l.Time); err != nil {
			return fmt.Errorf("turn %s: time: %w", l.ID, err)
		}
	}
	ds.Turns[l.ID] = t
	s.Turns = append(s.Turns, t)
	return nil
}

func (ds *dataset) addQuestion(l *line, seen map[string]bool) error {
	if seen[l.ID] {
		return fmt.Errorf("question %s: id used twice", l.ID)
	}
	if err := onlyFields(l, "conversation", "question", "answer", "evidence", "category", "tags"); err != nil {
		return err
	}
	if strings.TrimSpace(l.Question) == "" {
		return fmt.Errorf("question %s: question text is required", l.ID)
	}
	if len(l.Evidence) == 0 || len(l.Evidence) > maxEvidence {
		return fmt.Errorf("question %s: evidence must name from 1 to %d turns", l.ID, maxEvidence)
	}
	if strings.TrimSpace(l.Category) == "" {
		return fmt.Errorf("question %s: category is required", l.ID)
	}
	for _, t := range l.Tags {
		if strings.TrimSpace(t) == "" {
			return fmt.Errorf("question %s: empty tag", l.ID)
		}
	}
	seen[l.ID] = true
	ds.Questions = append(ds.Questions, &question{ID: l.ID, Conversation: l.Conversation, Text: l.Question,
		Answer: l.Answer, Evidence: l.Evidence, Category: l.Category, Tags: l.Tags})
	return nil
}

// check resolves what questions refer to, once every line is read.
func (ds *dataset) check() error {
	if len(ds.Turns) == 0 {
		return errors.New("no turns")
	}
	if len(ds.Questions) == 0 {
		return errors.New("no questions")
	}
	for _, q := range ds.Questions {
		seen := map[string]bool{}
		for _, id := range q.Evidence {
			t := ds.Turns[id]
			if t == nil {
				return fmt.Errorf("question %s: evidence turn %s does not exist", q.ID, quoteShort(id))
			}
			if seen[id] {
				return fmt.Errorf("question %s: evidence turn %s named twice", q.ID, id)
			}
			seen[id] = true
			if q.Conversation != "" && t.Session.Conv.ID != q.Conversation {
				return fmt.Errorf("question %s: evidence turn %s belongs to conversation %s, not %s", q.ID, id, t.Session.Conv.ID, q.Conversation)
			}
		}
	}
	return nil
}

// onlyFields fails when l sets a field its kind does not have.
func onlyFields(l *line, allowed ...string) error {
	set := []struct {
		name string
		on   bool
	}{
		{"title", l.Title != ""}, {"speakers", l.Speakers != nil}, {"conversation", l.Conversation != ""},
		{"date", l.Date != ""}, {"session", l.Session != ""}, {"speaker", l.Speaker != ""}, {"text", l.Text != ""},
		{"time", l.Time != ""}, {"question", l.Question != ""}, {"answer", l.Answer != ""},
		{"evidence", l.Evidence != nil}, {"category", l.Category != ""}, {"tags", l.Tags != nil},
	}
	for _, f := range set {
		if f.on && !slices.Contains(allowed, f.name) {
			return fmt.Errorf("%s %s: field %q does not belong to a %s line", l.Type, l.ID, f.name, l.Type)
		}
	}
	return nil
}

func checkID(id string) error {
	if id == "" || len(id) > maxIDLen || strings.TrimSpace(id) != id {
		return fmt.Errorf("id %s: want 1 to %d characters without surrounding spaces", quoteShort(id), maxIDLen)
	}
	return nil
}

// parseDatasetTime reads RFC 3339 or a bare date (midnight UTC).
func parseDatasetTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%s: want RFC 3339 (2023-05-07T14:00:00Z) or YYYY-MM-DD", quoteShort(s))
}

// quoteShort quotes at most the first 40 bytes of s.
func quoteShort(s string) string {
	if len(s) > 40 {
		return fmt.Sprintf("%q...", s[:40])
	}
	return fmt.Sprintf("%q", s)
}

// subset keeps the named conversations (all when none are named) and the
// questions about them, then at most maxQuestions questions (0: all), in
// file order. A question that names no conversation is kept when all its
// evidence is.
func (ds *dataset) subset(convIDs []string, maxQuestions int) (*dataset, error) {
	keep := map[string]bool{}
	for _, id := range convIDs {
		if !slices.ContainsFunc(ds.Conversations, func(c *conversation) bool { return c.ID == id }) {
			return nil, fmt.Errorf("--conversations: no conversation %s in the dataset", quoteShort(id))
		}
		keep[id] = true
	}
	out := &dataset{Turns: map[string]*turn{}}
	for _, c := range ds.Conversations {
		if len(keep) == 0 || keep[c.ID] {
			out.Conversations = append(out.Conversations, c)
		}
	}
	for _, s := range ds.Sessions {
		if len(keep) == 0 || keep[s.Conv.ID] {
			out.Sessions = append(out.Sessions, s)
			for _, t := range s.Turns {
				out.Turns[t.ID] = t
			}
		}
	}
	for _, q := range ds.Questions {
		if maxQuestions > 0 && len(out.Questions) == maxQuestions {
			break
		}
		if !slices.ContainsFunc(q.Evidence, func(id string) bool { return out.Turns[id] == nil }) {
			out.Questions = append(out.Questions, q)
		}
	}
	if len(out.Questions) == 0 {
		return nil, errors.New("no questions left after --conversations")
	}
	return out, nil
}

// ingestOrder is the dataset's sessions by date, sessions of the same date
// in file order: the order one agent would have lived them.
func (ds *dataset) ingestOrder() []*session {
	out := slices.Clone(ds.Sessions)
	slices.SortStableFunc(out, func(a, b *session) int { return a.Date.Compare(b.Date) })
	return out
}

// stats counts what the dataset holds.
type datasetStats struct {
	Conversations int            `json:"conversations"`
	Sessions      int            `json:"sessions"`
	Turns         int            `json:"turns"`
	Questions     int            `json:"questions"`
	ByCategory    map[string]int `json:"questions_by_category"`
	ByTag         map[string]int `json:"questions_by_tag"`
}

func (ds *dataset) stats() datasetStats {
	st := datasetStats{Conversations: len(ds.Conversations), Sessions: len(ds.Sessions), Turns: len(ds.Turns),
		Questions: len(ds.Questions), ByCategory: map[string]int{}, ByTag: map[string]int{}}
	for _, q := range ds.Questions {
		st.ByCategory[q.Category]++
		for _, t := range q.Tags {
			st.ByTag[t]++
		}
	}
	return st
}
