package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// TestConsolidateCopiesInChunks: a consolidation commits its copies
// copyChunk records at a time, one audit entry per chunk naming each
// source and its copy, and a second run finds every copy up to date.
func TestConsolidateCopiesInChunks(t *testing.T) {
	h, path := auditHarness(t)
	ctx := context.Background()
	const n = copyChunk + copyChunk/2 + 1 // two chunks, the second short
	var reqs []memory.EncodeStoreRequest
	for i := range n {
		reqs = append(reqs, memory.EncodeStoreRequest{Content: memory.TextContent(fmt.Sprintf("chunked note %d about %s", i, crashWord(i%400)))})
	}
	if _, err := h.e.EncodeBatch(ctx, &memory.EncodeBatchRequest{Records: reqs}); err != nil {
		t.Fatal(err)
	}
	req := &memory.ConsolidateRequest{Strategy: memory.ConsolidateIncremental}
	resp, err := h.e.Consolidate(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.SemanticNodesCreated != n {
		t.Fatalf("%d copies, want %d", resp.SemanticNodesCreated, n)
	}
	if err := h.e.syncAudit(); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, l := range readAudit(t, path) {
		var sum struct{ Step string }
		if l.Operation != audit.OpConsolidate || json.Unmarshal(l.Summary, &sum) != nil || sum.Step != "copy" {
			continue
		}
		sizes = append(sizes, len(l.RecordIDs))
	}
	if len(sizes) != 2 || sizes[0] != 2*copyChunk || sizes[1] != 2*(n-copyChunk) {
		t.Fatalf("copy audit entries name %v ids, want [%d %d]", sizes, 2*copyChunk, 2*(n-copyChunk))
	}
	again, err := h.e.Consolidate(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if again.RecordsMigrated != 0 || again.SemanticNodesCreated != 0 {
		t.Fatalf("second run: %+v, want nothing to do", again)
	}
}

// TestConsolidateLetsRecallsThrough: a consolidation holds the engine one
// chunk at a time, so a recall issued while it copies answers before it
// ends.
func TestConsolidateLetsRecallsThrough(t *testing.T) {
	var (
		h        *harness
		started  bool
		answered atomic.Bool
		before   bool // answered before the last copy chunk
		copies   int
		errc     = make(chan error, 1)
	)
	const chunks = 12
	h = newHarness(t, Options{SimilarLinks: -1, consolidationStepped: func(step string) {
		if step != "copy" {
			return
		}
		copies++
		if !started {
			started = true
			go func() {
				req := memory.DefaultRecallQueryRequest()
				req.Cue.Text = ptr("chunked note")
				_, err := h.e.RecallQuery(context.Background(), &req)
				answered.Store(true)
				errc <- err
			}()
		}
		if copies == chunks {
			before = answered.Load()
		}
	}})
	ctx := context.Background()
	for i := 0; i < chunks*copyChunk; i += 500 {
		var reqs []memory.EncodeStoreRequest
		for j := i; j < min(i+500, chunks*copyChunk); j++ {
			reqs = append(reqs, memory.EncodeStoreRequest{Content: memory.TextContent(fmt.Sprintf("chunked note %d about %s", j, crashWord(j%400)))})
		}
		if _, err := h.e.EncodeBatch(ctx, &memory.EncodeBatchRequest{Records: reqs}); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := h.e.Consolidate(ctx, &memory.ConsolidateRequest{Strategy: memory.ConsolidateFull})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if copies != chunks || resp.SemanticNodesCreated != chunks*copyChunk {
		t.Fatalf("%d copy chunks, %+v: want %d chunks of %d", copies, resp, chunks, copyChunk)
	}
	if !before {
		t.Fatal("a recall issued during the first copy chunk waited for the whole consolidation")
	}
}

// TestConsolidateDryRunWithMerges: with near-duplicates to merge, a dry
// run reports what the run then does, and the kept record's copy is
// refreshed by the merge (the next run finds nothing to do).
func TestConsolidateDryRunWithMerges(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: -1})
	ctx := context.Background()
	other := h.store("Lunch orders close at eleven sharp on Fridays.", memory.StoreEpisodic)
	first := h.store("The staging cluster is rebuilt every night at two.", memory.StoreEpisodic)
	consolidate(t, h, nil)
	resp, err := h.e.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: memory.TextContent("The staging cluster is rebuilt every night at two!"),
		Associations: []memory.ManualAssociation{{TargetID: other, AssociationType: memory.AssocCausal, Weight: 0.4}}})
	if err != nil {
		t.Fatal(err)
	}
	full := func(r *memory.ConsolidateRequest) { r.Strategy = memory.ConsolidateFull }
	dry := consolidate(t, h, func(r *memory.ConsolidateRequest) { full(r); r.DryRun = true })
	got := consolidate(t, h, full)
	if got != dry || got.RecordsCompressed != 1 {
		t.Fatalf("run %+v, dry run %+v: want equal, one merge", got, dry)
	}
	if _, err := h.e.Record(ctx, &memory.IntrospectRecordRequest{RecordID: resp.RecordID}); err == nil {
		t.Fatal("the duplicate is still there")
	}
	kept := h.record(first)
	if !slices.ContainsFunc(kept.Associations, func(a memory.Association) bool { return a.TargetID == other }) {
		t.Fatalf("kept record did not inherit the edge: %+v", kept.Associations)
	}
	if again := consolidate(t, h, nil); again.RecordsMigrated != 0 {
		t.Fatalf("next run %+v: the kept record's copy was left stale", again)
	}
}

