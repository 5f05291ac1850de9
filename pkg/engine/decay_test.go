package engine

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

const day = 24 * 3600

func tick(t *testing.T, h *harness, seconds uint32) *memory.DecayTickResponse {
	t.Helper()
	resp, err := h.e.DecayTick(context.Background(), &memory.DecayTickRequest{TickDurationSeconds: &seconds, AllowLong: true})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestDecayCurve pins the model of DESIGN §5 through the engine: ticks of
// the given span and the resulting scores.
func TestDecayCurve(t *testing.T) {
	tests := []struct {
		name      string
		store     memory.StoreType
		intensity float64
		days      []uint32 // successive ticks
		want      []float64
	}{
		{"neutral episodic", memory.StoreEpisodic, 0, []uint32{1, 6, 23}, []float64{0.7071, 0.3536, 0.1796}},
		{"emotional anchor", memory.StoreEpisodic, 1, []uint32{1, 6, 23}, []float64{0.8660, 0.5477, 0.3015}},
		{"half intensity", memory.StoreEpisodic, 0.5, []uint32{3}, []float64{0.6325}},
		{"semantic", memory.StoreSemantic, 0, []uint32{30, 335}, []float64{0.7071, 0.2756}},
		{"procedural", memory.StoreProcedural, 0, []uint32{90}, []float64{0.7071}},
		{"emotional store", memory.StoreEmotional, 0, []uint32{14}, []float64{0.7071}},
		{"working never decays", memory.StoreWorking, 0, []uint32{1000}, []float64{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, Options{SimilarLinks: -1})
			emo := memory.EmotionVector{Intensity: tt.intensity}
			resp, err := h.e.EncodeStore(context.Background(), &memory.EncodeStoreRequest{Content: memory.TextContent("x"), Store: &tt.store, Emotion: &emo})
			if err != nil {
				t.Fatal(err)
			}
			for i, d := range tt.days {
				tick(t, h, d*day)
				rec := h.record(resp.RecordID)
				if math.Abs(rec.Fidelity.Score-tt.want[i]) > 5e-5 {
					t.Fatalf("after %d days: score %.4f, want %.4f", sum(tt.days[:i+1]), rec.Fidelity.Score, tt.want[i])
				}
				if math.Abs(rec.Fidelity.NoiseLevel-(1-rec.Fidelity.Score)) > 1e-12 {
					t.Fatalf("noise %v for score %v", rec.Fidelity.NoiseLevel, rec.Fidelity.Score)
				}
			}
		})
	}
}

func sum(v []uint32) uint32 {
	var s uint32
	for _, x := range v {
		s += x
	}
	return s
}

// TestFidelityNeverRisesWithoutReinforcement: random sequences of ticks,
// content and emotion updates and non-reconsolidating reads never raise a
// score.
func TestFidelityNeverRisesWithoutReinforcement(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: -1})
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	var ids []memory.ID
	for i := 0; i < 20; i++ {
		st := memory.PersistentStores()[i%4]
		emo := memory.EmotionVector{Intensity: rng.Float64()}
		resp, err := h.e.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: memory.TextContent(fmt.Sprint("note ", i)), Store: &st, Emotion: &emo})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, resp.RecordID)
	}
	prev := map[memory.ID]float64{}
	for step := 0; step < 200; step++ {
		switch rng.IntN(4) {
		case 0:
			tick(t, h, uint32(rng.IntN(30*day)))
		case 1:
			id := ids[rng.IntN(len(ids))]
			c := memory.TextContent(fmt.Sprint("edited ", step))
			if err := h.e.EncodeUpdate(ctx, &memory.EncodeUpdateRequest{RecordID: id, Content: &c}); err != nil {
				t.Fatal(err)
			}
		case 2:
			req := memory.DefaultRecallQueryRequest()
			req.Reconsolidate = false
			req.Cue.Text = ptr("note")
			if _, err := h.e.RecallQuery(ctx, &req); err != nil {
				t.Fatal(err)
			}
		case 3:
			id := ids[rng.IntN(len(ids))]
			emo := memory.EmotionVector{Joy: 1, Intensity: 1}
			if err := h.e.EncodeUpdate(ctx, &memory.EncodeUpdateRequest{RecordID: id, Emotion: &emo}); err != nil {
				t.Fatal(err)
			}
		}
		for _, id := range ids {
			s := h.record(id).Fidelity.Score
			if p, ok := prev[id]; ok && s > p+1e-12 {
				t.Fatalf("step %d: score of %s rose from %v to %v", step, id, p, s)
			}
			prev[id] = s
		}
	}
}

