package engine

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/engine/dreamgroup"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// transcript is a small realistic coding-agent session: a topic about a
// flaky test, a private scratch note, a secret, then (after a long break) a
// new subject about the release.
var transcript = []struct {
	offset     time.Duration
	speaker    memory.RawSpeaker
	text       string
	topic      string
	visibility memory.Visibility
	secrecy    memory.SecrecyLevel
}{
	{0, memory.SpeakerUser, "The integration test TestUploadRetry is flaky on CI. It fails about one run in ten.", "", memory.VisibilityNormal, memory.SecrecyPublic},
	{time.Minute, memory.SpeakerAssistant, "The flaky test waits on a fixed sleep before checking the upload. A sleep races with the retry timer.", "", memory.VisibilityNormal, memory.SecrecyPublic},
	{2 * time.Minute, memory.SpeakerAssistant, "Scratch: maybe bump the timeout to 5s?", "", memory.VisibilityPrivateScratch, memory.SecrecyPublic},
	{3 * time.Minute, memory.SpeakerUser, "Use the staging token hunter2-zeta for the upload bucket.", "", memory.VisibilityNormal, memory.SecrecySecret},
	{4 * time.Minute, memory.SpeakerAssistant, "I replaced the sleep with a channel that the retry timer closes, so the flaky test now waits for the retry itself.", "", memory.VisibilityNormal, memory.SecrecyPublic},
	{5 * time.Minute, memory.SpeakerUser, "Great, the flaky upload test passed fifty runs in a row.", "", memory.VisibilityNormal, memory.SecrecyPublic},
	// Two hours later, a different subject.
	{2 * time.Hour, memory.SpeakerUser, "Let's cut release 2.4 on Thursday after the changelog is reviewed.", "", memory.VisibilityNormal, memory.SecrecyPublic},
	{2*time.Hour + time.Minute, memory.SpeakerAssistant, "The release checklist needs the changelog, the version bump and a signed tag.", "", memory.VisibilityNormal, memory.SecrecyPublic},
	// An explicit topic in the same session.
	{2*time.Hour + 2*time.Minute, memory.SpeakerUser, "Database migrations must be backward compatible for one release.", "schema", memory.VisibilityNormal, memory.SecrecySensitive},
	{2*time.Hour + 3*time.Minute, memory.SpeakerAssistant, "Noted: each migration ships one release before the code that needs it.", "schema", memory.VisibilityNormal, memory.SecrecyPublic},
}

func loadTranscript(t *testing.T, h *harness, session string) []memory.ID {
	t.Helper()
	base := h.clock.Now()
	var ids []memory.ID
	for _, tr := range transcript {
		h.clock.Set(base.Add(tr.offset))
		r := rawReq(session, tr.text)
		r.Speaker, r.Visibility, r.SecrecyLevel = tr.speaker, tr.visibility, tr.secrecy
		if tr.topic != "" {
			r.TopicID = ptr(tr.topic)
		}
		resp, err := h.e.EncodeStoreRaw(context.Background(), &r)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, resp.RecordID)
	}
	h.clock.Set(base.Add(3 * time.Hour))
	return ids
}

func dreamReq() *memory.DreamTickRequest {
	r := memory.DefaultDreamTickRequest()
	return &r
}

