package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testsync"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

type harness struct {
	t     *testing.T
	dir   string
	db    *store.DB
	e     *Engine
	clock *testsync.Clock
	opts  Options
}

func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	h := &harness{t: t, dir: t.TempDir(), clock: testsync.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))}
	opts.Now = h.clock.Now
	h.opts = opts
	h.open()
	t.Cleanup(h.close)
	return h
}

func (h *harness) open() {
	h.t.Helper()
	db, err := store.Open(h.dir, store.Options{})
	if err != nil {
		h.t.Fatal(err)
	}
	e, err := Open(context.Background(), db, h.opts)
	if err != nil {
		h.t.Fatal(err)
	}
	h.db, h.e = db, e
}

func (h *harness) close() {
	if h.e == nil {
		return
	}
	if err := h.e.Close(); err != nil {
		h.t.Error(err)
	}
	if err := h.db.Close(); err != nil {
		h.t.Error(err)
	}
	h.e, h.db = nil, nil
}

func (h *harness) reopen() {
	h.t.Helper()
	h.close()
	h.open()
}

func (h *harness) store(text string, st memory.StoreType) memory.ID {
	h.t.Helper()
	return storeText(h.t, h.e, text, st)
}

// storeText stores text as a memory of store st in e and returns its id.
func storeText(t testing.TB, e *Engine, text string, st memory.StoreType) memory.ID {
	t.Helper()
	resp, err := e.EncodeStore(context.Background(), &memory.EncodeStoreRequest{Content: memory.TextContent(text), Store: &st})
	if err != nil {
		t.Fatal(err)
	}
	return resp.RecordID
}

func (h *harness) record(id memory.ID) *memory.MemoryRecord {
	h.t.Helper()
	rec, err := h.e.Record(context.Background(), &memory.IntrospectRecordRequest{RecordID: id})
	if err != nil {
		h.t.Fatal(err)
	}
	return rec
}