// TestEmotionUpdateKeepsAnchor: updating an aged record's emotion to full
// intensity changes the emotion but not the anchor set at creation, so the
// score stays where decay put it and keeps decaying on the same curve.
func TestEmotionUpdateKeepsAnchor(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: -1})
	ctx := context.Background()
	id := h.store("a calm afternoon at the harbour", memory.StoreEpisodic)
	tick(t, h, 7*day)
	before := h.record(id).Fidelity
	if math.Abs(before.Score-math.Pow(8, -0.5)) > 1e-9 {
		t.Fatalf("score after a week: %v", before.Score)
	}
	emo := memory.EmotionVector{Fear: 1, Intensity: 1}
	if err := h.e.EncodeUpdate(ctx, &memory.EncodeUpdateRequest{RecordID: id, Emotion: &emo}); err != nil {
		t.Fatal(err)
	}
	after := h.record(id)
	if after.Emotion.Intensity != 1 || after.Emotion.Fear != 1 {
		t.Fatalf("emotion not updated: %+v", after.Emotion)
	}
	if after.Fidelity.EmotionalAnchor != before.EmotionalAnchor || after.Fidelity.Score > before.Score {
		t.Fatalf("emotion update raised fidelity: anchor %v -> %v, score %v -> %v",
			before.EmotionalAnchor, after.Fidelity.EmotionalAnchor, before.Score, after.Fidelity.Score)
	}
	tick(t, h, day)
	if s := h.record(id).Fidelity.Score; math.Abs(s-1.0/3) > 1e-9 {
		t.Fatalf("score a day after the update: %v, want the neutral curve's 1/3", s)
	}
}

func TestReinforcement(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: -1})
	ctx := context.Background()
	id := h.store("the cherry tree blooms in april", memory.StoreEpisodic)
	recall := func() {
		req := memory.DefaultRecallQueryRequest()
		req.Cue.Text = ptr("cherry tree")
		if _, err := h.e.RecallQuery(ctx, &req); err != nil {
			t.Fatal(err)
		}
	}
	// Right after storing: the clock shows 0, under 10% of S·A = 0.1 day.
	recall()
	if rec := h.record(id); rec.Fidelity.ReinforcementCount != 0 || rec.Fidelity.Stability != 1 {
		t.Fatalf("quick repeat reinforced: %+v", rec.Fidelity)
	}
	tick(t, h, 2*day)
	before := h.record(id).Fidelity.Score
	recall()
	rec := h.record(id)
	if rec.Fidelity.ReinforcementCount != 1 || rec.Fidelity.Stability != 2 || rec.Fidelity.Score != 1 || before >= 1 {
		t.Fatalf("reinforcement: %+v (score before %v)", rec.Fidelity, before)
	}
	// With S = 2 the same two days now cost less.
	tick(t, h, 2*day)
	if s := h.record(id).Fidelity.Score; math.Abs(s-math.Pow(2, -0.5)) > 1e-9 {
		t.Fatalf("score after 2 days at S=2: %v", s)
	}
	// Non-reconsolidating recall never reinforces.
	req := memory.DefaultRecallQueryRequest()
	req.Cue.Text = ptr("cherry")
	req.Reconsolidate = false
	if _, err := h.e.RecallQuery(ctx, &req); err != nil {
		t.Fatal(err)
	}
	if rec := h.record(id); rec.Fidelity.ReinforcementCount != 1 {
		t.Fatalf("read-only recall reinforced: %+v", rec.Fidelity)
	}
}

