package engine

import (
	"context"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

func consolidate(t *testing.T, h *harness, mod func(*memory.ConsolidateRequest)) memory.ConsolidateResponse {
	t.Helper()
	req := memory.DefaultConsolidateRequest()
	if mod != nil {
		mod(&req)
	}
	resp, err := h.e.Consolidate(context.Background(), &req)
	if err != nil {
		t.Fatal(err)
	}
	return *resp
}

func TestConsolidateIncremental(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: -1})
	a := h.store("The payments service retries webhooks three times with backoff.", memory.StoreEpisodic)
	b := h.store("Standup moved to 9:30 on Tuesdays.", memory.StoreEpisodic)
	h.clock.Advance(2 * time.Hour)
	young := h.store("Just now: the build cache was cleared.", memory.StoreEpisodic)

	// Dry run: reports, changes nothing.
	dry := consolidate(t, h, func(r *memory.ConsolidateRequest) { r.DryRun = true; r.MinAgeHours = 1 })
	if dry != (memory.ConsolidateResponse{RecordsProcessed: 3, RecordsMigrated: 2, SemanticNodesCreated: 2}) {
		t.Fatalf("dry run %+v", dry)
	}
	if s := h.stats(); s.RecordsByStore[memory.StoreSemantic] != 0 {
		t.Fatal("dry run created records")
	}

	got := consolidate(t, h, func(r *memory.ConsolidateRequest) { r.MinAgeHours = 1 })
	if got != dry {
		t.Fatalf("run %+v differs from its dry run %+v", got, dry)
	}
	ra := h.record(a)
	if len(ra.Associations) != 1 {
		t.Fatalf("source has no provenance link: %+v", ra.Associations)
	}
	cp := h.record(ra.Associations[0].TargetID)
	text, _ := cp.Content.Text()
	if cp.Store != memory.StoreSemantic || text != "The payments service retries webhooks three times with backoff." ||
		cp.Content.Summary == nil || *cp.Content.Summary != "The payments service retries webhooks three times with backoff." ||
		len(cp.Associations) != 1 || cp.Associations[0].TargetID != a || cp.Meta.SourceRecordIDs[0] != a ||
		cp.Fidelity.Stability != 30 || ra.Version != 1 {
		t.Fatalf("copy %+v of source %+v", cp, ra)
	}
	if h.record(young).Associations != nil {
		t.Fatal("a record younger than min_age_hours was consolidated")
	}

	// Idempotent: nothing new the second time.
	if again := consolidate(t, h, func(r *memory.ConsolidateRequest) { r.MinAgeHours = 1 }); again != (memory.ConsolidateResponse{RecordsProcessed: 3}) {
		t.Fatalf("second run %+v", again)
	}
	// A changed source refreshes its copy instead of adding one.
	newText := memory.TextContent("The payments service retries webhooks five times with backoff.")
	if err := h.e.EncodeUpdate(context.Background(), &memory.EncodeUpdateRequest{RecordID: a, Content: &newText}); err != nil {
		t.Fatal(err)
	}
	if r := consolidate(t, h, func(r *memory.ConsolidateRequest) { r.MinAgeHours = 1 }); r != (memory.ConsolidateResponse{RecordsProcessed: 3, RecordsMigrated: 1}) {
		t.Fatalf("after update %+v", r)
	}
	cp = h.record(cp.ID)
	if text, _ := cp.Content.Text(); text != "The payments service retries webhooks five times with backoff." || cp.Version != 2 {
		t.Fatalf("copy not refreshed: %q v%d", text, cp.Version)
	}
	if s := h.stats(); s.RecordsByStore[memory.StoreSemantic] != 2 {
		t.Fatalf("semantic records %d", s.RecordsByStore[memory.StoreSemantic])
	}
	_ = b
	// min_access_count.
	if r := consolidate(t, h, func(r *memory.ConsolidateRequest) { r.MinAccessCount = 1 }); r.RecordsMigrated != 0 {
		t.Fatalf("records never accessed were consolidated: %+v", r)
	}
}

