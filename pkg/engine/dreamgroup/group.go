// Package dreamgroup is the pure part of dream processing: it splits raw
// journal entries into groups and turns a group into an extractive
// summary, without an LLM and without touching the store.
//
// Entries are grouped by session. Entries with a topic id form one group
// per (session, topic), split where more than TopicGap passes between two
// entries. Entries without a topic are segmented in time order: a new
// segment starts after a gap of more than HardGap, or after more than
// SoftGap when the entry shares almost no words with the segment so far (a
// change of subject). Groups come out oldest first (ties by session, then
// name); an inferred group is named by its three most frequent words.
//
// A group's summary is a heading naming the session and topic, then the
// group's most salient sentences (sentences whose words recur across the
// group score high; long sentences are not favoured) in their original
// order. Only entries with visibility normal and a secrecy level other than
// secret contribute text; private, sealed and secret entries are counted,
// but their text never reaches a summary. A group with at least two
// contributing entries and a name may be promoted to a semantic memory.
package dreamgroup

import (
	"cmp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"memsvc.dev/memsvc/pkg/engine/textindex"
	"memsvc.dev/memsvc/pkg/memory"
)

// Grouping gaps.
const (
	// HardGap ends an inferred group whatever the next entry says.
	HardGap = 45 * time.Minute
	// SoftGap ends an inferred group when the next entry shares less than
	// MinOverlap of its words with the group.
	SoftGap    = 10 * time.Minute
	MinOverlap = 0.08
	// TopicGap ends a topic group.
	TopicGap = 6 * time.Hour
)

// Group is a run of entries that one summary covers.
type Group struct {
	Session  string
	Topic    *string // explicit topic id
	Hint     string  // topic id, or inferred from the words
	Inferred bool
	Entries  []*memory.RawJournalRecord

	// Words of Entries[:tokenized] of an inferred group (see words).
	tokens    map[string]bool
	tokenized int
}

// Last is the newest entry of g.
func (g *Group) Last() *memory.RawJournalRecord { return g.Entries[len(g.Entries)-1] }

// All splits entries (oldest first) into groups, oldest first.
func All(entries []*memory.RawJournalRecord) []*Group {
	gr := NewGrouper()
	for _, rec := range entries {
		gr.Add(rec)
	}
	return gr.Finish(len(gr.groups))
}

// First groups the entries next yields (oldest first, nil at the end) and
// returns the first max groups, as All would over all of them, without
// asking for more entries once those groups are settled.
func First(max int, next func() (*memory.RawJournalRecord, error)) ([]*Group, error) {
	if max <= 0 {
		return nil, nil
	}
	gr := NewGrouper()
	for {
		rec, err := next()
		if err != nil {
			return nil, err
		}
		if rec == nil || gr.Settled(max, rec.CreatedAt) {
			break
		}
		gr.Add(rec)
	}
	return gr.Finish(max), nil
}

// Grouper groups entries fed to it oldest first.
type Grouper struct {
	topics    map[topicKey]*Group // open topic group per (session, topic)
	inferred  map[string]*Group   // open inferred group per session
	groups    []*Group            // in order of creation
	latest    time.Time           // newest entry added
	unordered bool                // an entry came older than latest
}

type topicKey struct{ session, topic string }

// NewGrouper returns an empty Grouper.
func NewGrouper() *Grouper {
	return &Grouper{
		topics:   map[topicKey]*Group{},
		inferred: map[string]*Group{},
	}
}

// Add puts rec into the open group it continues, or starts a new one.
func (gr *Grouper) Add(rec *memory.RawJournalRecord) {
	if rec.CreatedAt.Before(gr.latest) {
		gr.unordered = true
	} else {
		gr.latest = rec.CreatedAt
	}
	if rec.TopicID != nil && strings.TrimSpace(*rec.TopicID) != "" {
		topic := strings.TrimSpace(*rec.TopicID)
		k := topicKey{rec.SessionID, topic}
		g := gr.topics[k]
		if g == nil || rec.CreatedAt.Sub(g.Last().CreatedAt) > TopicGap {
			g = &Group{Session: rec.SessionID, Topic: &topic, Hint: topic}
			gr.topics[k] = g
			gr.groups = append(gr.groups, g)
		}
		g.Entries = append(g.Entries, rec)
		return
	}
	g := gr.inferred[rec.SessionID]
	if g != nil {
		gap := rec.CreatedAt.Sub(g.Last().CreatedAt)
		if gap > HardGap || gap > SoftGap && overlap(g.words(), tokens(rec)) < MinOverlap {
			g = nil
		}
	}
	if g == nil {
		g = &Group{Session: rec.SessionID, Inferred: true}
		gr.inferred[rec.SessionID] = g
		gr.groups = append(gr.groups, g)
	}
	g.Entries = append(g.Entries, rec)
}