func TestDormancyAndModes(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: -1})
	ctx := context.Background()
	old := h.store("the old lighthouse keeper logbook entry mentions fog and storms", memory.StoreEpisodic)
	tick(t, h, 500*day) // score (1+500)^-0.5 = 0.045: dormant
	fresh := h.store("a fresh lighthouse visit under clear skies", memory.StoreEpisodic)
	if resp := tick(t, h, 0); resp.RecordsBelowThreshold != 1 || resp.RecordsUpdated != 2 || resp.RecordsPruned != 0 {
		t.Fatalf("tick %+v", resp)
	}
	query := func(mode *memory.RecallMode, decayed bool) []memory.RecalledMemory {
		req := memory.DefaultRecallQueryRequest()
		req.Cue.Text = ptr("lighthouse")
		req.RecallMode = mode
		req.IncludeDecayed = decayed
		req.Reconsolidate = false
		resp, err := h.e.RecallQuery(ctx, &req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Memories
	}
	if got := query(ptr(memory.ModeHuman), false); len(got) != 1 || got[0].Record.ID != fresh {
		t.Fatalf("human mode shows dormant records: %d hits", len(got))
	}
	perfect := query(ptr(memory.ModePerfect), false)
	if len(perfect) != 2 {
		t.Fatalf("perfect mode hides dormant records: %d hits", len(perfect))
	}
	for _, m := range perfect {
		if m.Record.ID == old {
			if got, _ := m.RenderedContent.Text(); got != "the old lighthouse keeper logbook entry mentions fog and storms" {
				t.Fatalf("perfect mode altered content: %q", got)
			}
		}
	}
	if got := query(ptr(memory.ModeHuman), true); len(got) != 2 {
		t.Fatalf("include_decayed: %d hits", len(got))
	}
	// Human mode masks a deterministic share of a faded record's words.
	for _, m := range query(ptr(memory.ModeHuman), true) {
		if m.Record.ID != old {
			continue
		}
		text, _ := m.RenderedContent.Text()
		// Score 0.045: the share is (0.9 - 0.045) / 1.8 = 0.475, so 4 of
		// the 10 words are masked, never the query's.
		if masked, words := strings.Count(text, "..."), len(strings.Fields(text)); masked != 4 || words != 10 || !strings.Contains(text, "lighthouse") {
			t.Fatalf("masking of a faded record: %q", text)
		}
		again := query(ptr(memory.ModeHuman), true)
		for _, m2 := range again {
			if m2.Record.ID == old {
				if t2, _ := m2.RenderedContent.Text(); t2 != text {
					t.Fatalf("masking is not deterministic: %q vs %q", text, t2)
				}
			}
		}
		if original, _ := m.Record.Content.Text(); strings.Contains(original, "...") {
			t.Fatal("the record itself was altered")
		}
	}
	// set-mode perfect for episodic: a request without a mode sees both.
	if err := h.e.SetMode(ctx, &memory.SetModeRequest{Mode: memory.ModePerfect, Scope: []memory.StoreType{memory.StoreEpisodic}}); err != nil {
		t.Fatal(err)
	}
	if got := query(nil, false); len(got) != 2 {
		t.Fatalf("persisted perfect mode not honoured: %d hits", len(got))
	}
	if got := query(ptr(memory.ModeHuman), false); len(got) != 1 {
		t.Fatalf("a request naming human mode must win: %d hits", len(got))
	}
}

// TestHumanRecallRendersBeforeReinforcing: with reconsolidation on (the
// default), a faded record comes back masked and with the score it had when
// recalled, while the recall reinforces the stored record; the next recall
// sees the reinforced, unmasked state.
func TestHumanRecallRendersBeforeReinforcing(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: -1})
	ctx := context.Background()
	const text = "the ferry to the island leaves at seven every morning"
	id := h.store(text, memory.StoreEpisodic)
	tick(t, h, day) // score 2^-0.5 = 0.707: masked, not dormant
	recall := func() memory.RecalledMemory {
		t.Helper()
		req := memory.DefaultRecallQueryRequest()
		req.Cue.Text = ptr("ferry island")
		req.RecallMode = ptr(memory.ModeHuman)
		if !req.Reconsolidate {
			t.Fatal("reconsolidation is not the default")
		}
		resp, err := h.e.RecallQuery(ctx, &req)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Memories) != 1 || resp.Memories[0].Record.ID != id {
			t.Fatalf("recall: %+v", resp.Memories)
		}
		return resp.Memories[0]
	}

	first := recall()
	got, _ := first.RenderedContent.Text()
	// floor((0.9 − 0.707) / 1.8 · 10 words) = 1 masked, and it is a word
	// without content (the, to, at, every).
	words := strings.Fields(got)
	if n := strings.Count(got, "..."); n != 1 || len(words) != 10 {
		t.Fatalf("faded record rendered as %q, want one of 10 words masked", got)
	}
	for _, w := range []string{"ferry", "island", "leaves", "seven", "morning"} {
		if !slices.Contains(words, w) {
			t.Fatalf("faded record rendered as %q: content word %q masked before a function word", got, w)
		}
	}
	f := first.Record.Fidelity
	if math.Abs(f.Score-math.Pow(2, -0.5)) > 1e-9 || math.Abs(f.NoiseLevel-(1-f.Score)) > 1e-12 {
		t.Fatalf("answer fidelity %+v, want the score at recall time", f)
	}
	if f.ReinforcementCount != 1 || f.Stability != 2 || first.Record.AccessCount != 1 {
		t.Fatalf("answer does not show this recall's reinforcement: %+v, access count %d", f, first.Record.AccessCount)
	}
	if stored := h.record(id).Fidelity; stored.Score != 1 || stored.ReinforcementCount != 1 {
		t.Fatalf("stored record not reinforced: %+v", stored)
	}

	second := recall()
	if got, _ := second.RenderedContent.Text(); got != text {
		t.Fatalf("reinforced record rendered as %q, want it whole", got)
	}
	if f := second.Record.Fidelity; f.Score != 1 || f.ReinforcementCount != 1 {
		t.Fatalf("second recall fidelity %+v", f)
	}
}

