package engine

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// recallDuring runs a recall with reconsolidation of text from another
// goroutine and reports whether it answered within a bound: called from a
// hook that runs while the engine syncs, it tells whether the sync keeps
// recalls waiting.
func recallDuring(e *Engine, text string) error {
	done := make(chan error, 1)
	go func() {
		req := &memory.RecallQueryRequest{Cue: memory.RecallCue{Text: &text}, Stores: memory.PersistentStores(),
			Limit: 10, IncludeDecayed: true, Reconsolidate: true}
		_, err := e.RecallQuery(context.Background(), req)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		return fmt.Errorf("a recall of %q waited for the sync", text)
	}
}

// TestRecallFlushSyncsWithRecordsFree: the write-behind flush of recall
// effects syncs after letting go of the records' locks, so a recall of the
// same records answers during the sync.
func TestRecallFlushSyncsWithRecordsFree(t *testing.T) {
	h, _ := auditHarness(t)
	var armed atomic.Bool
	var syncs atomic.Int32
	var during error
	h.opts.recallFlushEvery = time.Hour // flushes only when the test says
	h.opts.beforeWALSync = func() {
		if armed.Load() && syncs.Add(1) == 1 {
			during = recallDuring(h.e, "flushed note")
		}
	}
	h.reopen()
	for i := range 20 {
		h.store(fmt.Sprintf("flushed note %d", i), memory.StoreEpisodic)
	}
	if got := len(h.recallOne("flushed note", 20)); got != 20 {
		t.Fatalf("recalled %d records, want 20", got)
	}
	armed.Store(true)
	h.flushRecalls()
	if syncs.Load() == 0 {
		t.Fatal("the flush did not sync after writing")
	}
	if during != nil {
		t.Fatal(during)
	}
	if a := h.e.aud; a.written.Load() != a.durable.Load() {
		t.Fatalf("after the flush, events up to %d written but only up to %d durable", a.written.Load(), a.durable.Load())
	}
	rec, err := h.onDisk(h.recallOne("flushed note 7", 1)[0], memory.StoreEpisodic)
	if err != nil || rec.AccessCount < 1 {
		t.Fatalf("on disk after a recall and a flush: %+v, %v", rec, err)
	}
}

// TestConsolidationSyncsWithEngineFree: a consolidation syncs each chunk
// after letting go of the engine, so a recall answers during the sync.
func TestConsolidationSyncsWithEngineFree(t *testing.T) {
	h, _ := auditHarness(t)
	var armed atomic.Bool
	var syncs atomic.Int32
	var during error
	h.opts.beforeWALSync = func() {
		if armed.Load() && syncs.Add(1) == 1 {
			during = recallDuring(h.e, "consolidated note")
		}
	}
	h.opts.consolidationStepped = func(step string) {
		if step == "copy" {
			armed.Store(true)
		}
	}
	h.reopen()
	for i := range 2 * copyChunk {
		h.store(fmt.Sprintf("consolidated note %d about %s", i, crashWord(i%400)), memory.StoreEpisodic)
	}
	resp, err := h.e.Consolidate(context.Background(), &memory.ConsolidateRequest{Strategy: memory.ConsolidateFull})
	if err != nil {
		t.Fatal(err)
	}
	if resp.SemanticNodesCreated != 2*copyChunk {
		t.Fatalf("%+v: want %d copies", resp, 2*copyChunk)
	}
	if syncs.Load() == 0 {
		t.Fatal("the consolidation did not sync after its first copy chunk")
	}
	if during != nil {
		t.Fatal(during)
	}
}

// TestPruneSyncsWithEngineFree: a decay tick's prune syncs after letting go
// of the engine, so a recall answers during the sync, and the prune is
// durable when the tick answers.
func TestPruneSyncsWithEngineFree(t *testing.T) {
	h, _ := auditHarness(t)
	var armed atomic.Bool
	var syncs atomic.Int32
	var during error
	h.opts.Decay = DecayConfig{PruneBelow: 0.2}
	h.opts.beforeWALSync = func() {
		if armed.Load() && syncs.Add(1) == 1 {
			during = recallDuring(h.e, "fades")
		}
	}
	h.reopen()
	h.store("fades", memory.StoreEpisodic)
	h.store("fades too", memory.StoreSemantic)
	if r := tick(t, h, 20*day); r.RecordsPruned != 0 {
		t.Fatalf("pruned too early: %+v", r)
	}
	armed.Store(true)
	if r := tick(t, h, 10*day); r.RecordsPruned != 1 {
		t.Fatalf("not pruned: %+v", r)
	}
	if syncs.Load() == 0 {
		t.Fatal("the prune did not sync after letting go of the engine")
	}
	if during != nil {
		t.Fatal(during)
	}
	if a := h.e.aud; a.written.Load() != a.durable.Load() {
		t.Fatalf("the tick answered with events up to %d written but only up to %d durable", a.written.Load(), a.durable.Load())
	}
}
