package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// waitFor polls cond until it holds, failing the test after a deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestGroupCommitSharesSync: audited stores that queue while a group
// commit syncs all go out in the next group, with one sync, and their
// audit entries take consecutive sequences.
func TestGroupCommitSharesSync(t *testing.T) {
	h, path := auditHarness(t)
	a := h.e.aud
	entered, release := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	first.Store(true)
	a.beforeSync = func() {
		if first.CompareAndSwap(true, false) {
			close(entered)
			<-release
		}
	}
	groups0 := a.groups.Load()
	const waiting = 8
	ids := make(chan memory.ID, waiting+1)
	var wg sync.WaitGroup
	store := func(i int) {
		defer wg.Done()
		ids <- h.store(fmt.Sprint("grouped note ", i), memory.StoreEpisodic)
	}
	wg.Add(1)
	go store(0)
	<-entered
	for i := 1; i <= waiting; i++ {
		wg.Add(1)
		go store(i)
	}
	waitFor(t, "the stores to queue", func() bool {
		a.qmu.Lock()
		defer a.qmu.Unlock()
		return len(a.queue) == waiting
	})
	close(release)
	wg.Wait()
	close(ids)
	if got := a.groups.Load() - groups0; got != 2 {
		t.Fatalf("%d group commits for one store and %d that queued behind it, want 2", got, waiting)
	}
	if err := h.e.syncAudit(); err != nil {
		t.Fatal(err)
	}
	logged := map[string]bool{}
	lines := readAudit(t, path) // verifies the chain, sequences included
	for i, l := range lines {
		if l.Sequence != uint64(i+1) {
			t.Fatalf("entry %d has sequence %d", i, l.Sequence)
		}
		logged[l.RecordIDs[0]] = true
	}
	n := 0
	for id := range ids {
		n++
		if !logged[id.String()] || !h.exists(id) {
			t.Errorf("store %s: logged %v, exists %v", id, logged[id.String()], h.exists(id))
		}
	}
	if n != waiting+1 || len(lines) != waiting+1 {
		t.Fatalf("%d stores, %d audit entries, want %d", n, len(lines), waiting+1)
	}
}

// TestGroupCommitCrash: 16 clients store at once on a disk that crashes
// (what was synced survives, and a random share of what was not) while
// the group commits run. After a restart on the crashed disk every
// acknowledged store is there, and every record has exactly one audit
// entry, taken from the log or replayed from the outbox, in a chain
// without a gap.
func TestGroupCommitCrash(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { groupCommitCrash(t, seed) })
	}
}

func groupCommitCrash(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	mem := vfs.NewCrashableMem()
	dir := t.TempDir()
	logPath := filepath.Join(dir, "audit.jsonl")
	log, err := audit.Open(logPath, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open("data", store.Options{FS: mem, CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	e, err := Open(context.Background(), db, Options{Audit: log, SimilarLinks: -1})
	if err != nil {
		t.Fatal(err)
	}

	var (
		mu    sync.Mutex
		acked []memory.ID
		stop  atomic.Bool
		wg    sync.WaitGroup
	)
	st := memory.StoreEpisodic
	for c := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000 && !stop.Load(); i++ {
				resp, err := e.EncodeStore(context.Background(), &memory.EncodeStoreRequest{
					Content: memory.TextContent(fmt.Sprintf("client %d note %d", c, i)), Store: &st})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				acked = append(acked, resp.RecordID)
				mu.Unlock()
			}
		}()
	}
	target := 100 + rng.IntN(200)
	waitFor(t, "stores to be acknowledged", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(acked) >= target
	})
	// The crash: the appender is held so the log copy is what the log
	// held at that moment; acknowledgements are taken first, so every one
	// of them came from a commit that returned before the crash.
	a := e.aud
	a.flushMu.Lock()
	mu.Lock()
	durable := append([]memory.ID(nil), acked...)
	mu.Unlock()
	crashed := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: rng.IntN(101), RNG: rand.New(rand.NewPCG(seed, 11))})
	logBytes, err := os.ReadFile(logPath)
	a.flushMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	stop.Store(true)
	wg.Wait()
	_ = e.Close()
	_ = db.Close()
	_ = log.Close()

	// Restart on the crashed disk with the log as it was.
	logPath2 := filepath.Join(dir, "audit-after.jsonl")
	if err := os.WriteFile(logPath2, logBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	log2, err := audit.Open(logPath2, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer log2.Close()
	db2, err := store.Open("data", store.Options{FS: crashed, CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	e2, err := Open(context.Background(), db2, Options{Audit: log2, SimilarLinks: -1})
	if err != nil {
		t.Fatalf("restart after the crash: %v", err)
	}
	records := episodicIDs(t, db2)
	if err := e2.Close(); err != nil {
		t.Fatal(err)
	}
	for _, id := range durable {
		if !records[id.String()] {
			t.Fatalf("acknowledged store %s lost in the crash (%d acknowledged, %d records after)", id, len(durable), len(records))
		}
	}
	checkStoresAudited(t, logPath2, records)
	t.Logf("%d acknowledged, %d records and audit entries after the crash", len(durable), len(records))
}

// TestLazyCommitWaitsForSyncWAL: an audited change committed lazily is
// visible at once, but its event stays out of the audit log's reach until
// syncWAL has made it durable.
func TestLazyCommitWaitsForSyncWAL(t *testing.T) {
	h, path := auditHarness(t)
	h.store("a note before the lazy change", memory.StoreEpisodic)
	a := h.e.aud
	var syncs atomic.Int32
	a.beforeSync = func() { syncs.Add(1) }
	durable := a.durable.Load()
	ns := h.e.defaultSpace()

	h.e.big.Lock()
	tx := h.e.beginLazy(ns)
	tx.b.PutNSMeta(ns.id, "lazy_test", []byte("written"))
	tx.audit(audit.OpConsolidate, nil, nil, map[string]any{"step": "lazy test"})
	err := tx.commit()
	tx.close()
	h.e.big.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if v, err := h.db.GetNSMeta(ns.id, "lazy_test"); err != nil || string(v) != "written" {
		t.Fatalf("the lazy change is not visible: %q, %v", v, err)
	}
	if n := syncs.Load(); n != 0 {
		t.Fatalf("the lazy commit synced %d times", n)
	}
	if got, want := a.written.Load(), durable+1; got != want {
		t.Fatalf("written sequence %d, want %d", got, want)
	}
	if got := a.durable.Load(); got != durable {
		t.Fatalf("durable sequence moved to %d before the sync, want %d", got, durable)
	}
	if err := h.e.syncAudit(); err != nil {
		t.Fatal(err)
	}
	if lines := readAudit(t, path); len(lines) != int(durable) {
		t.Fatalf("%d audit lines before the sync, want %d", len(lines), durable)
	}

	if err := h.e.syncWAL(); err != nil {
		t.Fatal(err)
	}
	if got := a.durable.Load(); got != durable+1 {
		t.Fatalf("durable sequence %d after the sync, want %d", got, durable+1)
	}
	if err := h.e.syncAudit(); err != nil {
		t.Fatal(err)
	}
	lines := readAudit(t, path)
	if len(lines) != int(durable)+1 || lines[len(lines)-1].Operation != audit.OpConsolidate {
		t.Fatalf("audit log after the sync: %+v, want %d lines ending with the lazy change", lines, durable+1)
	}
}