// TestForecastMatchesTicks: forecasting a span and then ticking the same
// span give the same fidelity; the threshold date is when the score
// reaches the dormant threshold.
func TestForecastMatchesTicks(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: -1})
	ctx := context.Background()
	emo := memory.EmotionVector{Intensity: 0.4}
	var ids []memory.ID
	for _, st := range memory.PersistentStores() {
		resp, err := h.e.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: memory.TextContent(st.String()), Store: &st, Emotion: &emo})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, resp.RecordID)
	}
	working := h.store("w", memory.StoreWorking)
	tick(t, h, 3*day)
	for _, span := range []uint32{3600, 2 * day, 45 * day} {
		fc, err := h.e.DecayForecast(ctx, &memory.DecayForecastRequest{RecordIDs: ids, ForecastAt: h.clock.Now().Add(time.Duration(span) * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		tick(t, h, span)
		for i, id := range ids {
			got := h.record(id).Fidelity.Score
			if math.Abs(fc.Forecasts[i].ForecastedFidelity-got) > 1e-12 {
				t.Fatalf("span %d: forecast %v, after tick %v", span, fc.Forecasts[i].ForecastedFidelity, got)
			}
		}
	}
	fc, err := h.e.DecayForecast(ctx, &memory.DecayForecastRequest{RecordIDs: []memory.ID{ids[0], working}, ForecastAt: h.clock.Now()})
	if err != nil {
		t.Fatal(err)
	}
	// Episodic, A = 1.8: dormant at age 1.8·(0.05^-2 − 1) = 718.2 days;
	// its clock shows 3 + 1/24 + 2 + 45 days.
	want := h.clock.Now().Add(time.Duration((718.2 - (50 + 1.0/24)) * day * float64(time.Second)))
	if d := fc.Forecasts[0].EstimatedThresholdDate.Sub(want); d < -time.Second || d > time.Second {
		t.Fatalf("threshold date %v, want %v", fc.Forecasts[0].EstimatedThresholdDate, want)
	}
	if fc.Forecasts[1].EstimatedThresholdDate != nil || fc.Forecasts[1].ForecastedFidelity != 1 {
		t.Fatalf("working record forecast %+v", fc.Forecasts[1])
	}
	_, err = h.e.DecayForecast(ctx, &memory.DecayForecastRequest{RecordIDs: []memory.ID{memory.MustParseID("01890a5d-ac96-774b-bcce-b302099a8057")}, ForecastAt: h.clock.Now()})
	wantCode(t, err, memory.CodeNotFound, "01890a5d")
}

func TestPruneBelow(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: -1, Decay: DecayConfig{PruneBelow: 0.2}})
	ctx := context.Background()
	a := h.store("fades", memory.StoreEpisodic)
	resp, err := h.e.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: memory.TextContent("holds an edge to it"), Store: ptr(memory.StoreSemantic),
		Associations: []memory.ManualAssociation{{TargetID: a, AssociationType: memory.AssocCausal, Weight: 0.5}}})
	if err != nil {
		t.Fatal(err)
	}
	if r := tick(t, h, 20*day); r.RecordsPruned != 0 { // (1+20)^-0.5 = 0.218
		t.Fatalf("pruned too early: %+v", r)
	}
	if r := tick(t, h, 10*day); r.RecordsPruned != 1 { // (1+30)^-0.5 = 0.18
		t.Fatalf("not pruned: %+v", r)
	}
	if got := h.record(resp.RecordID).Associations; len(got) != 0 {
		t.Fatalf("edge to a pruned record left behind: %+v", got)
	}
	if s := h.stats(); s.TotalRecords != 1 {
		t.Fatalf("records %d", s.TotalRecords)
	}
}

