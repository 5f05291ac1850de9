package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestPageCursors: over HTTP, the "before" cursor of recall/query and
// recall/raw and the "after" cursor of recall/timeline page through
// records that all share one creation time (the test engine's clock
// stands still), each record exactly once.
func TestPageCursors(t *testing.T) {
	const n, page = 30, 7
	eng := newEngine(t)
	f := newFixture(t, eng, Options{MaxBodyBytes: testBodyLimit})
	recs, raws := make([]string, n), make([]string, n)
	for i := range recs {
		recs[i] = textRecord(fmt.Sprintf("entry %d", i))
		raws[i] = fmt.Sprintf(`{"session_id":"s1","source":"conversation","speaker":"user","visibility":"normal","secrecy_level":"public","content":{"blocks":[{"modality":"text","format":"text/plain","data":%s}]}}`,
			bytesArray(fmt.Sprintf("raw %d", i)))
	}
	for path, body := range map[string]string{
		"/v1/encode/batch":     `{"records":[` + strings.Join(recs, ",") + `]}`,
		"/v1/encode/raw/batch": `{"records":[` + strings.Join(raws, ",") + `]}`,
	} {
		if resp, data := f.do(t, request{method: "POST", path: path, body: body}); resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, data)
		}
	}

	type item struct {
		ID        string `json:"id"`
		CreatedAt string `json:"created_at"`
	}
	type recalled struct {
		Record item `json:"record"`
	}
	walk := func(t *testing.T, path, bodyFmt string, items func([]byte) []item) {
		seen := map[string]bool{}
		cursor := "null"
		for range n/page + 2 {
			resp, data := f.do(t, request{method: "POST", path: path, body: fmt.Sprintf(bodyFmt, cursor)})
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %s", resp.StatusCode, data)
			}
			got := items(data)
			for _, it := range got {
				if seen[it.ID] {
					t.Fatalf("%s again after cursor %s", it.ID, cursor)
				}
				seen[it.ID] = true
			}
			if len(got) < page {
				if len(seen) != n {
					t.Fatalf("the pages held %d records, want %d", len(seen), n)
				}
				return
			}
			last := got[len(got)-1]
			cursor = fmt.Sprintf(`{"created_at":%q,"id":%q}`, last.CreatedAt, last.ID)
		}
		t.Fatalf("still paging after %d pages", n/page+2)
	}
	decode := func(t *testing.T, data []byte, v any) {
		t.Helper()
		if err := json.Unmarshal(data, v); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
	}
	t.Run("query", func(t *testing.T) {
		walk(t, "/v1/recall/query", `{"cue":{},"limit":7,"reconsolidate":false,"before":%s}`, func(data []byte) []item {
			var out struct{ Memories []recalled }
			decode(t, data, &out)
			var items []item
			for _, m := range out.Memories {
				items = append(items, m.Record)
			}
			return items
		})
	})
	t.Run("raw", func(t *testing.T) {
		walk(t, "/v1/recall/raw", `{"limit":7,"before":%s}`, func(data []byte) []item {
			var out struct{ Records []item }
			decode(t, data, &out)
			return out.Records
		})
	})
	t.Run("timeline", func(t *testing.T) {
		walk(t, "/v1/recall/timeline", `{"range":{"start":"2026-11-01T00:00:00Z","end":"2026-11-02T00:00:00Z"},"limit":7,"after":%s}`, func(data []byte) []item {
			var out struct {
				Buckets []struct{ Memories []recalled }
			}
			decode(t, data, &out)
			var items []item
			for _, b := range out.Buckets {
				for _, m := range b.Memories {
					items = append(items, m.Record)
				}
			}
			return items
		})
	})
	t.Run("cursor without a time", func(t *testing.T) {
		resp, data := f.do(t, request{method: "POST", path: "/v1/recall/raw", body: `{"before":{"id":"01890a5d-ac96-774b-bcce-b302099a8057"}}`})
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(data), "before.created_at") {
			t.Errorf("%d %s, want 400 naming before.created_at", resp.StatusCode, data)
		}
	})
}
