package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

// TestVectorRecallWithWrites runs vector recalls, embedded stores (each
// linked in the background by a vector scan) and forgets together; under
// -race this checks the chunked locking of the scans, and every answer
// must hold only records that exist and are eligible.
func TestVectorRecallWithWrites(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(9, 10))
	vec := func() []float32 {
		v := make([]float32, 32)
		for j := range v {
			v[j] = rng.Float32() - 0.5
		}
		return v
	}
	var ids []memory.ID
	for i := range 300 {
		ids = append(ids, vecRecord(h, fmt.Sprint("seed vector note ", i), vec()))
	}
	queries := make([][]float32, 40)
	for i := range queries {
		queries[i] = vec()
	}
	stored := make([][]float32, 40)
	for i := range stored {
		stored[i] = vec()
	}
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	wg.Add(3)
	go func() {
		defer wg.Done()
		for _, q := range queries {
			req := memory.DefaultRecallQueryRequest()
			req.Cue.Embedding = q
			req.Reconsolidate = false
			st := memory.StoreEpisodic
			req.Stores = []memory.StoreType{st}
			resp, err := h.e.RecallQuery(ctx, &req)
			if err != nil {
				errs <- err
				return
			}
			for _, r := range resp.Memories {
				if r.Record.Store != st {
					errs <- fmt.Errorf("recall returned a %s record", r.Record.Store)
				}
			}
		}
	}()
	go func() {
		defer wg.Done()
		for i, v := range stored {
			c := memory.TextContent(fmt.Sprint("concurrent vector note ", i))
			c.Blocks[0].Embedding = v
			if _, err := h.e.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: c}); err != nil {
				errs <- err
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		yes := true
		for _, id := range ids[:100] {
			if _, err := h.e.Forget(ctx, &memory.ForgetRequest{RecordIDs: []memory.ID{id}, Confirm: &yes}); err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := h.e.syncLinks(ctx); err != nil {
		t.Fatal(err)
	}
	// After the dust settles a search sees exactly the live records.
	req := memory.DefaultRecallQueryRequest()
	req.Cue.Embedding = queries[0]
	req.Limit = 100
	req.Reconsolidate = false
	req.ActivationDepth = 0
	resp, err := h.e.RecallQuery(ctx, &req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Memories) != 100 {
		t.Fatalf("%d memories recalled, want 100 of the %d live", len(resp.Memories), 200+len(stored))
	}
	forgotten := map[memory.ID]bool{}
	for _, id := range ids[:100] {
		forgotten[id] = true
	}
	for _, r := range resp.Memories {
		if forgotten[r.Record.ID] {
			t.Fatalf("forgotten record %s recalled", r.Record.ID)
		}
	}
}
