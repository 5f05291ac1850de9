package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testsync"
	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// recallOne recalls by text with reconsolidation, at most limit records.
func (h *harness) recallOne(text string, limit uint32) []memory.ID {
	h.t.Helper()
	req := &memory.RecallQueryRequest{Cue: memory.RecallCue{Text: &text}, Stores: memory.PersistentStores(),
		Limit: limit, IncludeDecayed: true, Reconsolidate: true}
	resp, err := h.e.RecallQuery(context.Background(), req)
	if err != nil {
		h.t.Fatal(err)
	}
	var ids []memory.ID
	for _, m := range resp.Memories {
		ids = append(ids, m.Record.ID)
	}
	return ids
}

// onDisk reads a default-namespace record as the store holds it.
func (h *harness) onDisk(id memory.ID, st memory.StoreType) (*memory.MemoryRecord, error) {
	return h.db.GetRecord(store.DefaultNS, st, id)
}

func (h *harness) flushRecalls() {
	h.t.Helper()
	h.e.big.RLock()
	err := h.e.flushRecalls()
	h.e.big.RUnlock()
	if err != nil {
		h.t.Fatal(err)
	}
}

// TestRecallWriteBehind: a recall's effects show at once and reach the
// disk with the next flush, all recalls since the last one in one commit
// with one audit entry; an update or a forget of the record in between
// carries or ends them, and the flush never writes over either.
func TestRecallWriteBehind(t *testing.T) {
	h, path := auditHarness(t)
	h.opts.recallFlushEvery = time.Hour // flushes only when the test says
	h.reopen()
	a := h.store("alpha note about lanterns", memory.StoreEpisodic)
	b := h.store("beta note about lanterns", memory.StoreEpisodic)
	for range 2 {
		if got := h.recallOne("lanterns", 2); len(got) != 2 {
			t.Fatalf("recall found %v, want both", got)
		}
	}
	if got := h.record(a).AccessCount; got != 2 {
		t.Fatalf("access count after two recalls: %d, want 2 at once", got)
	}
	if rec, err := h.onDisk(a, memory.StoreEpisodic); err != nil || rec.AccessCount != 0 {
		t.Fatalf("before the flush the disk has access count %v (%v), want 0: the effect is written behind", rec.AccessCount, err)
	}
	h.flushRecalls()
	if rec, err := h.onDisk(a, memory.StoreEpisodic); err != nil || rec.AccessCount != 2 {
		t.Fatalf("after the flush: %v, %v; want access count 2", rec, err)
	}
	if err := h.e.syncAudit(); err != nil {
		t.Fatal(err)
	}
	var entries []auditLine
	for _, l := range readAudit(t, path) {
		if l.Operation == audit.OpRecallReconsolidate {
			entries = append(entries, l)
		}
	}
	if len(entries) != 1 {
		t.Fatalf("%d recall audit entries for one flush, want 1", len(entries))
	}
	var sum struct{ Records, Recalls int }
	if err := json.Unmarshal(entries[0].Summary, &sum); err != nil || sum.Records != 2 || sum.Recalls != 4 {
		t.Fatalf("flush audit summary %s, want 2 records and 4 recalls (of a record each)", entries[0].Summary)
	}

	// An update carries the pending effect; the flush writes nothing over it.
	h.recallOne("alpha", 1)
	text := memory.TextContent("alpha note, rewritten")
	if err := h.e.EncodeUpdate(context.Background(), &memory.EncodeUpdateRequest{RecordID: a, Content: &text}); err != nil {
		t.Fatal(err)
	}
	h.flushRecalls()
	rec, err := h.onDisk(a, memory.StoreEpisodic)
	if err != nil || rec.AccessCount != 3 || recordText(rec) != "alpha note, rewritten" {
		t.Fatalf("after recall, update, flush: %v; want the new text and access count 3", rec)
	}

	// A forget ends it; the flush does not bring the record back.
	h.recallOne("beta", 1)
	if _, err := h.e.Forget(context.Background(), &memory.ForgetRequest{RecordIDs: []memory.ID{b}, Confirm: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	h.flushRecalls()
	if _, err := h.onDisk(b, memory.StoreEpisodic); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("forgotten record after a flush: %v", err)
	}

	// Close writes what is pending.
	h.recallOne("alpha", 1)
	h.reopen()
	if got := h.record(a).AccessCount; got != 4 {
		t.Fatalf("access count after a clean restart: %d, want 4", got)
	}
}

func recordText(rec *memory.MemoryRecord) string {
	var sb strings.Builder
	for _, b := range rec.Content.Blocks {
		sb.Write(b.Data)
	}
	return sb.String()
}

// TestRecallPendingBound: a recall that finds the bound's number of
// records pending writes them before it changes anything.
func TestRecallPendingBound(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: -1, recallFlushEvery: time.Hour, recallPendingMax: 3})
	for i := range 10 {
		h.store(fmt.Sprintf("note %s of the bound", crashWord(i)), memory.StoreEpisodic)
	}
	most := 0
	for i := range 10 {
		h.recallOne(crashWord(i), 1)
		h.e.wb.mu.Lock()
		n := len(h.e.wb.pending)
		h.e.wb.mu.Unlock()
		if n > 3 {
			t.Fatalf("%d records pending after recall %d, bound 3", n, i)
		}
		most = max(most, n)
	}
	if most == 0 {
		t.Fatal("nothing was ever pending: recalls wrote their effects at once")
	}
}