// writeJournal leaves a consolidation journal in the default namespace,
// as a run interrupted after planning these merges would.
func writeJournal(t *testing.T, h *harness, merges ...[2]memory.ID) {
	t.Helper()
	b := h.db.NewBatch()
	defer b.Close()
	b.PutNSMeta(store.DefaultNS, consolidationKey, mustJSON(consolidationJournal{Strategy: memory.ConsolidateIncremental, Merges: merges}))
	b.PutNSMeta(store.DefaultNS, consolidationDoneKey, uint64Bytes(0))
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestConsolidateResumesJournal: the next consolidation finishes the
// merges an interrupted run journaled, re-checking each pair (one that is
// no longer a pair of near-duplicates is left alone), then removes the
// journal. A replacing import drops a journal with the records it
// concerns.
func TestConsolidateResumesJournal(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: -1})
	ctx := context.Background()
	a := h.store("The nightly backup runs at three and keeps thirty days.", memory.StoreEpisodic)
	b := h.store("Code review needs two approvals for the payments service.", memory.StoreEpisodic)
	c := h.store("Feature flags are cleaned up one release after launch.", memory.StoreEpisodic)
	d := h.store("Feature flags are cleaned up one release after launch!", memory.StoreEpisodic)
	writeJournal(t, h, [2]memory.ID{a, b}, [2]memory.ID{c, d})
	// A dry run changes nothing, the journal included.
	consolidate(t, h, func(r *memory.ConsolidateRequest) { r.DryRun = true })
	if _, err := h.db.GetNSMeta(store.DefaultNS, consolidationKey); err != nil {
		t.Fatalf("a dry run touched the journal: %v", err)
	}
	consolidate(t, h, nil)
	if _, err := h.e.Record(ctx, &memory.IntrospectRecordRequest{RecordID: d}); err == nil {
		t.Fatal("the journaled merge of two near-duplicates was not applied")
	}
	h.record(a)
	h.record(b) // not near-duplicates: both stay
	h.record(c)
	if _, err := h.db.GetNSMeta(store.DefaultNS, consolidationKey); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("journal after the run: %v", err)
	}

	var archive bytes.Buffer
	if _, err := h.e.Export(ctx, &memory.ExportRequest{Format: "cma"}, &archive); err != nil {
		t.Fatal(err)
	}
	writeJournal(t, h, [2]memory.ID{a, b})
	req := memory.DefaultImportRequest()
	req.Strategy = memory.ImportReplace
	if _, err := h.e.Import(ctx, &req, &archive); err != nil {
		t.Fatal(err)
	}
	if _, err := h.db.GetNSMeta(store.DefaultNS, consolidationKey); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("journal after a replacing import: %v", err)
	}
}

// TestConsolidateSyncsOutsideTheEngine: a consolidation's chunks commit
// without a sync while they hold the engine; they are made durable once
// the engine is free, every chunksPerSync chunks and after the last of a
// kind, and the run answers only when everything it did is durable.
func TestConsolidateSyncsOutsideTheEngine(t *testing.T) {
	h, path := auditHarness(t)
	ctx := context.Background()
	const chunks = chunksPerSync + 2
	const n = (chunks-1)*copyChunk + 10
	var reqs []memory.EncodeStoreRequest
	for i := range n {
		reqs = append(reqs, memory.EncodeStoreRequest{Content: memory.TextContent(fmt.Sprintf("synced note %d about %s", i, crashWord(i%400)))})
	}
	if _, err := h.e.EncodeBatch(ctx, &memory.EncodeBatchRequest{Records: reqs}); err != nil {
		t.Fatal(err)
	}
	a := h.e.aud
	var syncs atomic.Int32
	a.beforeSync = func() { syncs.Add(1) }
	var steps []string
	var behind []uint64 // per step: events written but not yet durable, in the step
	h.e.opts.consolidationStepped = func(step string) {
		steps = append(steps, step)
		behind = append(behind, a.written.Load()-a.durable.Load())
	}
	resp, err := h.e.Consolidate(ctx, &memory.ConsolidateRequest{Strategy: memory.ConsolidateFull})
	if err != nil {
		t.Fatal(err)
	}
	if resp.SemanticNodesCreated != n {
		t.Fatalf("%+v: want %d copies", resp, n)
	}
	if got := syncs.Load(); got != 0 {
		t.Fatalf("%d commits synced while holding the engine, want none", got)
	}
	// The journal and done steps write no audit event; each copy step
	// writes one, durable with the sync after every chunksPerSync-th copy
	// chunk and after the last.
	want := []string{"journal"}
	wantBehind := []uint64{0}
	for i := range chunks {
		want = append(want, "copy")
		wantBehind = append(wantBehind, uint64(i%chunksPerSync+1))
	}
	want = append(want, "done")
	wantBehind = append(wantBehind, 0)
	if !slices.Equal(steps, want) {
		t.Fatalf("steps %v, want %v", steps, want)
	}
	if !slices.Equal(behind, wantBehind) {
		t.Fatalf("events not yet durable in each step: %v, want %v", behind, wantBehind)
	}
	if w, d := a.written.Load(), a.durable.Load(); w != d {
		t.Fatalf("consolidation answered with events up to %d written but only up to %d durable", w, d)
	}
	if err := h.e.syncAudit(); err != nil {
		t.Fatal(err)
	}
	copies := 0
	for _, l := range readAudit(t, path) {
		if l.Operation == audit.OpConsolidate && bytes.Contains(l.Summary, []byte(`"step":"copy"`)) {
			copies++
		}
	}
	if copies != chunks {
		t.Fatalf("%d copy entries in the audit log, want %d", copies, chunks)
	}
}
