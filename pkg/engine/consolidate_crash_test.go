package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testsync"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// The kill -9 test of consolidation: a child process consolidating a copy
// of a store is killed after a given committed step (SIGKILL while it
// holds the engine); a rerun on what it left must end where an
// uninterrupted run followed by the same rerun ends.

// consolidateChildEnv names the child's data directory, the step kind and
// the count of such steps after which it stops to be killed.
const consolidateChildEnv = "MEMSVC_CONSOLIDATE_CHILD"

var consolidateClock = time.Date(2026, 3, 9, 12, 0, 0, 0, time.UTC)

func consolidateChild(spec string) {
	parts := strings.Split(spec, ",")
	stopAfter, _ := strconv.Atoi(parts[2])
	seen := 0
	e := childEngine(parts[0], Options{SimilarLinks: -1, Now: func() time.Time { return consolidateClock },
		consolidationStepped: func(step string) {
			if step != parts[1] {
				return
			}
			if seen++; seen == stopAfter {
				fmt.Println("stepped", step, seen)
				select {} // holding the engine until the kill
			}
		}})
	if _, err := e.Consolidate(context.Background(), &memory.ConsolidateRequest{Strategy: memory.ConsolidateFull}); err != nil {
		childFail(err)
	}
	fmt.Println("finished")
}

// TestConsolidateKill kills a consolidation after its second merge chunk,
// and after its second copy chunk, and checks the state a rerun leaves.
func TestConsolidateKill(t *testing.T) {
	if spec := os.Getenv(consolidateChildEnv); spec != "" {
		consolidateChild(spec)
		return
	}
	src := t.TempDir()
	buildDupStore(t, src)
	for _, step := range []string{"merge", "copy"} {
		t.Run(step, func(t *testing.T) {
			// Uninterrupted: a run, then the rerun.
			whole := filepath.Join(t.TempDir(), "whole")
			if err := os.CopyFS(whole, os.DirFS(src)); err != nil {
				t.Fatal(err)
			}
			consolidateTwice(t, whole, 2)
			want := consolidatedState(t, whole)

			crashed := filepath.Join(t.TempDir(), "crashed")
			if err := os.CopyFS(crashed, os.DirFS(src)); err != nil {
				t.Fatal(err)
			}
			killConsolidation(t, crashed, step, 2)
			if !hasJournal(t, crashed) {
				t.Fatal("the killed run left no journal: it was not interrupted")
			}
			consolidateTwice(t, crashed, 1)
			got := consolidatedState(t, crashed)
			if got != want {
				t.Fatalf("after a kill and a rerun:\n%s\nafter a run and a rerun:\n%s", diffLines(got, want), diffLines(want, got))
			}
			if hasJournal(t, crashed) {
				t.Fatal("the journal is still there after the rerun")
			}
		})
	}
}

// buildDupStore stores 1,200 episodic records in dir: texts of twenty
// words, many of them in groups of near-duplicates (pairs, and chains
// a~b~c whose ends are not near-duplicates), some linked to others, and
// ages them so that later records are fitter than earlier ones.
func buildDupStore(t *testing.T, dir string) {
	t.Helper()
	db := openDir(t, dir)
	defer db.Close()
	clock := testsync.NewClock(consolidateClock.Add(-72 * time.Hour))
	e, err := Open(context.Background(), db, Options{SimilarLinks: -1, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 8))
	word := func() string { return "w" + crashWord(rng.IntN(400)) + crashWord(rng.IntN(400)) }
	var stored []memory.ID
	for batch := range 12 {
		var reqs []memory.EncodeStoreRequest
		for len(reqs) < 100 {
			words := make([]string, 20)
			for i := range words {
				words[i] = word()
			}
			reqs = append(reqs, memory.EncodeStoreRequest{Content: memory.TextContent(strings.Join(words, " "))})
			for range rng.IntN(3) { // a near-duplicate of the previous one, a chain
				words = slices.Clone(words)
				words[rng.IntN(len(words))] = word()
				reqs = append(reqs, memory.EncodeStoreRequest{Content: memory.TextContent(strings.Join(words, " "))})
			}
		}
		rng.Shuffle(len(reqs), func(i, j int) { reqs[i], reqs[j] = reqs[j], reqs[i] })
		for i := range reqs {
			if len(stored) > 0 && rng.IntN(4) == 0 {
				reqs[i].Associations = []memory.ManualAssociation{{TargetID: stored[rng.IntN(len(stored))], AssociationType: memory.AssocCausal, Weight: 0.5}}
			}
		}
		resp, err := e.EncodeBatch(ctx, &memory.EncodeBatchRequest{Records: reqs})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range resp.Results {
			stored = append(stored, r.RecordID)
		}
		clock.Advance(time.Hour)
		if _, err := e.DecayTick(ctx, &memory.DecayTickRequest{TickDurationSeconds: ptr(uint32(3600 * (1 + batch%3)))}); err != nil {
			t.Fatal(err)
		}
	}
}

