package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// The page cursors of recall.query, recall.raw_query and recall.timeline
// reach every record exactly once, in order, even when a batch gave more
// records one creation time than any page or limit holds.

const (
	pageBatch = memory.MaxBatchRecords // one instant, the largest batch
	pageOlder = 50                     // older records, one per second
	pageSize  = 40                     // divides neither count
)

// seedPages stores the older records and then one full batch, curated or
// raw, and returns when the batch was stored.
func seedPages(t *testing.T, h *harness, raw bool) time.Time {
	t.Helper()
	ctx := context.Background()
	for i := range pageOlder {
		h.clock.Advance(time.Second)
		if raw {
			r := rawReq(fmt.Sprintf("s%d", i%3), fmt.Sprintf("older note %d.", i))
			if _, err := h.e.EncodeStoreRaw(ctx, &r); err != nil {
				t.Fatal(err)
			}
		} else {
			h.store(fmt.Sprintf("older note %d.", i), memory.StoreEpisodic)
		}
	}
	h.clock.Advance(time.Minute)
	if raw {
		var b memory.EncodeBatchStoreRawRequest
		for i := range pageBatch {
			b.Records = append(b.Records, rawReq(fmt.Sprintf("s%d", i%3), fmt.Sprintf("batch note %d.", i)))
		}
		if _, err := h.e.EncodeBatchRaw(ctx, &b); err != nil {
			t.Fatal(err)
		}
	} else {
		var b memory.EncodeBatchRequest
		for i := range pageBatch {
			b.Records = append(b.Records, memory.EncodeStoreRequest{Content: memory.TextContent(fmt.Sprintf("batch note %d.", i))})
		}
		if _, err := h.e.EncodeBatch(ctx, &b); err != nil {
			t.Fatal(err)
		}
	}
	return h.clock.Now()
}

// pageWalk follows a listing's cursor page by page (a bounded number of
// pages) and checks that each page continues the order of the ones before
// it and that every record comes exactly once. next fetches the page after
// a cursor (nil: the first page) and returns the records' creation times
// and ids. newest says the listing runs newest first.
func pageWalk(t *testing.T, want int, newest bool, next func(cur *memory.PageCursor) ([]memory.PageCursor, bool)) {
	t.Helper()
	seen := map[memory.ID]bool{}
	var cur *memory.PageCursor
	for page := 0; page <= want/pageSize+2; page++ {
		items, more := next(cur)
		for _, it := range items {
			if seen[it.ID] {
				t.Fatalf("page %d: %s again", page, it.ID)
			}
			seen[it.ID] = true
			if cur != nil {
				if c := cur.Compare(it.CreatedAt, it.ID); newest && c >= 0 || !newest && c <= 0 {
					t.Fatalf("page %d: %s (%s) is out of order after %s (%s)", page, it.ID, it.CreatedAt, cur.ID, cur.CreatedAt)
				}
			}
			c := it
			cur = &c
		}
		if !more {
			if len(seen) != want {
				t.Fatalf("the pages held %d records, want %d", len(seen), want)
			}
			return
		}
		if len(items) == 0 {
			t.Fatalf("page %d is empty but says there is more", page)
		}
	}
	t.Fatalf("still paging after %d pages; %d of %d records seen", want/pageSize+2, len(seen), want)
}

func TestRecallQueryPages(t *testing.T) {
	h := newHarness(t, Options{})
	seedPages(t, h, false)
	pageWalk(t, pageOlder+pageBatch, true, func(cur *memory.PageCursor) ([]memory.PageCursor, bool) {
		req := memory.DefaultRecallQueryRequest()
		req.Limit, req.Reconsolidate, req.Before = pageSize+1, false, cur
		resp, err := h.e.RecallQuery(context.Background(), &req)
		if err != nil {
			t.Fatal(err)
		}
		var out []memory.PageCursor
		for _, m := range resp.Memories {
			out = append(out, memory.PageCursor{CreatedAt: m.Record.CreatedAt, ID: m.Record.ID})
		}
		if len(out) > pageSize {
			return out[:pageSize], true
		}
		return out, false
	})
}

// inSession counts the entries of session s<r> among n entries stored by
// seedPages: entry i goes to session s<i%3>.
func inSession(n, r int) int { return (n - r + 2) / 3 }

func TestRecallRawPages(t *testing.T) {
	for _, tc := range []struct {
		name    string
		query   string // a word query runs on the raw text index, a symbol one on the scan
		session string
		want    int
	}{
		{"all", "", "", pageOlder + pageBatch},
		{"session", "", "s1", inSession(pageOlder, 1) + inSession(pageBatch, 1)},
		{"word query", "note", "", pageOlder + pageBatch},
		{"substring query", ".", "s2", inSession(pageOlder, 2) + inSession(pageBatch, 2)},
		{"word query in a range", "note", "", pageBatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{})
			batchAt := seedPages(t, h, true)
			pageWalk(t, tc.want, true, func(cur *memory.PageCursor) ([]memory.PageCursor, bool) {
				req := memory.DefaultRecallRawQueryRequest()
				req.Limit, req.Before = pageSize, cur
				if tc.query != "" {
					req.Query = &tc.query
				}
				if tc.session != "" {
					req.SessionID = &tc.session
				}
				if tc.name == "word query in a range" {
					req.Temporal = &memory.TemporalRange{Start: batchAt, End: batchAt.Add(time.Hour)}
				}
				resp, err := h.e.RecallRaw(context.Background(), &req)
				if err != nil {
					t.Fatal(err)
				}
				var out []memory.PageCursor
				for _, r := range resp.Records {
					out = append(out, memory.PageCursor{CreatedAt: r.CreatedAt, ID: r.ID})
				}
				return out, len(out) == pageSize
			})
		})
	}
}

func TestRecallTimelinePages(t *testing.T) {
	h := newHarness(t, Options{})
	start := h.clock.Now()
	end := seedPages(t, h, false)
	pageWalk(t, pageOlder+pageBatch, false, func(cur *memory.PageCursor) ([]memory.PageCursor, bool) {
		req := memory.DefaultRecallTimelineRequest()
		req.Range = memory.TemporalRange{Start: start, End: end}
		req.Granularity = memory.GranularityDay
		req.Limit, req.After = ptr(uint32(pageSize)), cur
		resp, err := h.e.RecallTimeline(context.Background(), &req)
		if err != nil {
			t.Fatal(err)
		}
		var out []memory.PageCursor
		for _, b := range resp.Buckets {
			for _, m := range b.Memories {
				out = append(out, memory.PageCursor{CreatedAt: m.Record.CreatedAt, ID: m.Record.ID})
			}
		}
		return out, resp.Truncated
	})
}

func TestPageCursorNeedsTime(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := context.Background()
	bad := &memory.PageCursor{ID: memory.MustParseID("01890a5d-ac96-774b-bcce-b302099a8057")}
	q := memory.DefaultRecallQueryRequest()
	q.Before = bad
	_, err := h.e.RecallQuery(ctx, &q)
	wantCode(t, err, memory.CodeValidation, "before.created_at")
	r := memory.DefaultRecallRawQueryRequest()
	r.Before = bad
	_, err = h.e.RecallRaw(ctx, &r)
	wantCode(t, err, memory.CodeValidation, "before.created_at")
	tl := memory.DefaultRecallTimelineRequest()
	tl.Range = memory.TemporalRange{Start: h.clock.Now(), End: h.clock.Now()}
	tl.After = bad
	_, err = h.e.RecallTimeline(ctx, &tl)
	wantCode(t, err, memory.CodeValidation, "after.created_at")
}
