package engine

import (
	"context"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

// TestWorkingRecordNotShared: a working record a read returned is the
// caller's. A later recall that strengthens the record's edges (co-
// activation of two records recalled together) changes the stored
// record, never the copy an earlier read handed out, which another
// goroutine may be encoding meanwhile.
func TestWorkingRecordNotShared(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := context.Background()
	working := memory.StoreWorking
	b := h.store("kites fly over the harbour", memory.StoreWorking)
	resp, err := h.e.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: memory.TextContent("kites and the harbour wind"),
		Store: &working, Associations: []memory.ManualAssociation{{TargetID: b, AssociationType: memory.AssocTemporal, Weight: 0.5}}})
	if err != nil {
		t.Fatal(err)
	}
	a := resp.RecordID
	before := h.record(a)
	if len(before.Associations) != 1 || before.Associations[0].Weight != 0.5 {
		t.Fatalf("stored edges: %+v", before.Associations)
	}
	h.clock.Advance(2 * coActivationSpacing)
	text := "kites harbour"
	rec, err := h.e.RecallQuery(ctx, &memory.RecallQueryRequest{Cue: memory.RecallCue{Text: &text},
		Stores: []memory.StoreType{memory.StoreWorking}, Limit: 2, IncludeDecayed: true, Reconsolidate: true})
	if err != nil || len(rec.Memories) != 2 {
		t.Fatalf("recall of both working records: %+v, %v", rec, err)
	}
	if w := h.record(a).Associations[0].Weight; w <= 0.5 {
		t.Fatalf("the recall did not strengthen the edge (weight %v): the test does not exercise co-activation", w)
	}
	if w := before.Associations[0].Weight; w != 0.5 {
		t.Fatalf("a record read before the recall changed under its reader: edge weight %v, want 0.5", w)
	}
}
