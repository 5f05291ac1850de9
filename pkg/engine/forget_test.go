package engine

import (
	"context"
	"errors"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// exists reports whether a curated record is still stored.
func (h *harness) exists(id memory.ID) bool {
	h.t.Helper()
	_, err := h.e.Record(context.Background(), &memory.IntrospectRecordRequest{RecordID: id})
	if err != nil && !errors.Is(err, memory.ErrNotFound) {
		h.t.Fatal(err)
	}
	return err == nil
}

func forgetCascade(t *testing.T, h *harness, id memory.ID) uint32 {
	t.Helper()
	out, err := h.e.Forget(context.Background(), &memory.ForgetRequest{RecordIDs: []memory.ID{id}, Cascade: true, Confirm: ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	return out.RecordsDeleted
}

// TestForgetCascadeSkipsSimilarityLinks: an unrelated note whose embedding
// resembles the target's is linked to it by memsvc in the background (a
// similarity link, both ways); forgetting the target with cascade deletes
// the record the client linked it to, never the similar note. The store
// answer counts only the links the store made.
func TestForgetCascadeSkipsSimilarityLinks(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := context.Background()
	linked := h.store("the ticket the client links to", memory.StoreEpisodic)
	unrelated := vecRecord(h, "lunch plans for friday", []float32{1, 0.1, 0})
	c := memory.TextContent("the deploy checklist")
	c.Blocks[0].Embedding = []float32{1, 0.12, 0}
	resp, err := h.e.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: c, Associations: []memory.ManualAssociation{
		{TargetID: linked, AssociationType: memory.AssocCausal, Weight: 0.5},
		{TargetID: linked, AssociationType: memory.AssocCausal, Weight: 0.9}, // the same link again
	}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.AssociationsCreated != 1 {
		t.Errorf("associations_created %d, want 1: the repeated link is one link", resp.AssociationsCreated)
	}
	target := resp.RecordID
	if err := h.e.syncLinks(ctx); err != nil {
		t.Fatal(err)
	}
	origins := map[memory.ID]memory.AssociationOrigin{}
	for _, a := range h.record(target).Associations {
		origins[a.TargetID] = a.Origin
	}
	if origins[linked] != memory.OriginClient || origins[unrelated] != memory.OriginSimilarity {
		t.Fatalf("origins %v: want the client link and a similarity link to the note with the similar embedding", origins)
	}

	if n := forgetCascade(t, h, target); n != 2 {
		t.Errorf("records_deleted %d, want 2 (the target and its client link)", n)
	}
	if h.exists(target) || h.exists(linked) {
		t.Error("cascade left the target or the record the client linked")
	}
	if !h.exists(unrelated) {
		t.Fatal("cascade deleted an unrelated note linked only by similarity")
	}
	if a := h.record(unrelated).Associations; len(a) != 0 {
		t.Errorf("the surviving note still points at the forgotten one: %+v", a)
	}
}

// TestForgetCascadeFollowsDerivations: a dream summary takes its semantic
// node along, and a consolidated source its semantic copy.
func TestForgetCascadeFollowsDerivations(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: -1})
	ctx := context.Background()
	loadTranscript(t, h, "s1")
	if _, err := h.e.DreamTick(ctx, dreamReq()); err != nil {
		t.Fatal(err)
	}
	var summary, node memory.ID
	for _, rec := range summaries(t, h)[memory.StoreSemantic] {
		if dreamKindOf(rec) == dreamSemantic {
			node = rec.ID
			summary = rec.Associations[0].TargetID
		}
	}
	if node.IsNil() {
		t.Fatal("the dream promoted nothing")
	}
	if n := forgetCascade(t, h, summary); n != 2 || h.exists(node) {
		t.Errorf("forgetting the summary: %d deleted, node left: %v", n, h.exists(node))
	}

	src := h.store("a mature episode about the cache layer", memory.StoreEpisodic)
	if _, err := h.e.Consolidate(ctx, &memory.ConsolidateRequest{Strategy: memory.ConsolidateFull}); err != nil {
		t.Fatal(err)
	}
	var cp memory.ID
	for _, a := range h.record(src).Associations {
		if a.Origin == memory.OriginDerivation {
			cp = a.TargetID
		}
	}
	if cp.IsNil() {
		t.Fatalf("no derivation link to a copy: %+v", h.record(src).Associations)
	}
	if n := forgetCascade(t, h, src); n != 2 || h.exists(cp) {
		t.Errorf("forgetting the source: %d deleted, copy left: %v", n, h.exists(cp))
	}
}

// TestForgetCascadeLegacyEdges: edges written before associations had an
// origin are judged by their shape. A semantic edge mirrored with the same
// weight and time is a similarity link and is not followed; a client's
// semantic link and a consolidation link are.
func TestForgetCascadeLegacyEdges(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: -1})
	a := h.store("legacy record a", memory.StoreEpisodic)
	similar := h.store("legacy similar note", memory.StoreEpisodic)
	client := h.store("legacy client target", memory.StoreSemantic)
	copyRec := h.store("legacy consolidated copy", memory.StoreSemantic)
	at := h.clock.Now()

	// Rewrite the records as an older memsvc left them: no origins.
	rewrite := func(id memory.ID, md memory.JSON, edges ...memory.Association) {
		t.Helper()
		rec := h.record(id)
		rec.Associations = edges
		if md != nil {
			rec.Metadata = md
		}
		b := h.db.NewBatch()
		defer b.Close()
		b.PutRecord(store.DefaultNS, rec)
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	edge := func(to memory.ID, w float64) memory.Association {
		return memory.Association{TargetID: to, AssociationType: memory.AssocSemantic, Weight: w, CreatedAt: at, LastCoActivation: at}
	}
	rewrite(a, nil, edge(similar, 0.91), edge(client, 0.91), edge(copyRec, 1))
	rewrite(similar, nil, edge(a, 0.91))
	rewrite(copyRec, memory.JSON(`{"_consolidated_from":{"record_id":"`+a.String()+`","version":1}}`), edge(a, 1))
	h.reopen()

	if n := forgetCascade(t, h, a); n != 3 {
		t.Errorf("records_deleted %d, want 3", n)
	}
	if !h.exists(similar) {
		t.Error("a legacy similarity link was followed")
	}
	if h.exists(client) || h.exists(copyRec) {
		t.Errorf("legacy client link or consolidation link not followed: client %v, copy %v", h.exists(client), h.exists(copyRec))
	}
}