// TestBackgroundAdvance: the background path advances the clock by the
// real time since the last tick, including while the server was down.
func TestBackgroundAdvance(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: -1})
	ctx := context.Background()
	id := h.store("x", memory.StoreEpisodic)
	if _, err := h.e.AdvanceDecay(ctx); err != nil { // first call starts the clock
		t.Fatal(err)
	}
	h.close()
	h.clock.Advance(7 * 24 * time.Hour) // down for a week
	h.open()
	if _, err := h.e.AdvanceDecay(ctx); err != nil {
		t.Fatal(err)
	}
	if s := h.record(id).Fidelity.Score; math.Abs(s-math.Pow(8, -0.5)) > 1e-9 {
		t.Fatalf("score after a week down: %v", s)
	}
	if got := h.record(id).Fidelity.LastDecayTick; !got.Equal(h.clock.Now()) {
		t.Fatalf("last_decay_tick %v", got)
	}
}

// TestLivingMemoryConcurrency runs recalls, updates, decay ticks, dream
// ticks and stores together; under -race this checks the locking, and the
// versions check that no update was lost.
func TestLivingMemoryConcurrency(t *testing.T) {
	// No background linker: then only updates change a target's version
	// (reconsolidation rewrites records without bumping it).
	h := newHarness(t, Options{SimilarLinks: -1})
	ctx := context.Background()
	loadTranscript(t, h, "c1")
	targets := []memory.ID{h.store("alpha target record", memory.StoreEpisodic), h.store("beta target record", memory.StoreSemantic)}
	const rounds = 30
	var wg sync.WaitGroup
	errs := make(chan error, 16*rounds)
	updates := make([]int, len(targets))
	for w, id := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				c := memory.TextContent(fmt.Sprint("target record update ", i))
				if err := h.e.EncodeUpdate(ctx, &memory.EncodeUpdateRequest{RecordID: id, Content: &c}); err != nil {
					errs <- err
					return
				}
				updates[w]++
			}
		}()
	}
	wg.Add(4)
	go func() {
		defer wg.Done()
		for i := 0; i < rounds; i++ {
			req := memory.DefaultRecallQueryRequest()
			req.Cue.Text = ptr("target record")
			if _, err := h.e.RecallQuery(ctx, &req); err != nil {
				errs <- err
			}
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < rounds; i++ {
			if _, err := h.e.DecayTick(ctx, &memory.DecayTickRequest{TickDurationSeconds: ptr(uint32(3600))}); err != nil {
				errs <- err
			}
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < rounds/3; i++ {
			if _, err := h.e.DreamTick(ctx, dreamReq()); err != nil {
				errs <- err
			}
			r := rawReq("c2", fmt.Sprint("more talk about target records ", i))
			if _, err := h.e.EncodeStoreRaw(ctx, &r); err != nil {
				errs <- err
			}
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < rounds; i++ {
			if _, err := h.e.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: memory.TextContent(fmt.Sprint("new target record ", i))}); err != nil {
				errs <- err
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Every update is there: the text is the last one written and the
	// version counts every update.
	for i, id := range targets {
		rec := h.record(id)
		if text, _ := rec.Content.Text(); text != fmt.Sprint("target record update ", rounds-1) || updates[i] != rounds {
			t.Fatalf("lost update on %s: %q", id, text)
		}
		if want := uint32(1 + rounds); rec.Version != want {
			t.Fatalf("version %d, want %d", rec.Version, want)
		}
		if rec.AccessCount == 0 {
			t.Fatalf("recalls were lost: %+v", rec)
		}
	}
}

// TestDormantDoNotCrowdOut: in human mode, dormant matches do not take
// the candidate slots a live record needs.
func TestDormantDoNotCrowdOut(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: -1})
	for i := 0; i < 40; i++ {
		h.store(fmt.Sprintf("lighthouse lighthouse lighthouse log %d", i), memory.StoreEpisodic)
	}
	tick(t, h, 500*day)
	fresh := h.store("a lighthouse seen today", memory.StoreEpisodic)
	req := memory.DefaultRecallQueryRequest()
	req.Cue.Text = ptr("lighthouse")
	req.Limit = 1
	req.RecallMode = ptr(memory.ModeHuman)
	resp, err := h.e.RecallQuery(context.Background(), &req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Memories) != 1 || resp.Memories[0].Record.ID != fresh || resp.TotalCandidates != 1 {
		t.Fatalf("got %d memories (total %d), want the live record", len(resp.Memories), resp.TotalCandidates)
	}
}