func (h *harness) stats() *memory.Stats {
	h.t.Helper()
	s, err := h.e.Stats(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

// checkStats runs check on the stats, then again after a reopen (so on
// what was written to disk).
func (h *harness) checkStats(check func(s *memory.Stats, when string)) {
	h.t.Helper()
	check(h.stats(), "before reopen")
	h.reopen()
	check(h.stats(), "after reopen")
}

func ptr[T any](v T) *T { return &v }

func wantCode(t *testing.T, err error, code memory.Code, mention string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want %s error, got nil", code)
	}
	if got := memory.CodeOf(err); got != code {
		t.Fatalf("want code %s, got %s (%v)", code, got, err)
	}
	if !strings.Contains(err.Error(), mention) {
		t.Fatalf("error %q does not mention %q", err, mention)
	}
}

func TestEncodeStoreAndRecord(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := context.Background()
	emo := memory.EmotionVector{Joy: 0.6, Intensity: 0.5, Valence: 0.4}
	resp, err := h.e.EncodeStore(ctx, &memory.EncodeStoreRequest{
		Content:  memory.TextContent("the build is green"),
		Emotion:  &emo,
		Metadata: memory.JSON(`{"src":"chat"}`),
		Context:  &memory.EncodeContext{SessionID: ptr("s1")},
		Associations: []memory.ManualAssociation{
			{TargetID: memory.MustParseID("01890a5d-ac96-774b-bcce-b302099a8057"), AssociationType: memory.AssocCausal, Weight: 0.4},
		},
		Meta: &memory.MetaMemory{SchemaVersion: 1, CaptureStatus: memory.CaptureLegacy, Intent: ptr("record build state")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Store != memory.StoreEpisodic || resp.InitialFidelity != 1 || resp.AssociationsCreated != 1 {
		t.Fatalf("response %+v", resp)
	}
	rec := h.record(resp.RecordID)
	text, _ := rec.Content.Text()
	if text != "the build is green" || rec.Version != 1 || rec.Store != memory.StoreEpisodic {
		t.Fatalf("record %+v", rec)
	}
	if !rec.CreatedAt.Equal(h.clock.Now()) {
		t.Errorf("created_at %v", rec.CreatedAt)
	}
	if got, want := string(rec.Metadata), `{"_context":{"source":null,"session_id":"s1","spatial":null,"temporal":null},"src":"chat"}`; got != want {
		t.Errorf("metadata\n got %s\nwant %s", got, want)
	}
	if rec.Meta.CaptureStatus != memory.CaptureProvided || *rec.Meta.Trigger != "encode.store" || rec.Meta.CapturedAt == nil {
		t.Errorf("meta not normalised: %+v", rec.Meta)
	}
	// Our decay model: episodic stability 1 day, anchor 1 + 2·intensity.
	if rec.Fidelity.Stability != 1 || rec.Fidelity.EmotionalAnchor != 2 || rec.Fidelity.DecayRate != 0.5 {
		t.Errorf("fidelity %+v", rec.Fidelity)
	}
	if len(rec.Associations) != 1 || rec.Associations[0].Weight != 0.4 {
		t.Errorf("associations %+v", rec.Associations)
	}

	// Auto-routing: a summary sends the record to semantic.
	resp, err = h.e.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: memory.MemoryContent{Blocks: []memory.ContentBlock{memory.TextBlock("fact")}, Summary: ptr("")}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Store != memory.StoreSemantic || h.record(resp.RecordID).Fidelity.Stability != 30 {
		t.Errorf("auto-routing gave %s", resp.Store)
	}

	// Non-object metadata is wrapped when a context is given.
	resp, err = h.e.EncodeStore(ctx, &memory.EncodeStoreRequest{
		Content: memory.TextContent("x"), Metadata: memory.JSON(`[1,2]`), Context: &memory.EncodeContext{},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(h.record(resp.RecordID).Metadata); got != `{"_context":{"source":null,"session_id":null,"spatial":null,"temporal":null},"_metadata":[1,2]}` {
		t.Errorf("wrapped metadata %s", got)
	}

	// Everything survives a restart.
	h.reopen()
	again := h.record(rec.ID)
	a, _ := json.Marshal(rec)
	b, _ := json.Marshal(again)
	if string(a) != string(b) {
		t.Fatalf("record changed across reopen:\n%s\n%s", a, b)
	}
}

// TestBadInputWritesNothing: every kind of bad input is a clear client
// error and leaves the stores untouched.
func TestBadInputWritesNothing(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := context.Background()
	bad := memory.StoreType(42)
	nan := float32(0)
	nan = nan / nan
	tests := []struct {
		name    string
		req     memory.EncodeStoreRequest
		code    memory.Code
		mention string
	}{
		{"no blocks", memory.EncodeStoreRequest{}, memory.CodeValidation, "content.blocks"},
		{"unknown store", memory.EncodeStoreRequest{Content: memory.TextContent("x"), Store: &bad}, memory.CodeValidation, "store"},
		{"too large", memory.EncodeStoreRequest{Content: memory.TextContent(strings.Repeat("a", memory.MaxTextBlockBytes+1))}, memory.CodeContentTooLarge, "content.blocks[0].data"},
		{"invalid utf-8", memory.EncodeStoreRequest{Content: memory.MemoryContent{Blocks: []memory.ContentBlock{{Modality: memory.ModalityText, Format: "text/plain", Data: memory.Bytes{0xff, 0xfe}}}}}, memory.CodeValidation, "not valid UTF-8"},
		{"nan embedding", memory.EncodeStoreRequest{Content: memory.MemoryContent{Blocks: []memory.ContentBlock{{Modality: memory.ModalityText, Format: "text/plain", Data: memory.Bytes("x"), Embedding: []float32{1, nan}}}}}, memory.CodeValidation, "embedding[1]"},
		{"empty embedding", memory.EncodeStoreRequest{Content: memory.MemoryContent{Blocks: []memory.ContentBlock{{Modality: memory.ModalityText, Format: "text/plain", Data: memory.Bytes("x"), Embedding: []float32{}}}}}, memory.CodeValidation, "embedding"},
		{"bad weight", memory.EncodeStoreRequest{Content: memory.TextContent("x"), Associations: []memory.ManualAssociation{{TargetID: memory.MustParseID("01890a5d-ac96-774b-bcce-b302099a8057"), AssociationType: memory.AssocCausal, Weight: 1.5}}}, memory.CodeValidation, "associations[0].weight"},
		{"nil target", memory.EncodeStoreRequest{Content: memory.TextContent("x"), Associations: []memory.ManualAssociation{{AssociationType: memory.AssocCausal, Weight: 0.5}}}, memory.CodeValidation, "associations[0].target_id"},
		{"bad meta", memory.EncodeStoreRequest{Content: memory.TextContent("x"), Meta: &memory.MetaMemory{SchemaVersion: 1, CaptureStatus: memory.CaptureProvided, Confidence: ptr(2.0)}}, memory.CodeValidation, "meta.confidence"},
		{"bad structured", memory.EncodeStoreRequest{Content: memory.MemoryContent{Blocks: []memory.ContentBlock{{Modality: memory.ModalityStructured, Format: "application/json", Data: memory.Bytes("{nope")}}}}, memory.CodeValidation, "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.e.EncodeStore(ctx, &tt.req)
			wantCode(t, err, tt.code, tt.mention)
		})
	}
	// A batch with one bad record writes none of them.
	_, err := h.e.EncodeBatch(ctx, &memory.EncodeBatchRequest{Records: []memory.EncodeStoreRequest{
		{Content: memory.TextContent("good")}, {Content: memory.TextContent("")}, {},
	}})
	wantCode(t, err, memory.CodeValidation, "records[2].content.blocks")
	h.checkStats(func(s *memory.Stats, when string) {
		if s.TotalRecords != 0 {
			t.Fatalf("%s: bad input wrote %d records", when, s.TotalRecords)
		}
	})
}

func TestEncodeBatch(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := context.Background()
	recs := make([]memory.EncodeStoreRequest, 4)
	for i := range recs {
		recs[i] = memory.EncodeStoreRequest{Content: memory.TextContent(fmt.Sprintf("step %d", i))}
	}
	resp, err := h.e.EncodeBatch(ctx, &memory.EncodeBatchRequest{Records: recs, InferAssociations: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) != 4 || resp.AssociationsInferred != 6 {
		t.Fatalf("response %+v", resp)
	}
	mid := h.record(resp.Results[1].RecordID)
	if len(mid.Associations) != 2 || mid.Associations[0].TargetID != resp.Results[0].RecordID ||
		mid.Associations[1].TargetID != resp.Results[2].RecordID || mid.Associations[0].AssociationType != memory.AssocSequential ||
		mid.Associations[0].Weight != 0.7 {
		t.Fatalf("sequential associations %+v", mid.Associations)
	}
	if s := h.stats(); s.TotalAssociations != 6 || s.TotalRecords != 4 {
		t.Fatalf("stats %+v", s)
	}

	over := make([]memory.EncodeStoreRequest, memory.MaxBatchRecords+1)
	_, err = h.e.EncodeBatch(ctx, &memory.EncodeBatchRequest{Records: over})
	wantCode(t, err, memory.CodeValidation, "1001 exceeds the maximum of 1000")
}

func TestEncodeUpdate(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := context.Background()
	id := h.store("first", memory.StoreEpisodic)
	h.clock.Advance(time.Minute)
	newText := memory.TextContent("second")
	emo := memory.EmotionVector{Fear: 1, Intensity: 1}
	if err := h.e.EncodeUpdate(ctx, &memory.EncodeUpdateRequest{RecordID: id, Content: &newText, Emotion: &emo, Metadata: memory.JSON(`{"k":1}`)}); err != nil {
		t.Fatal(err)
	}
	rec := h.record(id)
	text, _ := rec.Content.Text()
	// The emotion is updated; the anchor stays the one set at creation.
	if text != "second" || rec.Version != 2 || rec.Emotion.Fear != 1 || rec.Fidelity.EmotionalAnchor != 1 ||
		string(rec.Metadata) != `{"k":1}` || !rec.UpdatedAt.Equal(h.clock.Now()) || rec.CreatedAt.Equal(rec.UpdatedAt) {
		t.Fatalf("updated record %+v", rec)
	}
	if rec.Meta.CaptureStatus != memory.CaptureUnavailable {
		t.Errorf("meta changed without being given")
	}

	err := h.e.EncodeUpdate(ctx, &memory.EncodeUpdateRequest{RecordID: id})
	wantCode(t, err, memory.CodeValidation, "nothing to update")
	missing := memory.MustParseID("01890a5d-ac96-774b-bcce-b302099a8057")
	err = h.e.EncodeUpdate(ctx, &memory.EncodeUpdateRequest{RecordID: missing, Content: &newText})
	wantCode(t, err, memory.CodeNotFound, missing.String())
	if !errors.Is(err, memory.ErrNotFound) {
		t.Error("not found error does not match the sentinel")
	}
	empty := memory.MemoryContent{}
	err = h.e.EncodeUpdate(ctx, &memory.EncodeUpdateRequest{RecordID: id, Content: &empty})
	wantCode(t, err, memory.CodeValidation, "content.blocks")
	if h.record(id).Version != 2 {
		t.Error("failed update changed the record")
	}
}

func rawReq(session, text string) memory.EncodeStoreRawRequest {
	r := memory.DefaultEncodeStoreRawRequest()
	r.SessionID = session
	r.Content = memory.TextContent(text)
	return r
}

func TestRawJournal(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := context.Background()
	put := func(r memory.EncodeStoreRawRequest) memory.ID {
		t.Helper()
		h.clock.Advance(time.Second)
		resp, err := h.e.EncodeStoreRaw(ctx, &r)
		if err != nil {
			t.Fatal(err)
		}
		return resp.RecordID
	}
	a1 := put(rawReq("a", "alpha one about deploys"))
	a2 := put(rawReq("a", "alpha two about rollbacks"))
	priv := rawReq("a", "alpha private")
	priv.Visibility = memory.VisibilityPrivateScratch
	put(priv)
	secret := rawReq("ab", "ab secret")
	secret.SecrecyLevel = memory.SecrecySecret
	s1 := put(secret)
	b1 := put(rawReq("b", "beta about deploys"))

	query := func(req memory.RecallRawQueryRequest) ([]memory.ID, uint32) {
		t.Helper()
		resp, err := h.e.RecallRaw(ctx, &req)
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]memory.ID, len(resp.Records))
		for i, r := range resp.Records {
			ids[i] = r.ID
		}
		return ids, resp.TotalCandidates
	}
	eq := func(got []memory.ID, want ...memory.ID) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("got %v want %v", got, want)
		}
	}
	req := memory.DefaultRecallRawQueryRequest()
	ids, total := query(req)
	eq(ids, b1, a2, a1) // newest first; private and secret hidden by default
	if total != 3 {
		t.Errorf("total %d", total)
	}
	req.SessionID = ptr(" a ")
	ids, _ = query(req)
	eq(ids, a2, a1) // session "a" does not bleed into "ab"
	req.IncludePrivateScratch = true
	req.Limit = 1
	ids, total = query(req)
	if len(ids) != 1 || total != 3 {
		t.Fatalf("limit 1: %v total %d", ids, total)
	}
	req = memory.DefaultRecallRawQueryRequest()
	req.SecrecyLevels = []memory.SecrecyLevel{memory.SecrecySecret}
	ids, _ = query(req)
	eq(ids, s1)
	req.SecrecyLevels = []memory.SecrecyLevel{}
	ids, total = query(req)
	eq(ids)
	if total != 0 {
		t.Errorf("empty secrecy list matched %d", total)
	}
	req = memory.DefaultRecallRawQueryRequest()
	req.Query = ptr("About DEPLOYS")
	ids, _ = query(req)
	eq(ids, b1, a1)
	req = memory.DefaultRecallRawQueryRequest()
	req.Limit = 0
	ids, total = query(req)
	eq(ids)
	if total != 3 {
		t.Errorf("limit 0 total %d", total)
	}
	start := h.clock.Now().Add(-4 * time.Second)
	req = memory.DefaultRecallRawQueryRequest()
	req.Temporal = &memory.TemporalRange{Start: start, End: start.Add(time.Second)}
	ids, _ = query(req)
	eq(ids, a2, a1)
	req.Temporal = &memory.TemporalRange{Start: start.Add(time.Hour), End: start}
	_, err := h.e.RecallRaw(ctx, &req)
	wantCode(t, err, memory.CodeValidation, "temporal")

	if s := h.stats(); s.RawJournalRecords != 5 || s.RawJournalPendingDream != 3 {
		t.Errorf("raw stats %d pending %d", s.RawJournalRecords, s.RawJournalPendingDream)
	}
	h.reopen()
	if s := h.stats(); s.RawJournalRecords != 5 || s.RawJournalPendingDream != 3 {
		t.Errorf("raw stats after reopen %d pending %d", s.RawJournalRecords, s.RawJournalPendingDream)
	}
}

// TestRawClientIDs: a client-supplied id makes a repeated entry a no-op,
// in single requests, across batches and within one batch.
func TestRawClientIDs(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := context.Background()
	id := memory.MustParseID("01890a5d-ac96-774b-bcce-b302099a8057")
	r := rawReq("s", "hello")
	r.RecordID = &id
	first, err := h.e.EncodeStoreRaw(ctx, &r)
	if err != nil || first.RecordID != id || first.Duplicate {
		t.Fatalf("first %+v %v", first, err)
	}
	r.Content = memory.TextContent("changed")
	again, err := h.e.EncodeStoreRaw(ctx, &r)
	if err != nil || !again.Duplicate || again.RecordID != id {
		t.Fatalf("replay %+v %v", again, err)
	}
	other := memory.MustParseID("01890a5d-ac96-774b-bcce-b302099a8058")
	r2 := rawReq("s", "second")
	r2.RecordID = &other
	resp, err := h.e.EncodeBatchRaw(ctx, &memory.EncodeBatchStoreRawRequest{Records: []memory.EncodeStoreRawRequest{r, r2, r2}})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Results[0].Duplicate || resp.Results[1].Duplicate || !resp.Results[2].Duplicate {
		t.Fatalf("batch results %+v", resp.Results)
	}
	if s := h.stats(); s.RawJournalRecords != 2 {
		t.Fatalf("raw records %d", s.RawJournalRecords)
	}
	rr, err := h.e.RecallRaw(ctx, ptr(memory.DefaultRecallRawQueryRequest()))
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := rr.Records[1].Content.Text(); text != "hello" {
		t.Errorf("replay overwrote the entry: %q", text)
	}

	bad := rawReq("  ", "x")
	_, err = h.e.EncodeStoreRaw(ctx, &bad)
	wantCode(t, err, memory.CodeValidation, "session_id")
	over := make([]memory.EncodeStoreRawRequest, memory.MaxBatchRecords+1)
	_, err = h.e.EncodeBatchRaw(ctx, &memory.EncodeBatchStoreRawRequest{Records: over})
	wantCode(t, err, memory.CodeValidation, "exceeds the maximum of 1000")
	nilID := memory.ID{}
	bad = rawReq("s", "x")
	bad.RecordID = &nilID
	_, err = h.e.EncodeStoreRaw(ctx, &bad)
	wantCode(t, err, memory.CodeValidation, "record_id")
}

func TestForget(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := context.Background()
	a := h.store("a", memory.StoreEpisodic)
	b := h.store("b", memory.StoreSemantic)
	resp, err := h.e.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: memory.TextContent("c"), Associations: []memory.ManualAssociation{
		{TargetID: a, AssociationType: memory.AssocCausal, Weight: 0.5},
		{TargetID: b, AssociationType: memory.AssocSemantic, Weight: 0.5},
	}})
	if err != nil {
		t.Fatal(err)
	}
	c := resp.RecordID

	_, err = h.e.Forget(ctx, &memory.ForgetRequest{RecordIDs: []memory.ID{a}})
	wantCode(t, err, memory.CodeValidation, "confirm")
	_, err = h.e.Forget(ctx, &memory.ForgetRequest{RecordIDs: []memory.ID{a}, Confirm: ptr(false)})
	wantCode(t, err, memory.CodeForgetUnconfirmed, "confirm")
	if h.stats().TotalRecords != 3 {
		t.Fatal("unconfirmed forget deleted something")
	}

	// Deleting a removes c's edge to it in the same commit.
	out, err := h.e.Forget(ctx, &memory.ForgetRequest{RecordIDs: []memory.ID{a}, Confirm: ptr(true)})
	if err != nil || out.RecordsDeleted != 1 {
		t.Fatalf("forget a: %+v %v", out, err)
	}
	crec := h.record(c)
	if len(crec.Associations) != 1 || crec.Associations[0].TargetID != b || crec.Version != 2 {
		t.Fatalf("dangling edge left: %+v", crec.Associations)
	}
	if _, err := h.e.Record(ctx, &memory.IntrospectRecordRequest{RecordID: a}); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("a still readable: %v", err)
	}
	if s := h.stats(); s.TotalAssociations != 1 || s.TotalRecords != 2 {
		t.Fatalf("stats %+v", s)
	}

	// Cascade follows c's direct edges.
	out, err = h.e.Forget(ctx, &memory.ForgetRequest{RecordIDs: []memory.ID{c}, Cascade: true, Confirm: ptr(true)})
	if err != nil || out.RecordsDeleted != 2 {
		t.Fatalf("cascade: %+v %v", out, err)
	}
	h.reopen()
	if s := h.stats(); s.TotalRecords != 0 || s.TotalAssociations != 0 {
		t.Fatalf("after reopen %+v", s)
	}

	// Store and time-range selectors are unioned.
	e1 := h.store("e1", memory.StoreEpisodic)
	h.clock.Advance(time.Hour)
	h.store("p1", memory.StoreProcedural)
	s1 := h.store("s1", memory.StoreSemantic)
	out, err = h.e.Forget(ctx, &memory.ForgetRequest{
		Store:         ptr(memory.StoreProcedural),
		TemporalRange: &memory.TemporalRange{Start: h.record(e1).CreatedAt, End: h.record(e1).CreatedAt},
		Confirm:       ptr(true),
	})
	if err != nil || out.RecordsDeleted != 2 {
		t.Fatalf("selectors: %+v %v", out, err)
	}
	if h.record(s1).Store != memory.StoreSemantic || h.stats().TotalRecords != 1 {
		t.Fatal("selectors deleted too much")
	}
	// Unknown ids are not an error.
	out, err = h.e.Forget(ctx, &memory.ForgetRequest{RecordIDs: []memory.ID{a}, Confirm: ptr(true)})
	if err != nil || out.RecordsDeleted != 0 {
		t.Fatalf("unknown id: %+v %v", out, err)
	}
}