func summaries(t *testing.T, h *harness) map[memory.StoreType][]*memory.MemoryRecord {
	t.Helper()
	out := map[memory.StoreType][]*memory.MemoryRecord{}
	for _, st := range memory.PersistentStores() {
		if err := h.db.ScanRecords(store.DefaultNS, st, func(rec *memory.MemoryRecord) error {
			out[st] = append(out[st], rec)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestDreamTick(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := context.Background()
	ids := loadTranscript(t, h, "chat-7")
	if s := h.stats(); s.RawJournalPendingDream != 8 {
		t.Fatalf("pending before dream: %d (private and secret entries do not count)", s.RawJournalPendingDream)
	}

	// A dry run reports and changes nothing.
	dry := dreamReq()
	dry.DryRun = true
	resp, err := h.e.DreamTick(ctx, dry)
	if err != nil {
		t.Fatal(err)
	}
	if *resp != (memory.DreamTickResponse{GroupsProcessed: 3, RawRecordsProcessed: 8, EpisodicSummariesCreated: 3, SemanticNodesCreated: 3}) {
		t.Fatalf("dry run %+v", resp)
	}
	if s := h.stats(); s.TotalRecords != 0 || s.RawJournalPendingDream != 8 || s.LastDreamTickAt != nil {
		t.Fatalf("dry run wrote something: %+v", s)
	}

	resp, err = h.e.DreamTick(ctx, dreamReq())
	if err != nil {
		t.Fatal(err)
	}
	if *resp != (memory.DreamTickResponse{GroupsProcessed: 3, RawRecordsProcessed: 8, EpisodicSummariesCreated: 3, SemanticNodesCreated: 3}) {
		t.Fatalf("dream %+v", resp)
	}
	got := summaries(t, h)
	if len(got[memory.StoreEpisodic]) != 3 || len(got[memory.StoreSemantic]) != 3 {
		t.Fatalf("records: %d episodic %d semantic", len(got[memory.StoreEpisodic]), len(got[memory.StoreSemantic]))
	}
	texts := []string{}
	for _, rec := range got[memory.StoreEpisodic] {
		text, _ := rec.Content.Text()
		texts = append(texts, text)
	}
	slices.Sort(texts)
	all := strings.Join(texts, "\n")
	// Key facts of each subject reach their summary.
	for _, fact := range []string{"TestUploadRetry is flaky", "replaced the sleep with a channel", "passed fifty runs",
		"release 2.4 on Thursday", "signed tag", "backward compatible", "topic schema"} {
		if !strings.Contains(all, fact) {
			t.Errorf("summaries miss %q:\n%s", fact, all)
		}
	}
	// Secret and private text never does.
	for _, leak := range []string{"hunter2", "Scratch", "timeout to 5s"} {
		if strings.Contains(all, leak) {
			t.Errorf("summary leaks %q:\n%s", leak, all)
		}
	}
	if !strings.Contains(all, "session chat-7 / topic flaki+test+retri") {
		t.Errorf("inferred topic hint missing:\n%s", all)
	}

	// Provenance both ways.
	for _, rec := range got[memory.StoreEpisodic] {
		if rec.Meta.CaptureStatus != memory.CaptureInferred || len(rec.Meta.SourceRecordIDs) == 0 || len(rec.Meta.ContextEdges) != len(rec.Meta.SourceRecordIDs) {
			t.Fatalf("summary meta %+v", rec.Meta)
		}
		// The first association is the link to its semantic node (weight
		// 1); similarity links may follow.
		if len(rec.Associations) == 0 || rec.Associations[0].AssociationType != memory.AssocSemantic || rec.Associations[0].Weight != 1 {
			t.Fatalf("summary not linked to its semantic node: %+v", rec.Associations)
		}
		node := h.record(rec.Associations[0].TargetID)
		if node.Store != memory.StoreSemantic || node.Associations[0].TargetID != rec.ID {
			t.Fatalf("semantic node %+v does not link back", node)
		}
		for _, rawID := range rec.Meta.SourceRecordIDs {
			raw, err := h.db.GetRaw(store.DefaultNS, rawID)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(raw.DerivedMemoryIDs, rec.ID) || !slices.Contains(raw.DerivedMemoryIDs, rec.Associations[0].TargetID) {
				t.Fatalf("raw %s does not cite its summary and node: %v", rawID, raw.DerivedMemoryIDs)
			}
			if !store.IsDreamProcessed(raw) {
				t.Fatalf("raw %s not marked processed: %s", rawID, raw.Metadata)
			}
		}
	}
	// The private and secret entries were not included, so they are
	// still pending... but do not count as pending for a default dream.
	priv, _ := h.db.GetRaw(store.DefaultNS, ids[2])
	secret, _ := h.db.GetRaw(store.DefaultNS, ids[3])
	if store.IsDreamProcessed(priv) || store.IsDreamProcessed(secret) {
		t.Fatal("excluded entries were marked processed")
	}
	s := h.stats()
	if s.RawJournalPendingDream != 0 || s.DreamEpisodicSummaries != 3 || s.DreamSemanticNodes != 3 || s.LastDreamTickAt == nil || !s.LastDreamTickAt.Equal(h.clock.Now()) {
		t.Fatalf("stats after dream %+v", s)
	}

	// A second tick finds nothing new.
	resp, err = h.e.DreamTick(ctx, dreamReq())
	if err != nil || *resp != (memory.DreamTickResponse{}) {
		t.Fatalf("second tick %+v %v", resp, err)
	}
	if n := len(summaries(t, h)[memory.StoreEpisodic]); n != 3 {
		t.Fatalf("second tick created records: %d", n)
	}

	// Opting in to private and secret entries processes them, but their
	// text still never reaches a summary.
	in := dreamReq()
	in.IncludePrivateScratch = true
	in.SecrecyLevels = []memory.SecrecyLevel{memory.SecrecyPublic, memory.SecrecySensitive, memory.SecrecySecret}
	resp, err = h.e.DreamTick(ctx, in)
	if err != nil || resp.RawRecordsProcessed != 2 || resp.SemanticNodesCreated != 0 {
		t.Fatalf("opt-in tick %+v %v", resp, err)
	}
	for _, rec := range summaries(t, h)[memory.StoreEpisodic] {
		text, _ := rec.Content.Text()
		if strings.Contains(text, "hunter2") || strings.Contains(text, "timeout to 5s") {
			t.Fatalf("opt-in summary leaks: %s", text)
		}
	}
	// Reopening keeps the counters.
	before := h.stats()
	h.reopen()
	after := h.stats()
	if after.DreamEpisodicSummaries != before.DreamEpisodicSummaries || !after.LastDreamTickAt.Equal(*before.LastDreamTickAt) || after.RawJournalPendingDream != 0 {
		t.Fatalf("stats after reopen %+v", after)
	}
}

func TestDreamOptions(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := context.Background()
	loadTranscript(t, h, "a")
	loadTranscript(t, h, "b")

	// Session filter and max_groups.
	req := dreamReq()
	req.SessionID = ptr(" b ")
	req.MaxGroups = 1
	req.PromoteSemantic = false
	resp, err := h.e.DreamTick(ctx, req)
	if err != nil || resp.GroupsProcessed != 1 || resp.SemanticNodesCreated != 0 || resp.RawRecordsProcessed != 4 {
		t.Fatalf("filtered tick %+v %v", resp, err)
	}
	got := summaries(t, h)
	if len(got[memory.StoreEpisodic]) != 1 || len(got[memory.StoreSemantic]) != 0 {
		t.Fatalf("promote-semantic=false created %d semantic records", len(got[memory.StoreSemantic]))
	}
	var md struct {
		Origin struct {
			Session string `json:"raw_session_id"`
		} `json:"_origin"`
	}
	if err := json.Unmarshal(got[memory.StoreEpisodic][0].Metadata, &md); err != nil || md.Origin.Session != "b" {
		t.Fatalf("summary origin %s", got[memory.StoreEpisodic][0].Metadata)
	}
	if s := h.stats(); s.RawJournalPendingDream != 12 {
		t.Fatalf("pending %d", s.RawJournalPendingDream)
	}
	// Non-object metadata on a raw entry survives marking.
	r := rawReq("c", "note one about caching layers")
	r.Metadata = memory.JSON(`["keep", "me"]`)
	res, err := h.e.EncodeStoreRaw(ctx, &r)
	if err != nil {
		t.Fatal(err)
	}
	req = dreamReq()
	req.SessionID = ptr("c")
	if _, err := h.e.DreamTick(ctx, req); err != nil {
		t.Fatal(err)
	}
	raw, _ := h.db.GetRaw(store.DefaultNS, res.RecordID)
	if !strings.Contains(string(raw.Metadata), `"_metadata":["keep","me"]`) || !store.IsDreamProcessed(raw) {
		t.Fatalf("raw metadata after marking: %s", raw.Metadata)
	}
}

// TestDreamReadsWithoutTheEngine: a tick reads and groups the pending
// entries without holding the engine (a dry run completes while another
// operation holds it exclusively), and holds it only to write a group.
func TestDreamReadsWithoutTheEngine(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: -1})
	loadTranscript(t, h, "s1")
	req := dreamReq()
	req.DryRun = true
	done := make(chan *memory.DreamTickResponse, 1)
	h.e.big.Lock()
	go func() {
		resp, err := h.e.DreamTick(context.Background(), req)
		if err != nil {
			t.Error(err)
		}
		done <- resp
	}()
	var resp *memory.DreamTickResponse
	select {
	case resp = <-done:
	case <-time.After(time.Minute):
	}
	h.e.big.Unlock()
	if resp == nil {
		<-done
		t.Fatal("a dry-run dream tick waited for the engine")
	}
	if resp.GroupsProcessed == 0 {
		t.Fatalf("dry run %+v found nothing to do", resp)
	}
}

// TestDreamSkipsChangedGroup: a group whose entries were processed (or
// replaced) between the tick's read and its write is not written again.
func TestDreamSkipsChangedGroup(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: -1})
	loadTranscript(t, h, "s1")
	ns := h.e.defaultSpace()
	groups, err := h.e.dreamGroups(context.Background(), ns, nil, newRawFilter(false, false, nil), 10)
	if err != nil || len(groups) == 0 {
		t.Fatalf("groups %d, %v", len(groups), err)
	}
	if _, err := h.e.DreamTick(context.Background(), dreamReq()); err != nil {
		t.Fatal(err)
	}
	before := len(summaries(t, h)[memory.StoreEpisodic])
	g := groups[0]
	if err := h.e.dreamGroup(ns, g, dreamgroup.PlanGroup(g, true), h.clock.Now()); !errors.Is(err, errGroupChanged) {
		t.Fatalf("writing a group already processed: %v, want errGroupChanged", err)
	}
	if after := len(summaries(t, h)[memory.StoreEpisodic]); after != before {
		t.Fatalf("%d summaries after the stale write, %d before", after, before)
	}
}
