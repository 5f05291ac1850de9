package dreamgroup

import (
	"slices"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

func TestSummarize(t *testing.T) {
	got := Summarize([]string{
		"The cache layer keeps hot records in memory. Lunch was good.",
		"Hot records leave the cache after ten minutes. The cache layer is sharded by record id.",
		"Weather: sunny.",
	})
	for _, want := range []string{"The cache layer keeps hot records in memory.", "Hot records leave the cache after ten minutes."} {
		if !strings.Contains(got, want) {
			t.Errorf("summary %q misses %q", got, want)
		}
	}
	if strings.Index(got, "keeps hot records") > strings.Index(got, "leave the cache") {
		t.Errorf("summary not in original order: %q", got)
	}
	if got := splitSentences("Done. 次は東京。Then v1.2 ships!\nNew line"); !slices.Equal(got, []string{"Done.", "次は東京。", "Then v1.2 ships!", "New line"}) {
		t.Errorf("sentences %q", got)
	}
}

// TestPlanGroup: only normal, non-secret entries give text; the others are
// counted by kind; promotion needs a name, two contributing entries and the
// request; the short form is cut on a rune boundary.
func TestPlanGroup(t *testing.T) {
	entry := func(text string, vis memory.Visibility, sec memory.SecrecyLevel) *memory.RawJournalRecord {
		return &memory.RawJournalRecord{SessionID: "s1", Visibility: vis, SecrecyLevel: sec, Content: memory.TextContent(text)}
	}
	g := &Group{Session: "s1", Hint: "deploy", Entries: []*memory.RawJournalRecord{
		entry("The deploy waits for review.", memory.VisibilityNormal, memory.SecrecyPublic),
		entry("The deploy review is done.", memory.VisibilityNormal, memory.SecrecySensitive),
		entry("token hunter2 for the deploy", memory.VisibilityNormal, memory.SecrecySecret),
		entry("sealed deploy note", memory.VisibilitySealed, memory.SecrecyPublic),
		entry("scratch deploy idea", memory.VisibilityPrivateScratch, memory.SecrecyPublic),
	}}
	p := PlanGroup(g, true)
	want := map[string]int{"normal_records": 2, "secret_redacted": 1, "sealed_redacted": 1, "private_scratch_redacted": 1, "redacted_total": 3}
	for k, v := range want {
		if p.Stats[k] != v {
			t.Errorf("stats[%s] = %d, want %d (%v)", k, p.Stats[k], v, p.Stats)
		}
	}
	for _, hidden := range []string{"hunter2", "sealed", "scratch"} {
		if strings.Contains(p.Text, hidden) {
			t.Errorf("summary %q holds text of a redacted entry (%q)", p.Text, hidden)
		}
	}
	if !strings.HasPrefix(p.Text, "Dream summary for session s1 / topic deploy: ") || !strings.HasSuffix(p.Text, "[3 raw record(s) redacted from this summary]") {
		t.Errorf("summary %q", p.Text)
	}
	if !p.Promote {
		t.Error("a named group with two normal entries was not promoted")
	}
	if PlanGroup(g, false).Promote {
		t.Error("promoted without promote_semantic")
	}
	g.Entries = g.Entries[1:]
	if PlanGroup(g, true).Promote {
		t.Error("promoted with one contributing entry")
	}
	long := strings.Repeat("é", MaxShort)
	if got := Truncate(long, MaxShort); len(got) > MaxShort+3 || !strings.HasSuffix(got, "é...") {
		t.Errorf("Truncate cut %q badly", got)
	}
	if p := PlanGroup(&Group{Session: strings.Repeat("x", 300), Entries: g.Entries}, false); len(p.Short) != MaxShort+3 || !strings.HasPrefix(p.Text, p.Short[:MaxShort]) {
		t.Errorf("short form %q of a long summary", p.Short)
	}
}