func TestStats(t *testing.T) {
	h := newHarness(t, Options{})
	s := h.stats()
	if s.TotalRecords != 0 || s.AvgFidelity != 0 || s.OldestRecord != nil || len(s.AvgFidelityByStore) != 0 || len(s.RecordsByStore) != 5 {
		t.Fatalf("empty stats %+v", s)
	}
	first := h.clock.Now()
	h.store("one", memory.StoreEpisodic)
	h.clock.Advance(time.Hour)
	h.store("two", memory.StoreProcedural)
	ctx := context.Background()
	content := memory.TextContent("vec")
	content.Blocks[0].Embedding = []float32{0.1, 0.2}
	if _, err := h.e.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: content}); err != nil {
		t.Fatal(err)
	}
	s = h.stats()
	if s.TotalRecords != 3 || s.RecordsByStore[memory.StoreEpisodic] != 2 || s.RecordsByStore[memory.StoreProcedural] != 1 ||
		s.RecordsByStore[memory.StoreWorking] != 0 || s.AvgFidelity != 1 || s.AvgFidelityByStore[memory.StoreProcedural] != 1 ||
		s.VectorIndexRecords != 1 || !s.OldestRecord.Equal(first) || !s.NewestRecord.Equal(first.Add(time.Hour)) {
		t.Fatalf("stats %+v", s)
	}
	if _, ok := s.AvgFidelityByStore[memory.StoreSemantic]; ok {
		t.Error("avg_fidelity_by_store lists an empty store")
	}
	b, _ := json.Marshal(s)
	h.reopen()
	b2, _ := json.Marshal(h.stats())
	if string(b) != string(b2) {
		t.Fatalf("stats differ after reopen:\n%s\n%s", b, b2)
	}
}