func TestConsolidateDuplicatesAndStrategies(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: -1})
	ctx := context.Background()
	other := h.store("The on-call rotation changes every Monday at noon.", memory.StoreEpisodic)
	resp, err := h.e.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: memory.TextContent("Deploy freeze starts Friday at noon for the holidays."),
		Associations: []memory.ManualAssociation{{TargetID: other, AssociationType: memory.AssocTemporal, Weight: 0.5}}})
	if err != nil {
		t.Fatal(err)
	}
	first := resp.RecordID
	h.clock.Advance(time.Minute)
	// A near-duplicate that points at the first record: merging must not
	// give the kept record an edge to itself.
	resp, err = h.e.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: memory.TextContent("Deploy freeze starts Friday at noon for the holidays!"),
		Associations: []memory.ManualAssociation{
			{TargetID: first, AssociationType: memory.AssocSemantic, Weight: 0.9},
			{TargetID: other, AssociationType: memory.AssocCausal, Weight: 0.4},
		}})
	if err != nil {
		t.Fatal(err)
	}
	dup := resp.RecordID

	// Selective: none of these is salient yet.
	if r := consolidate(t, h, func(r *memory.ConsolidateRequest) { r.Strategy = memory.ConsolidateSelective }); r.RecordsMigrated != 0 || r.RecordsCompressed != 0 {
		t.Fatalf("selective %+v", r)
	}
	// Make one salient by recalling it twice.
	for i := 0; i < 2; i++ {
		req := memory.DefaultRecallQueryRequest()
		req.Cue.Text = ptr("on-call rotation Monday")
		req.Limit = 1
		if _, err := h.e.RecallQuery(ctx, &req); err != nil {
			t.Fatal(err)
		}
	}
	if r := consolidate(t, h, func(r *memory.ConsolidateRequest) { r.Strategy = memory.ConsolidateSelective }); r.RecordsMigrated != 1 || r.SemanticNodesCreated != 1 {
		t.Fatalf("selective after recalls %+v", r)
	}

	// Incremental merges the duplicate pair.
	r := consolidate(t, h, nil)
	if r.RecordsCompressed != 1 || r.RecordsMigrated != 1 || r.SemanticNodesCreated != 1 {
		t.Fatalf("incremental with duplicates %+v", r)
	}
	kept := h.record(first)
	if _, err := h.e.Record(ctx, &memory.IntrospectRecordRequest{RecordID: dup}); err == nil {
		t.Fatal("duplicate not removed")
	}
	for _, a := range kept.Associations {
		if a.TargetID == kept.ID {
			t.Fatalf("self edge after merge: %+v", kept.Associations)
		}
	}
	var causal bool
	for _, a := range kept.Associations {
		causal = causal || (a.TargetID == other && a.AssociationType == memory.AssocCausal)
	}
	if !causal {
		t.Fatalf("kept record did not inherit the duplicate's edge: %+v", kept.Associations)
	}

	// Full prunes dormant sources whose content lives in an up-to-date
	// copy: age everything 400 days (an episodic record is dormant after
	// about 399 days without reinforcement).
	if _, err := h.e.DecayTick(ctx, &memory.DecayTickRequest{TickDurationSeconds: ptr(uint32(400 * 24 * 3600)), AllowLong: true}); err != nil {
		t.Fatal(err)
	}
	r = consolidate(t, h, func(r *memory.ConsolidateRequest) { r.Strategy = memory.ConsolidateFull })
	// Both sources are dormant (the recalls came right after storing, so
	// spaced reinforcement did not strengthen them) and both have copies.
	if r.RecordsPruned != 2 || r.RecordsMigrated != 0 {
		t.Fatalf("full %+v", r)
	}
	if _, err := h.e.Record(ctx, &memory.IntrospectRecordRequest{RecordID: first}); err == nil {
		t.Fatal("dormant consolidated source not pruned")
	}
	if s := h.stats(); s.RecordsByStore[memory.StoreEpisodic] != 0 || s.RecordsByStore[memory.StoreSemantic] != 2 {
		t.Fatalf("after full: %+v", s.RecordsByStore)
	}
}
