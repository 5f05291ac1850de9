package e2e

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"memsvc.dev/memsvc/pkg/memory"
)

// seedBatches stores older records and raw entries in one batch each, and
// then a full batch of each: every record of a batch has one creation
// time, so the newest instant holds more records than any page.
func seedBatches(t *testing.T, base string, older, newest int) {
	t.Helper()
	for _, n := range []int{older, newest} {
		var batch memory.EncodeBatchRequest
		var raws memory.EncodeBatchStoreRawRequest
		for i := range n {
			text := fmt.Sprintf("Batch of %d, note %04d.", n, i)
			batch.Records = append(batch.Records, memory.EncodeStoreRequest{Content: memory.TextContent(text)})
			raws.Records = append(raws.Records, memory.EncodeStoreRawRequest{
				SessionID: fmt.Sprintf("sess-%d", i%4), Source: memory.SourceConversation, Speaker: memory.SpeakerUser,
				Visibility: memory.VisibilityNormal, SecrecyLevel: memory.SecrecyPublic, Content: memory.TextContent(text),
			})
		}
		var out memory.EncodeBatchResponse
		if code := apiCall(t, "POST", base+"/v1/encode/batch", "", batch, &out); code != 200 || len(out.Results) != n {
			t.Fatalf("batch of %d: %d, %d results", n, code, len(out.Results))
		}
		var rawOut memory.EncodeBatchStoreRawResponse
		if code := apiCall(t, "POST", base+"/v1/encode/raw/batch", "", raws, &rawOut); code != 200 || len(rawOut.Results) != n {
			t.Fatalf("raw batch of %d: %d, %d results", n, code, len(rawOut.Results))
		}
	}
}

// walkPages collects the data-id of every item on the page shown and on
// each page its next link (next, a CSS selector) leads to, until a page
// has none; at most maxPages pages. It fails when a page repeats an item.
func (b *browser) walkPages(items, next string, maxPages int) []string {
	b.t.Helper()
	var all []string
	seen := map[string]int{}
	for page := 1; page <= maxPages; page++ {
		ids := b.attrs(items, "data-id")
		if len(ids) == 0 {
			b.fail("page %d lists nothing", page)
		}
		for _, id := range ids {
			if p, ok := seen[id]; ok {
				b.fail("page %d shows %s again (first on page %d)", page, id, p)
			}
			seen[id] = page
		}
		all = append(all, ids...)
		if eval[int](b, fmt.Sprintf(`document.querySelectorAll(%q).length`, next)) == 0 {
			return all
		}
		b.do(fmt.Sprintf("page %d", page+1), chromedp.Click(chromedp.CSS(next)))
		// The next page is drawn when the view is ready again and its first
		// item is another one.
		b.wait(fmt.Sprintf("page %d", page+1), fmt.Sprintf(`(() => { const m = document.getElementById('main'); const f = m.querySelector(%q);
			return m.dataset.ready === 'true' && !!f && f.dataset.id !== %q; })()`, items, ids[0]))
	}
	b.fail("still a next page after %d pages (%d items seen)", maxPages, len(all))
	return nil
}

// TestInspectorPagesThroughBatch: the inspector's "Older" links of the
// memory list and the journal, and "Later in this window" of the
// timeline, reach every record exactly once although the newest 1,000
// share one creation time (a batch), more than any page or server limit.
func TestInspectorPagesThroughBatch(t *testing.T) {
	const older, newest = 50, memory.MaxBatchRecords
	srv := startServer(t, t.TempDir())
	base := "http://" + srv.addr
	seedBatches(t, base, older, newest)
	b := newBrowser(t, base)
	if b == nil {
		return
	}
	const total = older + newest

	// The memory list, 400 a page: 400, 400, 250.
	b.do("open the memory list", chromedp.Navigate(base+"/ui/#/?limit=400"))
	b.waitView("memories", "Newest memories")
	if got := b.walkPages(".result", `a[rel="next"]`, 5); len(got) != total {
		t.Errorf("the memory pages held %d memories, want %d", len(got), total)
	}
	if got := b.texts(".result-title"); len(got) != total%400 || got[len(got)-1] != fmt.Sprintf("Batch of %d, note %04d.", older, 0) {
		t.Errorf("the last memory page has %d memories, ending with %q", len(got), got[max(0, len(got)-1):])
	}
	b.shot("memories-last-page", false)

	// The timeline, oldest first, 300 a page: 300, 300, 300, 150.
	b.do("open the timeline", chromedp.Navigate(base+"/ui/#/timeline"))
	b.waitView("timeline", "Timeline")
	if got := b.walkPages("#timeline-list .result", "#timeline-truncated a", 6); len(got) != total {
		t.Errorf("the timeline pages held %d memories, want %d", len(got), total)
	}

	// The journal, 50 a page.
	b.do("open the journal", chromedp.Navigate(base+"/ui/#/journal"))
	b.waitView("journal", "Raw journal")
	if got := b.walkPages("#journal-list article.entry", `a[rel="next"]`, total/50+2); len(got) != total {
		t.Errorf("the journal pages held %d entries, want %d", len(got), total)
	}
	if got := b.texts("#journal-list pre.content"); len(got) == 0 || got[len(got)-1] != fmt.Sprintf("Batch of %d, note %04d.", older, 0) {
		t.Errorf("the last journal page ends with %q", got[max(0, len(got)-1):])
	}
	b.checkClean()
}
