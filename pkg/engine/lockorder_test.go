package engine

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testsync"
	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/engine/internal/lockorder"
	"memsvc.dev/memsvc/pkg/memory"
)

// lines collects lines written from several goroutines: lock order
// reports, or log output.
type lines struct {
	mu  sync.Mutex
	got []string
}

func (l *lines) report(err error) { l.Write([]byte(err.Error())) }

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, string(p))
	return len(p), nil
}

func (l *lines) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.got
	l.got = nil
	return out
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.got, "")
}

// TestLockOrderCatchesInversion: the checker watches the engine's own
// locks, so taking them against the documented order is reported at once,
// naming both locks, even though nothing deadlocks in a single goroutine.
func TestLockOrderCatchesInversion(t *testing.T) {
	var log lines
	h := newHarness(t, Options{SimilarLinks: -1, lockReport: log.report})
	e := h.e

	lockorder.Nest(e.mu.RLocker(), e.big.RLocker()) // big comes before mu
	e.lockRecords([]memory.ID{memory.MustParseID("0196a9e2-5c1d-7f00-8a00-000000000001")})()
	stripe := &e.locks[e.stripe(memory.MustParseID("0196a9e2-5c1d-7f00-8a00-000000000002"))]
	lockorder.Nest(stripe, &e.dreamMu)    // an operation lock under a record stripe
	lockorder.Nest(&e.tickMu, &e.dreamMu) // two operation locks

	errs := log.take()
	want := []string{
		"big (rank 2) taken while holding mu (rank 7)",
		"dreamMu (rank 1) taken while holding record[",
		"dreamMu (rank 1) taken while holding tickMu (rank 1)",
	}
	if len(errs) != len(want) {
		t.Fatalf("reports %q, want %d", errs, len(want))
	}
	for i, w := range want {
		if !strings.Contains(errs[i], w) {
			t.Errorf("report %q, want it to contain %q", errs[i], w)
		}
	}
}

// TestLockOrderUnderLoad runs every kind of operation at once, with the
// audit log and background linking on, under the checker: an acquisition
// that breaks the order panics (before it can deadlock), and the checker
// must have seen the nested paths (so it is really watching them).
func TestLockOrderUnderLoad(t *testing.T) {
	dir := t.TempDir()
	alog, err := audit.Open(filepath.Join(dir, "audit.jsonl"), audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { alog.Close() })
	h := &harness{t: t, dir: dir, clock: testsync.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))}
	h.opts = Options{Now: h.clock.Now, Audit: alog, WorkingCapacity: 2, lockReport: func(err error) { panic(err) }}
	h.open()
	t.Cleanup(h.close)
	ctx := context.Background()

	seed := make([]memory.ID, 20)
	for i := range seed {
		c := memory.TextContent("seed note about the deploy pipeline number " + string(rune('a'+i)))
		c.Blocks[0].Embedding = []float32{1, float32(i), 0.5}
		resp, err := h.e.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: c})
		if err != nil {
			t.Fatal(err)
		}
		seed[i] = resp.RecordID
	}
	// A pending raw entry, so a dream tick has a group to write (it takes
	// big only to write one).
	pending := rawReq("lock-order", "a pending raw turn about the deploy pipeline")
	if _, err := h.e.EncodeStoreRaw(ctx, &pending); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(3 * time.Hour)
	var archive bytes.Buffer
	if _, err := h.e.Export(ctx, &memory.ExportRequest{Format: "cma", IncludeRawJournal: true}, &archive); err != nil {
		t.Fatal(err)
	}
	yes := true
	working := memory.StoreWorking
	ops := []func() error{
		func() error {
			_, err := h.e.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: memory.TextContent("a working note"), Store: &working})
			return err
		},
		func() error {
			_, err := h.e.EncodeBatchRaw(ctx, &memory.EncodeBatchStoreRawRequest{Records: []memory.EncodeStoreRawRequest{
				{RecordID: ptr(h.e.ids.New()), SessionID: "s", Source: memory.SourceConversation, Speaker: memory.SpeakerUser,
					Visibility: memory.VisibilityNormal, SecrecyLevel: memory.SecrecyPublic, Content: memory.TextContent("deploy pipeline raw turn")}}})
			return err
		},
		func() error {
			req := memory.DefaultRecallQueryRequest()
			req.Cue.Text = ptr("deploy pipeline")
			req.Cue.Embedding = []float32{1, 2, 0.5}
			_, err := h.e.RecallQuery(ctx, &req)
			return err
		},
		func() error {
			return h.e.EncodeUpdate(ctx, &memory.EncodeUpdateRequest{RecordID: seed[1], Metadata: memory.JSON(`{"n":1}`)})
		},
		func() error { _, err := h.e.DecayTick(ctx, &memory.DecayTickRequest{}); return err },
		func() error { _, err := h.e.DreamTick(ctx, dreamReq()); return err },
		func() error {
			return h.e.SetMode(ctx, &memory.SetModeRequest{Mode: memory.ModePerfect, Scope: []memory.StoreType{memory.StoreSemantic}})
		},
		func() error {
			_, err := h.e.Consolidate(ctx, &memory.ConsolidateRequest{Strategy: memory.ConsolidateIncremental})
			return err
		},
		func() error { _, err := h.e.Stats(ctx); return err },
		func() error {
			_, err := h.e.Forget(ctx, &memory.ForgetRequest{RecordIDs: seed[2:3], Cascade: true, Confirm: &yes})
			return err
		},
		func() error {
			_, err := h.e.Export(ctx, &memory.ExportRequest{Format: "cma"}, &bytes.Buffer{})
			return err
		},
		func() error {
			req := memory.DefaultImportRequest()
			_, err := h.e.Import(ctx, &req, bytes.NewReader(archive.Bytes()))
			return err
		},
	}
	var wg sync.WaitGroup
	errc := make(chan error, len(ops)*3)
	for range 3 {
		for _, op := range ops {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := op(); err != nil {
					errc <- err
				}
			}()
		}
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the operations did not finish in two minutes: a deadlock?")
	}
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if err := h.e.syncLinks(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h.e.syncAudit(); err != nil {
		t.Fatal(err)
	}
	seen := h.e.order.Observed()
	for _, want := range [][2]string{
		{"big", "mu"}, {"big", "record"}, {"big", "workMu"}, {"big", "rawMu"}, {"big", "aud.mu"},
		// A writer always queues for a group commit; whether it also
		// leads one (and takes aud.mu) depends on timing.
		{"record", "mu"}, {"record", "aud.queue"}, {"workMu", "aud.queue"}, {"rawMu", "aud.queue"}, {"aud.mu", "aud.queue"},
		{"dreamMu", "big"}, {"tickMu", "mu"}, {"modeMu", "mu"}, {"mu", "evo.mu"}, {"mu", "vecMu"},
	} {
		if !slices.Contains(seen, want) {
			t.Errorf("the checker never saw %s held while %s was taken; seen: %v", want[0], want[1], seen)
		}
	}
}