// TestWorkingStore: the working store holds capacity records in memory and
// moves the least recently accessed one to episodic instead of losing it.
func TestWorkingStore(t *testing.T) {
	h := newHarness(t, Options{WorkingCapacity: 2})
	w1 := h.store("w1", memory.StoreWorking)
	h.clock.Advance(time.Second)
	w2 := h.store("w2", memory.StoreWorking)
	h.clock.Advance(time.Second)
	w3 := h.store("w3", memory.StoreWorking)
	if st := h.record(w1).Store; st != memory.StoreEpisodic {
		t.Fatalf("evicted record is in %s, want episodic", st)
	}
	if h.record(w2).Store != memory.StoreWorking || h.record(w3).Store != memory.StoreWorking {
		t.Fatal("newer records left the working store")
	}
	s := h.stats()
	if s.RecordsByStore[memory.StoreWorking] != 2 || s.RecordsByStore[memory.StoreEpisodic] != 1 {
		t.Fatalf("stats %+v", s.RecordsByStore)
	}
	// A batch larger than the capacity promotes its own first records.
	reqs := []memory.EncodeStoreRequest{}
	for i := 0; i < 3; i++ {
		reqs = append(reqs, memory.EncodeStoreRequest{Content: memory.TextContent(fmt.Sprint(i)), Store: ptr(memory.StoreWorking)})
	}
	resp, err := h.e.EncodeBatch(context.Background(), &memory.EncodeBatchRequest{Records: reqs})
	if err != nil {
		t.Fatal(err)
	}
	if h.record(resp.Results[0].RecordID).Store != memory.StoreEpisodic || h.record(resp.Results[2].RecordID).Store != memory.StoreWorking {
		t.Fatal("batch overflow not promoted in order")
	}
	if s := h.stats(); s.RecordsByStore[memory.StoreWorking] != 2 || s.RecordsByStore[memory.StoreEpisodic] != 4 {
		t.Fatalf("after batch %+v", s.RecordsByStore)
	}
	// Working records are volatile; promoted ones are durable.
	h.reopen()
	if h.record(w1).Store != memory.StoreEpisodic {
		t.Fatal("promoted record lost on restart")
	}
	if h.record(w3).Store != memory.StoreEpisodic {
		t.Fatal("record promoted by the batch lost on restart")
	}
	if _, err := h.e.Record(context.Background(), &memory.IntrospectRecordRequest{RecordID: resp.Results[2].RecordID}); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("working record survived a restart: %v", err)
	}
	if s := h.stats(); s.RecordsByStore[memory.StoreWorking] != 0 || s.RecordsByStore[memory.StoreEpisodic] != 4 {
		t.Fatalf("after reopen %+v", s.RecordsByStore)
	}
}