// words returns the words of g's entries. Words are only needed after a
// pause longer than SoftGap, and tokenizing (stemming) is most of the cost
// of grouping, so they are gathered then, once per entry.
func (g *Group) words() map[string]bool {
	if g.tokens == nil {
		g.tokens = map[string]bool{}
	}
	for _, rec := range g.Entries[g.tokenized:] {
		for t := range tokens(rec) {
			g.tokens[t] = true
		}
	}
	g.tokenized = len(g.Entries)
	return g.tokens
}

// Settled reports whether the first max groups of Finish are final once
// every entry still to come is at least as new as next: at least max
// groups exist, every group that started no later than the max-th one can
// no longer grow (next is past its gap), and any group started from now on
// begins after the max-th one and so sorts after it. It is never true
// after entries arrived out of time order.
func (gr *Grouper) Settled(max int, next time.Time) bool {
	if gr.unordered || len(gr.groups) < max || next.Before(gr.latest) {
		return false
	}
	cut := gr.groups[max-1].Entries[0].CreatedAt
	if !next.After(cut) {
		return false
	}
	for _, g := range gr.groups {
		if g.Entries[0].CreatedAt.After(cut) {
			break
		}
		if gr.open(g) && !next.After(g.Last().CreatedAt.Add(gapLimit(g))) {
			return false
		}
	}
	return true
}

// open reports whether entries may still join g.
func (gr *Grouper) open(g *Group) bool {
	if g.Topic != nil {
		return gr.topics[topicKey{g.Session, *g.Topic}] == g
	}
	return gr.inferred[g.Session] == g
}

// gapLimit is the longest pause after which an entry may still join g.
func gapLimit(g *Group) time.Duration {
	if g.Topic != nil {
		return TopicGap
	}
	return HardGap
}

// Finish returns the first max groups, oldest first (ties by session, then
// name), with the inferred ones named. Naming means tokenizing a group's
// entries, so only the groups returned and those that tie with another
// group on time and session are named.
func (gr *Grouper) Finish(max int) []*Group {
	groups := gr.groups
	slices.SortStableFunc(groups, func(a, b *Group) int {
		if c := a.Entries[0].CreatedAt.Compare(b.Entries[0].CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.Session, b.Session)
	})
	name := func(g *Group) {
		if g.Inferred && g.Hint == "" {
			g.Hint = inferHint(g)
		}
	}
	for i := 0; i < len(groups); {
		j := i + 1
		for j < len(groups) && groups[j].Session == groups[i].Session && groups[j].Entries[0].CreatedAt.Equal(groups[i].Entries[0].CreatedAt) {
			j++
		}
		if j-i > 1 {
			run := groups[i:j]
			for _, g := range run {
				name(g)
			}
			slices.SortStableFunc(run, func(a, b *Group) int { return strings.Compare(a.Hint, b.Hint) })
		}
		i = j
	}
	groups = groups[:min(max, len(groups))]
	for _, g := range groups {
		name(g)
	}
	return groups
}

// Texts are the texts of an entry that grouping and summaries read, and
// that the raw journal's full-text index sees: its text blocks.
func Texts(rec *memory.RawJournalRecord) []string {
	var out []string
	for _, b := range rec.Content.Blocks {
		if b.Modality == memory.ModalityText && utf8.Valid(b.Data) {
			out = append(out, string(b.Data))
		}
	}
	return out
}

// contributes reports whether an entry's text may reach a summary.
func contributes(rec *memory.RawJournalRecord) bool {
	return rec.Visibility == memory.VisibilityNormal && rec.SecrecyLevel != memory.SecrecySecret
}

func tokens(rec *memory.RawJournalRecord) map[string]bool {
	set := map[string]bool{}
	for _, t := range Texts(rec) {
		for _, tok := range textindex.Tokenize(t) {
			set[tok] = true
		}
	}
	return set
}

// overlap is the share of b's words already in a (1 when either is empty:
// no evidence of a change of subject).
func overlap(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 1
	}
	n := 0
	for t := range b {
		if a[t] {
			n++
		}
	}
	return float64(n) / float64(len(b))
}

// inferHint names an inferred group by its three most frequent words among
// the entries that may be summarised.
func inferHint(g *Group) string {
	counts := map[string]int{}
	for _, rec := range g.Entries {
		if !contributes(rec) {
			continue
		}
		for _, t := range Texts(rec) {
			for _, tok := range textindex.Tokenize(t) {
				if utf8.RuneCountInString(tok) >= 3 || !isASCII(tok) {
					counts[tok]++
				}
			}
		}
	}
	words := make([]string, 0, len(counts))
	for w := range counts {
		words = append(words, w)
	}
	slices.SortFunc(words, func(a, b string) int {
		if c := cmp.Compare(counts[b], counts[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	if len(words) > 3 {
		words = words[:3]
	}
	return strings.Join(words, "+")
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
