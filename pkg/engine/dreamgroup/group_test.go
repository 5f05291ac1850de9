package dreamgroup

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// backlog is n pending raw entries, oldest first, over a few sessions,
// with topics or without, pauses from seconds to days, and texts drawn from
// a vocabulary small enough that entries often share words and large
// enough that changes of subject (the soft gap) happen too.
func backlog(rng *rand.Rand, n int, withTopics bool) []*memory.RawJournalRecord {
	words := strings.Fields("deploy cluster billing invoice database migration latency cache tokens rotate staging release budget hiring lunch " +
		"garden piano weather holiday recipe football")
	sessions := []string{"s1", "s2", "s3"}
	topics := []string{""}
	if withTopics {
		topics = []string{"", "", "ops", "finance"}
	}
	pauses := []time.Duration{time.Second, time.Minute, 5 * time.Minute, 15 * time.Minute, 30 * time.Minute, 44 * time.Minute,
		time.Hour, 7 * time.Hour, 50 * time.Hour}
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	out := make([]*memory.RawJournalRecord, 0, n)
	for i := range n {
		if i > 0 && rng.IntN(3) > 0 {
			at = at.Add(pauses[rng.IntN(len(pauses))])
		}
		var text []string
		for range 3 + rng.IntN(5) {
			text = append(text, words[rng.IntN(len(words))])
		}
		rec := &memory.RawJournalRecord{
			ID:         memory.MustParseID(fmt.Sprintf("0196a9e2-5c1d-7f00-8a00-%012x", i)),
			SessionID:  sessions[rng.IntN(len(sessions))],
			CreatedAt:  at,
			Visibility: memory.VisibilityNormal, SecrecyLevel: memory.SecrecyPublic,
			Content: memory.TextContent(strings.Join(text, " ") + "."),
		}
		if rng.IntN(5) == 0 {
			rec.Visibility = memory.VisibilitySealed
		}
		if topic := topics[rng.IntN(len(topics))]; topic != "" {
			rec.TopicID = &topic
		}
		out = append(out, rec)
	}
	return out
}

// describe renders groups for comparison: session, topic, name and entries.
func describe(groups []*Group) []string {
	var out []string
	for _, g := range groups {
		var ids []string
		for _, rec := range g.Entries {
			ids = append(ids, rec.ID.String()[24:])
		}
		topic := "-"
		if g.Topic != nil {
			topic = *g.Topic
		}
		out = append(out, fmt.Sprintf("%s/%s/%s %v", g.Session, topic, g.Hint, ids))
	}
	return out
}

// feed runs First over entries and reports how many it read.
func feed(t *testing.T, max int, entries []*memory.RawJournalRecord) ([]*Group, int) {
	t.Helper()
	read := 0
	groups, err := First(max, func() (*memory.RawJournalRecord, error) {
		if read == len(entries) {
			return nil, nil
		}
		read++
		return entries[read-1], nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return groups, read
}

// TestFirstMatchesAll: reading the backlog only until
// the first max groups are settled gives exactly the groups that grouping
// the whole backlog puts first, for random backlogs and every max.
func TestFirstMatchesAll(t *testing.T) {
	for seed := range uint64(120) {
		rng := rand.New(rand.NewPCG(seed, 7))
		entries := backlog(rng, 10+rng.IntN(120), seed%2 == 0)
		all := describe(All(entries))
		for max := range 12 {
			got, read := feed(t, max, entries)
			want := all[:min(max, len(all))]
			if !slices.Equal(describe(got), want) {
				t.Fatalf("seed %d, max %d (read %d of %d):\ngot  %q\nwant %q", seed, max, read, len(entries), describe(got), want)
			}
		}
	}
}

// TestFirstReadsLittle: with a backlog of many days, a tick of
// two groups reads the first days only, not the whole backlog; entries out
// of time order make it read everything rather than guess.
func TestFirstReadsLittle(t *testing.T) {
	day := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var entries []*memory.RawJournalRecord
	for d := range 30 {
		for i := range 10 {
			entries = append(entries, &memory.RawJournalRecord{
				ID:         memory.MustParseID(fmt.Sprintf("0196a9e2-5c1d-7f00-8a00-%012x", d*10+i)),
				SessionID:  fmt.Sprintf("day-%02d", d),
				CreatedAt:  day.Add(time.Duration(d)*24*time.Hour + time.Duration(i)*time.Minute),
				Visibility: memory.VisibilityNormal, SecrecyLevel: memory.SecrecyPublic,
				Content: memory.TextContent("the standup moved to ten and the deploy waits for review"),
			})
		}
	}
	groups, read := feed(t, 2, entries)
	if len(groups) != 2 || groups[0].Session != "day-00" || groups[1].Session != "day-01" || len(groups[1].Entries) != 10 {
		t.Fatalf("groups %q", describe(groups))
	}
	// Two days of entries, then the first entry of the third day, which
	// shows that nothing more can join.
	if read != 21 {
		t.Fatalf("read %d of %d entries, want 21", read, len(entries))
	}

	shuffled := slices.Clone(entries)
	shuffled[5], shuffled[250] = shuffled[250], shuffled[5]
	if _, read := feed(t, 2, shuffled); read != len(entries) {
		t.Fatalf("out of order: read %d of %d entries, want all", read, len(entries))
	}
}

// TestGroupingEdges pins two cases random backlogs rarely reach: a
// pause past the soft gap compares the new entry with the words of every
// entry of the group so far, and groups of one session that start at the
// same instant are ordered by name, also when only the first is returned.
func TestGroupingEdges(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	n := 0
	entry := func(at time.Duration, topic, text string) *memory.RawJournalRecord {
		n++
		rec := &memory.RawJournalRecord{
			ID:        memory.MustParseID(fmt.Sprintf("0196a9e2-5c1d-7f00-8a00-%012x", n)),
			SessionID: "s", CreatedAt: t0.Add(at),
			Visibility: memory.VisibilityNormal, SecrecyLevel: memory.SecrecyPublic,
			Content: memory.TextContent(text),
		}
		if topic != "" {
			rec.TopicID = &topic
		}
		return rec
	}
	first := func(max int, entries ...*memory.RawJournalRecord) []string {
		groups, _ := feed(t, max, entries)
		return describe(groups)
	}

	// The third entry, 20 minutes on, shares no word with the first and
	// every word with the second: it continues the group.
	got := first(5,
		entry(0, "", "gamma delta epsilon"),
		entry(time.Second, "", "kiwi mango papaya"),
		entry(20*time.Minute, "", "kiwi mango papaya"))
	if len(got) != 1 || !strings.HasSuffix(got[0], "[000000000001 000000000002 000000000003]") {
		t.Fatalf("soft gap: %q, want one group of all three", got)
	}

	// Two topics start at the same instant: zeta is seen first, alpha
	// sorts first.
	got = first(1, entry(time.Hour, "zeta", "the zeta plan"), entry(time.Hour, "alpha", "the alpha plan"))
	if len(got) != 1 || !strings.HasPrefix(got[0], "s/alpha/alpha ") {
		t.Fatalf("tie: %q, want the alpha group", got)
	}
}