// TestConcurrentWriters runs stores, updates, raw appends, stats and
// forgets at once; under -race this checks the locking, and the final
// counts check that nothing was lost.
func TestConcurrentWriters(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := context.Background()
	seed := h.store("seed", memory.StoreEpisodic)
	const workers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*each*3)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				st := memory.PersistentStores()[i%4]
				if _, err := h.e.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: memory.TextContent(fmt.Sprint(w, i)), Store: &st}); err != nil {
					errs <- err
				}
				c := memory.TextContent(fmt.Sprint("update ", w, i))
				if err := h.e.EncodeUpdate(ctx, &memory.EncodeUpdateRequest{RecordID: seed, Content: &c}); err != nil {
					errs <- err
				}
				r := rawReq(fmt.Sprint("s", w), "raw")
				if _, err := h.e.EncodeStoreRaw(ctx, &r); err != nil {
					errs <- err
				}
				if _, err := h.e.Stats(ctx); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := h.e.syncLinks(t.Context()); err != nil {
		t.Fatal(err)
	}
	s := h.stats()
	if s.TotalRecords != workers*each+1 || s.RawJournalRecords != workers*each {
		t.Fatalf("lost writes: %d records, %d raw", s.TotalRecords, s.RawJournalRecords)
	}
	// Every update bumps the version once, and so does every similarity
	// link another store added to the seed.
	rec := h.record(seed)
	if want := uint32(workers*each + 1 + len(rec.Associations)); rec.Version != want {
		t.Fatalf("lost updates: version %d, want %d (%d links)", rec.Version, want, len(rec.Associations))
	}
}

// defaultSpace is the default namespace's state.
func (e *Engine) defaultSpace() *nsState { return e.space(context.Background()) }
