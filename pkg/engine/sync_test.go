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

// syncWatch runs a recall from the first WAL sync after it is armed and
// keeps what that recall gave.
type syncWatch struct {
	armed  atomic.Bool
	syncs  atomic.Int32
	during error
}

// watchSyncs installs w as h's sync hook, recalling text during the first
// armed sync; the engine takes it up on h.reopen.
func watchSyncs(h *harness, text string) *syncWatch {
	w := &syncWatch{}
	h.opts.beforeWALSync = func() {
		if w.armed.Load() && w.syncs.Add(1) == 1 {
			w.during = recallDuring(h.e, text)
		}
	}
	return w
}

// check fails the test if no armed sync ran, or if the recall during it
// did not answer; what names the work that should have synced.
func (w *syncWatch) check(t *testing.T, what string) {
	t.Helper()
	if w.syncs.Load() == 0 {
		t.Fatalf("%s did not sync", what)
	}
	if w.during != nil {
		t.Fatal(w.during)
	}
}

// TestRecallFlushSyncsWithRecordsFree: the write-behind flush of recall
// effects syncs after letting go of the records' locks, so a recall of the
// same records answers during the sync.
func TestRecallFlushSyncsWithRecordsFree(t *testing.T) {
	h, _ := auditHarness(t)
	h.opts.recallFlushEvery = time.Hour // flushes only when the test says
	w := watchSyncs(h, "flushed note")
	h.reopen()
	for i := range 20 {
		h.store(fmt.Sprintf("flushed note %d", i), memory.StoreEpisodic)
	}
	if got := len(h.recallOne("flushed note", 20)); got != 20 {
		t.Fatalf("recalled %d records, want 20", got)
	}
	w.armed.Store(true)
	h.flushRecalls()
	w.check(t, "the flush")
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
	w := watchSyncs(h, "consolidated note")
	h.opts.consolidationStepped = func(step string) {
		if step == "copy" {
			w.armed.Store(true)
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
	w.check(t, "the consolidation's first copy chunk")
}

// TestPruneSyncsWithEngineFree: a decay tick's prune syncs after letting go
// of the engine, so a recall answers during the sync, and the prune is
// durable when the tick answers.
func TestPruneSyncsWithEngineFree(t *testing.T) {
	h, _ := auditHarness(t)
	h.opts.Decay = DecayConfig{PruneBelow: 0.2}
	w := watchSyncs(h, "fades")
	h.reopen()
	h.store("fades", memory.StoreEpisodic)
	h.store("fades too", memory.StoreSemantic)
	if r := tick(t, h, 20*day); r.RecordsPruned != 0 {
		t.Fatalf("pruned too early: %+v", r)
	}
	w.armed.Store(true)
	if r := tick(t, h, 10*day); r.RecordsPruned != 1 {
		t.Fatalf("not pruned: %+v", r)
	}
	w.check(t, "the prune")
	if a := h.e.aud; a.written.Load() != a.durable.Load() {
		t.Fatalf("the tick answered with events up to %d written but only up to %d durable", a.written.Load(), a.durable.Load())
	}
}