// consolidateTwice runs times full consolidations on dir.
func consolidateTwice(t *testing.T, dir string, times int) {
	t.Helper()
	db := openDir(t, dir)
	defer db.Close()
	e, err := Open(context.Background(), db, Options{SimilarLinks: -1, Now: func() time.Time { return consolidateClock }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for range times {
		resp, err := e.Consolidate(context.Background(), &memory.ConsolidateRequest{Strategy: memory.ConsolidateFull})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("consolidation: %+v", *resp)
	}
}

// killConsolidation runs a consolidation of dir in a child process and
// kills it with SIGKILL once it committed its n-th step of kind step.
func killConsolidation(t *testing.T, dir, step string, n int) {
	t.Helper()
	cmd, sc := startChild(t, 5*time.Minute, "TestConsolidateKill", fmt.Sprintf("%s=%s,%s,%d", consolidateChildEnv, dir, step, n))
	stopped := false
	for !stopped && sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "error") || line == "finished" {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("child: %s", line)
		}
		stopped = strings.HasPrefix(line, "stepped "+step)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if !stopped {
		t.Fatalf("the child ended before its %s step %d", step, n)
	}
}

// openDir opens the store in dir, failing the test if it cannot.
func openDir(t *testing.T, dir string) *store.DB {
	t.Helper()
	db, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func hasJournal(t *testing.T, dir string) bool {
	t.Helper()
	db := openDir(t, dir)
	defer db.Close()
	_, err := db.GetNSMeta(store.DefaultNS, consolidationKey)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

// consolidatedState describes the records of dir, one line each, without
// what differs between two runs of the same work (the ids and times of
// the copies): an episodic record's version and its links (a link to a
// copy as "copy"), a copy's source, source version and text.
func consolidatedState(t *testing.T, dir string) string {
	t.Helper()
	db := openDir(t, dir)
	defer db.Close()
	episodic := map[memory.ID]bool{}
	var lines []string
	if err := db.ScanRecords(store.DefaultNS, memory.StoreEpisodic, func(rec *memory.MemoryRecord) error {
		episodic[rec.ID] = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.ScanRecords(store.DefaultNS, memory.StoreEpisodic, func(rec *memory.MemoryRecord) error {
		var links []string
		for _, a := range rec.Associations {
			target := a.TargetID.String()
			if !episodic[a.TargetID] {
				target = "copy"
			}
			links = append(links, fmt.Sprintf("%s/%v/%v/%.3f", target, a.AssociationType, a.Origin, a.Weight))
		}
		slices.Sort(links)
		lines = append(lines, fmt.Sprintf("episodic %s v%d %v", rec.ID, rec.Version, links))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.ScanRecords(store.DefaultNS, memory.StoreSemantic, func(rec *memory.MemoryRecord) error {
		from, ok := consolidatedOf(rec)
		text, _ := rec.Content.Text()
		lines = append(lines, fmt.Sprintf("copy of %s v%d (%v) v%d %q", from.RecordID, from.Version, ok, rec.Version, text))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// diffLines lists the lines of a not in b (at most ten).
func diffLines(a, b string) string {
	in := map[string]bool{}
	for _, l := range strings.Split(b, "\n") {
		in[l] = true
	}
	var buf bytes.Buffer
	n := 0
	for _, l := range strings.Split(a, "\n") {
		if !in[l] && n < 10 {
			fmt.Fprintln(&buf, l)
			n++
		}
	}
	return buf.String()
}
