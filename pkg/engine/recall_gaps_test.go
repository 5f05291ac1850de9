package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// decayDay advances the decay clock by one day: records stored before it
// age by a day, records stored after it start fresh.
func (h *harness) decayDay() {
	h.t.Helper()
	day := uint32(secondsPerDay)
	if _, err := h.e.DecayTick(context.Background(), &memory.DecayTickRequest{TickDurationSeconds: &day}); err != nil {
		h.t.Fatal(err)
	}
}

// storeWith stores text in st with the given emotion and associations.
func (h *harness) storeWith(text string, st memory.StoreType, emo memory.EmotionVector, links ...memory.ManualAssociation) memory.ID {
	h.t.Helper()
	resp, err := h.e.EncodeStore(context.Background(), &memory.EncodeStoreRequest{
		Content: memory.TextContent(text), Store: &st, Emotion: &emo, Associations: links,
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return resp.RecordID
}

// decayedCorpus is a set of records of three fidelity levels after a
// one-day decay tick: old episodic records (lowest), an old semantic
// record (semantic stability is longer) and new episodic records (1).
type decayedCorpus struct {
	*harness
	oldEpisodic []memory.ID // "harbor" records, decayed the most
	lighthouse  memory.ID   // old episodic, no "harbor": reached only by activation
	oldSemantic memory.ID
	fresh       []memory.ID
	// Fidelity scores of the three levels, read back from the records.
	episodicScore, semanticScore float64
	// names are short keys of the records for messages: L, E0-E2, S, F0-F1.
	names map[memory.ID]string
}

func newDecayedCorpus(t *testing.T) *decayedCorpus {
	t.Helper()
	// No similarity links: the association graph is exactly the manual
	// edges below.
	c := &decayedCorpus{harness: newHarness(t, Options{SimilarLinks: -1})}
	c.lighthouse = c.store("the lighthouse keeper retired in spring", memory.StoreEpisodic)
	// Every harbor record links to the lighthouse, so whichever of them
	// activation starts from reaches it.
	link := memory.ManualAssociation{TargetID: c.lighthouse, AssociationType: memory.AssocTemporal, Weight: 0.9}
	for i := range 3 {
		c.clock.Advance(time.Minute)
		c.oldEpisodic = append(c.oldEpisodic, c.storeWith(fmt.Sprintf("harbor crane %d broke down", i), memory.StoreEpisodic, memory.EmotionVector{}, link))
	}
	c.clock.Advance(time.Minute)
	c.oldSemantic = c.storeWith("the harbor closes at midnight", memory.StoreSemantic, memory.EmotionVector{}, link)
	c.decayDay()
	for i := range 2 {
		c.clock.Advance(time.Minute)
		c.fresh = append(c.fresh, c.storeWith(fmt.Sprintf("harbor ferry %d left late", i), memory.StoreEpisodic, memory.EmotionVector{}, link))
	}

	c.names = map[memory.ID]string{c.lighthouse: "L", c.oldSemantic: "S"}
	for i, id := range c.oldEpisodic {
		c.names[id] = fmt.Sprintf("E%d", i)
	}
	for i, id := range c.fresh {
		c.names[id] = fmt.Sprintf("F%d", i)
	}

	c.episodicScore = c.record(c.oldEpisodic[0]).Fidelity.Score
	c.semanticScore = c.record(c.oldSemantic).Fidelity.Score
	for _, id := range append(slices.Clone(c.oldEpisodic), c.lighthouse) {
		if s := c.record(id).Fidelity.Score; s != c.episodicScore {
			t.Fatalf("old episodic records differ in score: %v and %v", s, c.episodicScore)
		}
	}
	for _, id := range c.fresh {
		if s := c.record(id).Fidelity.Score; s != 1 {
			t.Fatalf("record stored after the tick at %v, want 1", s)
		}
	}
	// The levels must be distinct and above the dormant threshold, or
	// the filter has nothing to tell apart.
	if !(DormantBelow < c.episodicScore && c.episodicScore < c.semanticScore && c.semanticScore < 1) {
		t.Fatalf("decay left scores episodic %v, semantic %v; want %v < episodic < semantic < 1", c.episodicScore, c.semanticScore, DormantBelow)
	}
	return c
}

// TestRecallMinFidelityAfterDecay: after a decay tick separates the
// records' scores, min_fidelity drops exactly the records below it
// (including one reached only through spreading activation), keeps a
// record whose score equals it, counts every dropped record in
// query_metadata.fidelity_filtered, and include_decayed bypasses it. The
// same holds in both recall modes and for the listing without a query.
func TestRecallMinFidelityAfterDecay(t *testing.T) {
	c := newDecayedCorpus(t)
	ctx := context.Background()
	all := append(append(append([]memory.ID{c.lighthouse}, c.oldEpisodic...), c.oldSemantic), c.fresh...)
	aboveEpisodic := append([]memory.ID{c.oldSemantic}, c.fresh...)
	belowEpisodic := append([]memory.ID{c.lighthouse}, c.oldEpisodic...)

	for _, mode := range []memory.RecallMode{memory.ModePerfect, memory.ModeHuman} {
		t.Run(mode.String(), func(t *testing.T) {
			recall := func(text string, minFid *float64, includeDecayed bool) *memory.RecallQueryResponse {
				t.Helper()
				req := memory.DefaultRecallQueryRequest()
				if text != "" {
					req.Cue.Text = &text
				}
				req.Reconsolidate = false // keep the scores where the tick left them
				req.RecallMode = &mode
				req.MinFidelity = minFid
				req.IncludeDecayed = includeDecayed
				resp, err := c.e.RecallQuery(ctx, &req)
				if err != nil {
					t.Fatal(err)
				}
				return resp
			}
			check := func(name string, resp *memory.RecallQueryResponse, want []memory.ID, filtered uint32, minFid float64) {
				t.Helper()
				var got, wantKeys []string
				for _, m := range resp.Memories {
					got = append(got, c.names[m.Record.ID])
					if m.Record.Fidelity.Score < minFid {
						t.Errorf("%s: returned %s at score %v, below %v", name, c.names[m.Record.ID], m.Record.Fidelity.Score, minFid)
					}
				}
				for _, id := range want {
					wantKeys = append(wantKeys, c.names[id])
				}
				slices.Sort(got)
				slices.Sort(wantKeys)
				if !slices.Equal(got, wantKeys) {
					t.Errorf("%s: returned %v, want %v", name, got, wantKeys)
				}
				if resp.QueryMetadata.FidelityFiltered != filtered {
					t.Errorf("%s: fidelity_filtered %d, want %d", name, resp.QueryMetadata.FidelityFiltered, filtered)
				}
				if resp.TotalCandidates != uint32(len(want)) {
					t.Errorf("%s: total_candidates %d, want %d", name, resp.TotalCandidates, len(want))
				}
			}

			// Without a threshold every record comes back; the lighthouse
			// only through activation.
			resp := recall("harbor", nil, false)
			check("no min_fidelity", resp, all, 0, 0)
			for _, m := range resp.Memories {
				if m.Record.ID == c.lighthouse && m.ActivationPath == nil {
					t.Fatalf("the lighthouse was found without activation")
				}
			}

			mid := (c.episodicScore + c.semanticScore) / 2
			check("between episodic and semantic", recall("harbor", &mid, false), aboveEpisodic, uint32(len(belowEpisodic)), mid)
			high := (c.semanticScore + 1) / 2
			check("between semantic and fresh", recall("harbor", &high, false), c.fresh, uint32(len(all)-len(c.fresh)), high)
			// A score equal to the threshold is not below it.
			exact := c.episodicScore
			check("equal to the episodic score", recall("harbor", &exact, false), all, 0, exact)
			// include_decayed bypasses min_fidelity altogether.
			check("include_decayed", recall("harbor", &high, true), all, 0, 0)
			// The listing without a query applies it too.
			check("no query", recall("", &mid, false), aboveEpisodic, uint32(len(belowEpisodic)), mid)
			check("no query, include_decayed", recall("", &mid, true), all, 0, 0)
		})
	}
}

// timelineLines renders a timeline as "start end keys count" lines, naming
// records by their keys in names.
func timelineLines(t *testing.T, resp *memory.RecallTimelineResponse, names map[memory.ID]string) []string {
	t.Helper()
	var out []string
	for _, b := range resp.Buckets {
		var keys []string
		for _, m := range b.Memories {
			k, ok := names[m.Record.ID]
			if !ok {
				k = "?" + m.Record.ID.String()
			}
			keys = append(keys, k)
		}
		if int(b.Count) != len(b.Memories) {
			t.Errorf("bucket %v: count %d for %d memories", b.Start, b.Count, len(b.Memories))
		}
		out = append(out, fmt.Sprintf("%s %s %s %d", b.Start.Format(time.RFC3339Nano), b.End.Format(time.RFC3339Nano), strings.Join(keys, ","), b.Count))
	}
	return out
}

// TestTimelineMinuteAndDayBuckets: minute and day buckets on records placed
// on both sides of minute and midnight boundaries: exact bucket starts
// and ends, members in time order, counts, empty buckets omitted, the
// working store left out.
func TestTimelineMinuteAndDayBuckets(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: -1})
	ctx := context.Background()
	names := map[memory.ID]string{}
	at := func(key string, when time.Time, st memory.StoreType) {
		h.clock.Set(when)
		names[h.store(key+" record", st)] = key
	}
	day := func(d, hh, mm, ss, ns int) time.Time { return time.Date(2026, 3, d, hh, mm, ss, ns, time.UTC) }
	at("a", day(2, 23, 59, 10, 0), memory.StoreEpisodic)
	at("b", day(2, 23, 59, 50, 0), memory.StoreSemantic)
	at("c", day(3, 0, 0, 0, 0), memory.StoreProcedural) // exactly midnight
	at("w", day(3, 0, 0, 30, 0), memory.StoreWorking)   // never on a timeline
	at("d", day(3, 0, 0, 59, 999_000_000), memory.StoreEmotional)
	at("e", day(3, 0, 1, 0, 0), memory.StoreEpisodic) // exactly the next minute
	at("f", day(4, 13, 0, 0, 0), memory.StoreEpisodic)

	rng := memory.TemporalRange{Start: day(2, 0, 0, 0, 0), End: day(5, 0, 0, 0, 0)}
	tests := []struct {
		g    memory.TimeGranularity
		want []string
	}{
		{memory.GranularityMinute, []string{
			"2026-03-02T23:59:00Z 2026-03-03T00:00:00Z a,b 2",
			"2026-03-03T00:00:00Z 2026-03-03T00:01:00Z c,d 2",
			"2026-03-03T00:01:00Z 2026-03-03T00:02:00Z e 1",
			"2026-03-04T13:00:00Z 2026-03-04T13:01:00Z f 1",
		}},
		{memory.GranularityDay, []string{
			"2026-03-02T00:00:00Z 2026-03-03T00:00:00Z a,b 2",
			"2026-03-03T00:00:00Z 2026-03-04T00:00:00Z c,d,e 3",
			"2026-03-04T00:00:00Z 2026-03-05T00:00:00Z f 1",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.g.String(), func(t *testing.T) {
			resp, err := h.e.RecallTimeline(ctx, &memory.RecallTimelineRequest{Range: rng, Granularity: tt.g})
			if err != nil {
				t.Fatal(err)
			}
			if got := timelineLines(t, resp, names); !slices.Equal(got, tt.want) {
				t.Errorf("%s buckets\n got %q\nwant %q", tt.g, got, tt.want)
			}
		})
	}
}

// TestTimelineMinFidelity: the timeline drops records whose score is below
// min_fidelity (a score equal to it stays), and reports each memory's
// current score as its relevance.
func TestTimelineMinFidelity(t *testing.T) {
	c := newDecayedCorpus(t)
	ctx := context.Background()
	names := c.names
	start := c.record(c.lighthouse).CreatedAt
	rng := memory.TemporalRange{Start: start, End: c.clock.Now()}
	keys := func(minFid *float64) []string {
		t.Helper()
		resp, err := c.e.RecallTimeline(ctx, &memory.RecallTimelineRequest{Range: rng, Granularity: memory.GranularityMonth, MinFidelity: minFid})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, b := range resp.Buckets {
			for _, m := range b.Memories {
				out = append(out, names[m.Record.ID])
				if m.RelevanceScore != m.Record.Fidelity.Score {
					t.Errorf("%s: relevance %v, fidelity %v", names[m.Record.ID], m.RelevanceScore, m.Record.Fidelity.Score)
				}
			}
		}
		return out
	}
	everything := []string{"L", "E0", "E1", "E2", "S", "F0", "F1"} // time order
	if got := keys(nil); !slices.Equal(got, everything) {
		t.Fatalf("no min_fidelity: %v, want %v", got, everything)
	}
	if got := keys(ptr(c.episodicScore)); !slices.Equal(got, everything) {
		t.Errorf("min_fidelity equal to the lowest score: %v, want %v", got, everything)
	}
	if got, want := keys(ptr((c.episodicScore+c.semanticScore)/2)), []string{"S", "F0", "F1"}; !slices.Equal(got, want) {
		t.Errorf("min_fidelity between episodic and semantic: %v, want %v", got, want)
	}
	if got, want := keys(ptr((c.semanticScore+1)/2)), []string{"F0", "F1"}; !slices.Equal(got, want) {
		t.Errorf("min_fidelity between semantic and fresh: %v, want %v", got, want)
	}
}

// TestTimelineEmotionFilter: the filter keeps records whose eight Plutchik
// axes have a cosine above 0.5 with the filter's (exactly 0.5 is out),
// ignores intensity and valence, never matches a record without emotion,
// and a zero or near-zero filter (norm under machine epsilon) matches
// nothing.
func TestTimelineEmotionFilter(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: -1})
	ctx := context.Background()
	start := h.clock.Now()
	names := map[memory.ID]string{}
	put := func(key string, emo memory.EmotionVector) {
		h.clock.Advance(time.Minute)
		names[h.storeWith(key+" moment", memory.StoreEpisodic, emo)] = key
	}
	put("joyful", memory.EmotionVector{Joy: 0.9, Trust: 0.3, Intensity: 0.2, Valence: 0.8}) // cos with joy 0.95
	put("fearful", memory.EmotionVector{Fear: 0.8, Sadness: 0.4, Intensity: 0.9, Valence: -0.7})
	put("hopeful", memory.EmotionVector{Joy: 0.5, Anticipation: 0.5})                 // cos with joy 0.707
	put("mixed", memory.EmotionVector{Joy: 0.5, Fear: 0.5, Sadness: 0.5, Anger: 0.5}) // cos with joy or fear exactly 0.5
	put("neutral", memory.EmotionVector{Intensity: 1, Valence: 1})                    // no axis at all
	rng := memory.TemporalRange{Start: start, End: h.clock.Now()}

	tests := []struct {
		name   string
		filter memory.EmotionVector
		want   []string
	}{
		// Intensity and valence of the filter play no part.
		{"joy", memory.EmotionVector{Joy: 1, Intensity: 0, Valence: -1}, []string{"joyful", "hopeful"}},
		{"scaled joy", memory.EmotionVector{Joy: 0.01}, []string{"joyful", "hopeful"}},
		{"fear", memory.EmotionVector{Fear: 1, Intensity: 1, Valence: 1}, []string{"fearful"}},
		{"surprise", memory.EmotionVector{Surprise: 1}, nil},
		{"zero", memory.EmotionVector{Intensity: 1, Valence: 1}, nil},
		{"near zero", memory.EmotionVector{Joy: 1e-20, Fear: 1e-20}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			filter := tt.filter
			resp, err := h.e.RecallTimeline(ctx, &memory.RecallTimelineRequest{Range: rng, Granularity: memory.GranularityDay, EmotionFilter: &filter})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, b := range resp.Buckets {
				if b.Count == 0 {
					t.Errorf("empty bucket %v returned", b.Start)
				}
				for _, m := range b.Memories {
					got = append(got, names[m.Record.ID])
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("emotion filter %+v kept %v, want %v", tt.filter, got, tt.want)
			}
		})
	}
	// Without a filter all five are there, so the cases above did filter.
	resp, err := h.e.RecallTimeline(ctx, &memory.RecallTimelineRequest{Range: rng, Granularity: memory.GranularityDay})
	if err != nil || len(resp.Buckets) != 1 || resp.Buckets[0].Count != 5 {
		t.Fatalf("unfiltered timeline %+v %v", resp, err)
	}
}
