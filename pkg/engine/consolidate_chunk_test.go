package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/memory"
)

// TestConsolidateCopiesInChunks: a consolidation commits its copies
// copyChunk records at a time, one audit entry per chunk naming each
// source and its copy, and a second run finds every copy up to date.
func TestConsolidateCopiesInChunks(t *testing.T) {
	h, path := auditHarness(t)
	ctx := context.Background()
	const n = copyChunk + 44
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
