package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/audittest"
	"memsvc.dev/memsvc/internal/testsync"
	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

type auditLine = audittest.Entry

// readAudit reads the audit log at path, which must verify.
func readAudit(t *testing.T, path string) []auditLine {
	t.Helper()
	if _, err := audit.VerifyFile(path); err != nil {
		t.Fatalf("audit log does not verify: %v", err)
	}
	return audittest.Entries(t, path)
}

// auditHarness opens the engine with an audit log next to the data.
func auditHarness(t *testing.T) (*harness, string) {
	t.Helper()
	h := &harness{t: t, dir: t.TempDir(), clock: testsync.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))}
	path := filepath.Join(h.dir, "audit.jsonl")
	var log *audit.Log
	h.opts = Options{Now: h.clock.Now, SimilarLinks: -1}
	openWithAudit := func() {
		var err error
		if log, err = audit.Open(path, audit.Options{}); err != nil {
			t.Fatal(err)
		}
		h.opts.Audit = log
		h.open()
	}
	openWithAudit()
	t.Cleanup(func() {
		h.close()
		log.Close()
	})
	return h, path
}

func TestAuditEveryChange(t *testing.T) {
	h, path := auditHarness(t)
	ctx := context.Background()
	id := h.store("Xylophonic secret content", memory.StoreEpisodic)
	c := memory.TextContent("Xylophonic updated content")
	if err := h.e.EncodeUpdate(ctx, &memory.EncodeUpdateRequest{RecordID: id, Content: &c}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.e.EncodeBatch(ctx, &memory.EncodeBatchRequest{Records: []memory.EncodeStoreRequest{{Content: memory.TextContent("a")}, {Content: memory.TextContent("b")}}}); err != nil {
		t.Fatal(err)
	}
	r := rawReq("s", "Xylophonic raw")
	if _, err := h.e.EncodeStoreRaw(ctx, &r); err != nil {
		t.Fatal(err)
	}
	req := memory.DefaultRecallQueryRequest()
	req.Cue.Text = ptr("xylophonic")
	if _, err := h.e.RecallQuery(ctx, &req); err != nil {
		t.Fatal(err)
	}
	h.flushRecalls() // recall effects are written (and logged) behind
	tick(t, h, 3600)
	if err := h.e.SetMode(ctx, &memory.SetModeRequest{Mode: memory.ModePerfect}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.e.Export(ctx, &memory.ExportRequest{Format: "cma"}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.e.Forget(ctx, &memory.ForgetRequest{RecordIDs: []memory.ID{id}, Confirm: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	// Read-only operations log nothing.
	if _, err := h.e.Stats(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h.e.syncAudit(); err != nil {
		t.Fatal(err)
	}
	lines := readAudit(t, path)
	var ops []string
	for i, l := range lines {
		ops = append(ops, l.Operation)
		if l.Sequence != uint64(i+1) {
			t.Fatalf("sequence %d at line %d", l.Sequence, i+1)
		}
		if bytes.Contains(l.Summary, []byte("Xylophonic")) || bytes.Contains(l.Summary, []byte("xylophonic")) {
			t.Fatalf("summary holds memory content: %s", l.Summary)
		}
	}
	want := []string{"encode.store", "encode.update", "encode.batch", "encode.store_raw", "recall.query.reconsolidate",
		"lifecycle.decay_tick", "lifecycle.set_mode", "lifecycle.export", "lifecycle.forget"}
	if !slices.Equal(ops, want) {
		t.Fatalf("operations %v, want %v", ops, want)
	}
	if lines[0].RecordIDs[0] != id.String() || lines[8].RecordIDs[0] != id.String() || len(lines[2].RecordIDs) != 2 {
		t.Fatalf("record ids: %+v", lines)
	}
	// Entries survive a restart and the chain continues.
	h.close()
	h.opts.Audit.Close()
	log, err := audit.Open(path, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h.opts.Audit = log
	h.open()
	h.store("after restart", memory.StoreEpisodic)
	if err := h.e.syncAudit(); err != nil {
		t.Fatal(err)
	}
	if got := readAudit(t, path); len(got) != 10 || got[9].Sequence != 10 {
		t.Fatalf("after restart: %d entries", len(got))
	}
}

// TestAuditTruncationRefused: a log that ends before what the data
// directory knows it logged is refused at start.
func TestAuditTruncationRefused(t *testing.T) {
	h, path := auditHarness(t)
	for i := 0; i < 3; i++ {
		h.store(fmt.Sprint("record ", i), memory.StoreEpisodic)
	}
	h.close()
	h.opts.Audit.Close()
	b, _ := os.ReadFile(path)
	lines := bytes.SplitAfter(b, []byte("\n"))
	if err := os.WriteFile(path, bytes.Join(lines[:2], nil), 0o600); err != nil {
		t.Fatal(err)
	}
	log, err := audit.Open(path, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	db, err := store.Open(h.dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = Open(context.Background(), db, Options{Audit: log})
	if err == nil || !strings.Contains(err.Error(), "ends at entry 2") || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("truncated log accepted: %v", err)
	}
}

// TestAuditCrash kills a writer with SIGKILL at random moments and checks
// that every committed record has exactly one audit entry, and no entry
// exists without its record.
func TestAuditCrash(t *testing.T) {
	if dir := os.Getenv("MEMSVC_AUDIT_CHILD"); dir != "" {
		auditChild(dir)
		return
	}
	dir := t.TempDir()
	for round := 0; round < 3; round++ {
		cmd, sc := startChild(t, 30*time.Second, "TestAuditCrash", "MEMSVC_AUDIT_CHILD="+dir)
		acked := 0
		for acked < 30+round*17 && sc.Scan() {
			if strings.HasPrefix(sc.Text(), "stored ") {
				acked++
			}
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	}
	// Reopening replays the outbox.
	log, err := audit.Open(filepath.Join(dir, "audit.jsonl"), audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := Open(context.Background(), db, Options{Audit: log, SimilarLinks: -1})
	if err != nil {
		t.Fatal(err)
	}
	records := episodicIDs(t, db)
	e.Close()
	db.Close()
	log.Close()
	if len(records) < 60 {
		t.Fatalf("only %d records after three rounds", len(records))
	}
	checkStoresAudited(t, filepath.Join(dir, "audit.jsonl"), records)
}

// episodicIDs is the set of IDs of the default namespace's episodic
// records in db.
func episodicIDs(t *testing.T, db *store.DB) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	if err := db.ScanRecords(store.DefaultNS, memory.StoreEpisodic, func(rec *memory.MemoryRecord) error {
		ids[rec.ID.String()] = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return ids
}

// checkStoresAudited fails the test unless the audit log at path, which
// must verify, has exactly one store entry for each of records and none
// for a record not among them.
func checkStoresAudited(t *testing.T, path string, records map[string]bool) {
	t.Helper()
	logged := map[string]int{}
	for _, l := range readAudit(t, path) {
		if l.Operation == audit.OpEncodeStore {
			logged[l.RecordIDs[0]]++
		}
	}
	for id := range records {
		if logged[id] != 1 {
			t.Fatalf("record %s has %d audit entries", id, logged[id])
		}
	}
	for id := range logged {
		if !records[id] {
			t.Fatalf("audit entry for %s, which has no record", id)
		}
	}
}

func auditChild(dir string) {
	log, err := audit.Open(filepath.Join(dir, "audit.jsonl"), audit.Options{})
	if err != nil {
		childFail(err)
	}
	e := childEngine(dir, Options{Audit: log, SimilarLinks: -1})
	st := memory.StoreEpisodic
	for i := 0; ; i++ {
		resp, err := e.EncodeStore(context.Background(), &memory.EncodeStoreRequest{Content: memory.TextContent(fmt.Sprint("crash note ", i)), Store: &st})
		if err != nil {
			childFail(err)
		}
		fmt.Println("stored", resp.RecordID)
	}
}

// TestAuditWaitsForDurableCommit: pebble shows a synced batch to readers
// before its fsync has finished, so the appender can see an outbox event
// whose change may still be lost. It must leave such an event alone until
// the commit has returned.
func TestAuditWaitsForDurableCommit(t *testing.T) {
	h, path := auditHarness(t)
	h.store("a durable note", memory.StoreEpisodic)
	if err := h.e.syncAudit(); err != nil {
		t.Fatal(err)
	}
	before := len(readAudit(t, path))

	// An event that is visible but whose commit has not returned: written
	// under the sequence commitAudited would use, without advancing it.
	a := h.e.aud
	a.mu.Lock()
	body, err := json.Marshal(outboxEvent{Time: h.clock.Now(), Operation: audit.OpEncodeStore,
		RecordIDs: []string{"01a20160-9d3e-747e-bc03-2ce940b4efd2"}, Summary: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	b := h.e.db.NewBatch()
	b.PutOutbox(a.next, body)
	if err := b.CommitNoSync(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if err := h.e.syncAudit(); err != nil {
		t.Fatal(err)
	}
	if got := len(readAudit(t, path)); got != before {
		t.Fatalf("appender logged an event whose commit had not returned: %d entries, want %d", got, before)
	}
	// Once the commit returns, the event goes out with the next flush.
	a.durable.Store(a.next)
	a.next++
	a.mu.Unlock()
	if err := h.e.syncAudit(); err != nil {
		t.Fatal(err)
	}
	if got := len(readAudit(t, path)); got != before+1 {
		t.Fatalf("durable event not logged: %d entries, want %d", got, before+1)
	}
}

// TestAuditLinksAndPrunes: a similarity pass that adds edges is logged
// once, with the edges it added, and a pass that finds them all in place
// is not; a decay tick that prunes logs the prune (DESIGN §5: every prune
// is audited) with the pruned record.
func TestAuditLinksAndPrunes(t *testing.T) {
	h, path := auditHarness(t)
	ctx := context.Background()
	h.close()
	h.opts.Decay = DecayConfig{PruneBelow: 0.2}
	h.open()
	vec := []float32{1, 2, 3, 4}
	store := func(text string, st memory.StoreType) memory.ID {
		c := memory.TextContent(text)
		c.Blocks[0].Embedding = vec
		resp, err := h.e.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: c, Store: &st})
		if err != nil {
			t.Fatal(err)
		}
		return resp.RecordID
	}
	a := store("fades", memory.StoreEpisodic)
	b := store("stays", memory.StoreSemantic)
	h.e.opts.SimilarLinks = 3 // linked by hand below, not by the background linker
	for range 2 {
		if err := h.e.linkRecord(h.e.defaultSpace(), b); err != nil {
			t.Fatal(err)
		}
	}
	if r := tick(t, h, 30*day); r.RecordsPruned != 1 { // (1+30)^-0.5 = 0.18
		t.Fatalf("not pruned: %+v", r)
	}
	if err := h.e.syncAudit(); err != nil {
		t.Fatal(err)
	}
	var ops []string
	var link, prune auditLine
	for _, l := range readAudit(t, path) {
		ops = append(ops, l.Operation)
		switch l.Operation {
		case audit.OpLink:
			link = l
		case audit.OpDecayPrune:
			prune = l
		}
	}
	want := []string{audit.OpEncodeStore, audit.OpEncodeStore, audit.OpLink, audit.OpDecayTick, audit.OpDecayPrune}
	if !slices.Equal(ops, want) {
		t.Fatalf("operations %v, want %v", ops, want)
	}
	if !bytes.Contains(link.Summary, []byte(`"edges_added":2`)) || !slices.Contains(link.RecordIDs, a.String()) {
		t.Fatalf("link entry %+v", link)
	}
	if !slices.Equal(prune.RecordIDs, []string{a.String()}) || !bytes.Contains(prune.Summary, []byte(`"records_pruned":1`)) {
		t.Fatalf("prune entry %+v", prune)
	}
}