// crashWord is a word only record i of the crash tests carries.
func crashWord(i int) string {
	const letters = "bcdfghjklmnpqrstvwxz"
	return "zy" + letters[i/len(letters):i/len(letters)+1] + letters[i%len(letters):i%len(letters)+1]
}

// Bounds of the kill -9 test's child.
const (
	crashRecords    = 24
	crashPendingMax = 8
)

// TestRecallEffectsKill: a process recalling in a loop is killed with
// SIGKILL. After a restart every stored record is there, and the access
// counts of at most the bound's number of records (plus one for a recall
// in flight) fall short of the recalls acknowledged; none exceeds them by
// more than the recall in flight.
func TestRecallEffectsKill(t *testing.T) {
	if dir := os.Getenv("MEMSVC_RECALL_CHILD"); dir != "" {
		recallChild(dir)
		return
	}
	dir := t.TempDir()
	cmd, sc := startChild(t, 60*time.Second, "TestRecallEffectsKill", "MEMSVC_RECALL_CHILD="+dir)
	stored := map[string]bool{}
	acked := map[string]uint32{}
	recalls := 0
	for recalls < 300 && sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 2 && f[0] == "stored":
			stored[f[1]] = true
		case len(f) == 2 && f[0] == "recalled":
			acked[f[1]]++
			recalls++
		case len(f) > 0 && f[0] == "error":
			t.Fatalf("child: %s", sc.Text())
		}
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	if recalls < 300 {
		t.Fatalf("child stopped after %d recalls: %v", recalls, sc.Err())
	}

	db, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	e, err := Open(context.Background(), db, Options{SimilarLinks: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	counts := map[string]uint32{}
	if err := db.ScanRecords(store.DefaultNS, memory.StoreEpisodic, func(rec *memory.MemoryRecord) error {
		counts[rec.ID.String()] = rec.AccessCount
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(stored) != crashRecords {
		t.Fatalf("child acknowledged %d stores, want %d", len(stored), crashRecords)
	}
	short, written := 0, 0
	for id := range stored {
		got, ok := counts[id]
		if !ok {
			t.Fatalf("stored record %s lost", id)
		}
		want := acked[id]
		switch {
		case got > want+1:
			t.Fatalf("record %s: access count %d, only %d recalls acknowledged", id, got, want)
		case got < want:
			short++
		}
		if got > 0 {
			written++
		}
	}
	if short > crashPendingMax+1 {
		t.Fatalf("%d records lost recall effects, bound %d", short, crashPendingMax+1)
	}
	if written == 0 {
		t.Fatal("no recall effect reached the disk")
	}
	t.Logf("%d recalls acknowledged; %d records short of them after the kill", recalls, short)
}

func recallChild(dir string) {
	e := childEngine(dir, Options{SimilarLinks: -1, recallFlushEvery: time.Hour, recallPendingMax: crashPendingMax})
	st := memory.StoreEpisodic
	for i := range crashRecords {
		resp, err := e.EncodeStore(context.Background(), &memory.EncodeStoreRequest{
			Content: memory.TextContent(fmt.Sprintf("note %s for the kill", crashWord(i))), Store: &st})
		if err != nil {
			childFail(err)
		}
		fmt.Println("stored", resp.RecordID)
	}
	for i := 0; ; i++ {
		w := crashWord(i % crashRecords)
		resp, err := e.RecallQuery(context.Background(), &memory.RecallQueryRequest{Cue: memory.RecallCue{Text: &w},
			Stores: memory.PersistentStores(), Limit: 1, IncludeDecayed: true, Reconsolidate: true})
		if err != nil {
			childFail(err)
		}
		if len(resp.Memories) != 1 {
			childFail(fmt.Errorf("recall %s found %d records", w, len(resp.Memories)))
		}
		fmt.Println("recalled", resp.Memories[0].Record.ID)
	}
}

// TestRecallEffectsDiskFull: while the disk is full the flusher keeps the
// effects pending and logs once, a recall past the bound fails rather than
// exceed it, an export goes on, and once space returns the effects are
// written and the recovery is logged.
func TestRecallEffectsDiskFull(t *testing.T) {
	var free atomic.Uint64
	free.Store(1 << 40)
	var logBuf testsync.Buffer
	db, err := store.Open(t.TempDir(), store.Options{MinFreeBytes: 1 << 20,
		DiskFree: func(string) (uint64, error) { return free.Load(), nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	e, err := Open(context.Background(), db, Options{SimilarLinks: -1, recallFlushEvery: 5 * time.Millisecond,
		recallPendingMax: 2, Logger: slog.New(slog.NewTextHandler(&logBuf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	h := &harness{t: t, db: db, e: e}
	var ids []memory.ID
	for i := range 3 {
		ids = append(ids, h.store(fmt.Sprintf("note %s on a full disk", crashWord(i)), memory.StoreEpisodic))
	}
	free.Store(0)
	h.recallOne(crashWord(0), 1)
	h.recallOne(crashWord(1), 1)
	tries := e.wb.tries.Load()
	waitFor(t, "the flusher to try a few times", func() bool { return e.wb.tries.Load() >= tries+3 })
	w := crashWord(2)
	_, err = e.RecallQuery(context.Background(), &memory.RecallQueryRequest{Cue: memory.RecallCue{Text: &w},
		Stores: memory.PersistentStores(), Limit: 1, IncludeDecayed: true, Reconsolidate: true})
	if !errors.Is(err, store.ErrNoSpace) {
		t.Fatalf("recall past the bound on a full disk: %v, want ErrNoSpace", err)
	}
	if got := h.record(ids[2]).AccessCount; got != 0 {
		t.Fatalf("the refused recall changed its record: access count %d", got)
	}
	// An export is a read: it goes on without the pending effects.
	if _, err := e.Export(context.Background(), &memory.ExportRequest{Format: "cma"}, &bytes.Buffer{}); err != nil {
		t.Fatalf("export on a full disk with recall effects pending: %v", err)
	}
	free.Store(1 << 40)
	waitFor(t, "the effects to be written", func() bool {
		rec, err := db.GetRecord(store.DefaultNS, memory.StoreEpisodic, ids[0])
		return err == nil && rec.AccessCount == 1
	})
	waitFor(t, "the recovery to be logged", func() bool { return strings.Contains(logBuf.String(), "writing recall effects again") })
	if n := strings.Count(logBuf.String(), "cannot write recall effects"); n != 1 {
		t.Fatalf("%d error lines while the disk was full, want 1:\n%s", n, logBuf.String())
	}
}

// TestRecallFlushGroups: a flush commits the pending effects in groups of
// at most recallFlushGroup records, one audit entry each, and syncs once.
func TestRecallFlushGroups(t *testing.T) {
	h, path := auditHarness(t)
	h.opts.recallFlushEvery = time.Hour // flushes only when the test says
	var syncs atomic.Int32
	h.opts.beforeWALSync = func() { syncs.Add(1) }
	h.reopen()
	const n = recallFlushGroup + 44
	reqs := make([]memory.EncodeStoreRequest, n)
	for i := range reqs {
		st := memory.StoreEpisodic
		reqs[i] = memory.EncodeStoreRequest{Content: memory.TextContent(fmt.Sprintf("grouped note %d", i)), Store: &st}
	}
	if _, err := h.e.EncodeBatch(context.Background(), &memory.EncodeBatchRequest{Records: reqs}); err != nil {
		t.Fatal(err)
	}
	if got := len(h.recallOne("grouped note", n)); got != n {
		t.Fatalf("recalled %d records, want %d", got, n)
	}
	before := syncs.Load()
	h.flushRecalls()
	if got := syncs.Load() - before; got != 1 {
		t.Fatalf("the flush synced %d times, want once", got)
	}
	if err := h.e.syncAudit(); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	var stripes [][2]int // of each group: lowest and highest lock stripe
	for _, l := range readAudit(t, path) {
		if l.Operation != audit.OpRecallReconsolidate {
			continue
		}
		var sum struct{ Records int }
		if err := json.Unmarshal(l.Summary, &sum); err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, sum.Records)
		span := [2]int{len(h.e.locks), -1}
		for _, s := range l.RecordIDs {
			id, err := memory.ParseID(s)
			if err != nil {
				t.Fatal(err)
			}
			span[0], span[1] = min(span[0], h.e.stripe(id)), max(span[1], h.e.stripe(id))
		}
		stripes = append(stripes, span)
	}
	if len(sizes) != 2 || sizes[0]+sizes[1] != n || max(sizes[0], sizes[1]) != recallFlushGroup {
		t.Fatalf("recall audit entries of %v records, want one of %d and one of %d", sizes, recallFlushGroup, n-recallFlushGroup)
	}
	// Grouped in stripe order: the groups' stripes do not interleave.
	if a, b := stripes[0], stripes[1]; a[1] > b[0] && b[1] > a[0] {
		t.Fatalf("the groups hold stripes %v and %v: they overlap by more than a stripe", a, b)
	}
}

// TestRecallFlushWakesAtThreshold: before its interval is up, the flusher
// writes once recallFlushAt records are pending, and not before. The
// flusher is paused while the recalls run, so a wake-up sent too early
// is still in its channel when the test looks, however fast the flusher
// would have taken it.
func TestRecallFlushWakesAtThreshold(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: -1, recallFlushEvery: time.Hour, recallFlushAt: 5})
	var ids []memory.ID
	for i := range 5 {
		ids = append(ids, h.store(fmt.Sprintf("note %s of the threshold", crashWord(i)), memory.StoreEpisodic))
	}
	resume := h.pauseFlusher()
	for i := range 4 {
		h.recallOne(crashWord(i), 1)
	}
	if len(h.e.wb.wake) != 0 {
		t.Fatal("a recall woke the flusher with 4 records pending, below the threshold of 5")
	}
	if rec, err := h.onDisk(ids[0], memory.StoreEpisodic); err != nil || rec.AccessCount != 0 {
		t.Fatalf("with 4 records pending the disk has access count %v (%v), want 0: below the threshold nothing is written", rec.AccessCount, err)
	}
	h.recallOne(crashWord(4), 1)
	if len(h.e.wb.wake) != 1 {
		t.Fatal("the recall that left 5 records pending did not wake the flusher")
	}
	resume()
	waitFor(t, "the flusher to write the 5 pending records", func() bool {
		for _, id := range ids {
			if rec, err := h.onDisk(id, memory.StoreEpisodic); err != nil || rec.AccessCount != 1 {
				return false
			}
		}
		return true
	})
}

// pauseFlusher stops the write-behind's flusher, leaving the pending
// effects and any wake-up where they are; resume starts it again, and
// runs at cleanup if the test ends first, so that Close finds it running.
func (h *harness) pauseFlusher() (resume func()) {
	h.t.Helper()
	w := h.e.wb
	close(w.stop)
	<-w.done
	w.stop, w.done = make(chan struct{}), make(chan struct{})
	var once sync.Once
	resume = func() { once.Do(func() { go h.e.runFlusher() }) }
	h.t.Cleanup(resume)
	return resume
}

// TestRecallFlushKeepsWorkingInMemory: a flush of the effects of a recall
// of a working-store record writes nothing of it to the store, where
// working records never go, and the record keeps its effects in memory.
func TestRecallFlushKeepsWorkingInMemory(t *testing.T) {
	h, _ := auditHarness(t)
	h.opts.recallFlushEvery = time.Hour // flushes only when the test says
	h.reopen()
	id := h.store("a working note about kites", memory.StoreWorking)
	text := "kites"
	resp, err := h.e.RecallQuery(context.Background(), &memory.RecallQueryRequest{Cue: memory.RecallCue{Text: &text},
		Stores: []memory.StoreType{memory.StoreWorking}, Limit: 1, IncludeDecayed: true, Reconsolidate: true})
	if err != nil || len(resp.Memories) != 1 || resp.Memories[0].Record.ID != id {
		t.Fatalf("recall of the working note: %+v, %v", resp, err)
	}
	h.flushRecalls()
	if rec, err := h.onDisk(id, memory.StoreWorking); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after the flush the store holds the working record: %+v, %v", rec, err)
	}
	if got := h.record(id).AccessCount; got != 1 {
		t.Fatalf("access count of the working record after the flush: %d, want 1", got)
	}
}

// TestRecallEffectsSealedRetry: in an encrypted directory, a flush whose
// commit fails (here: the disk is full) leaves the pending effects as
// the recall encoded them, so reads still see them and the flush that
// follows once space returns writes the record intact. Sealing a value
// must not wipe the encoding the write-behind keeps.
func TestRecallEffectsSealedRetry(t *testing.T) {
	var free atomic.Uint64
	free.Store(1 << 40)
	db, err := store.Open(t.TempDir(), store.Options{Passphrase: []byte("correct horse battery staple"),
		KDF: store.KDFParams{MemoryKiB: 64, Iterations: 1, Parallelism: 1}, MinFreeBytes: 1 << 20,
		DiskFree: func(string) (uint64, error) { return free.Load(), nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	e, err := Open(context.Background(), db, Options{SimilarLinks: -1, recallFlushEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	h := &harness{t: t, db: db, e: e}
	id := h.store("a sealed note about kites", memory.StoreEpisodic)
	if got := h.recallOne("kites", 1); len(got) != 1 || got[0] != id {
		t.Fatalf("recall of the note: %v", got)
	}
	free.Store(0)
	e.big.RLock()
	err = e.flushRecalls()
	e.big.RUnlock()
	if !errors.Is(err, store.ErrNoSpace) {
		t.Fatalf("flush on a full disk: %v, want ErrNoSpace", err)
	}
	rec, err := e.Record(context.Background(), &memory.IntrospectRecordRequest{RecordID: id})
	if err != nil || rec.AccessCount != 1 {
		t.Fatalf("the recalled record after a failed flush: %+v, %v; want access count 1", rec, err)
	}
	free.Store(1 << 40)
	h.flushRecalls()
	rec, err = db.GetRecord(store.DefaultNS, memory.StoreEpisodic, id)
	if err != nil || rec.AccessCount != 1 || rec.Content.Blocks[0].Data == nil {
		t.Fatalf("the record on disk after the flush: %+v, %v; want it intact with access count 1", rec, err)
	}
}
