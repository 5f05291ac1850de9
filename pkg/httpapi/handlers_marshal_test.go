package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

// TestMarshal: the answers encoded without the extra scan come out exactly
// as json.Marshal writes them, nil included, also into a reused buffer
// that held a longer answer; any other Marshaler goes through
// json.Marshal, which compacts and escapes its output, and its buffer is
// not the server's to reuse.
func TestMarshal(t *testing.T) {
	rec := memory.MemoryRecord{Store: memory.StoreEpisodic, Content: memory.TextContent("<b>&</b>"), Meta: memory.LegacyMeta()}
	hit := memory.RecalledMemory{Record: rec, RenderedContent: rec.Content}
	srv, err := New(&stubService{}, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		v      any
		pooled bool
	}{
		{&memory.RecallQueryResponse{Memories: []memory.RecalledMemory{hit, hit, hit}}, true},
		{&memory.RecallQueryResponse{Memories: []memory.RecalledMemory{hit}}, true},
		{&memory.RecallAssociateResponse{Memories: []memory.RecalledMemory{hit}}, true},
		{&memory.RecallTimelineResponse{Buckets: []memory.TimelineBucket{{Memories: []memory.RecalledMemory{hit}, Count: 1}}}, true},
		{(*memory.RecallQueryResponse)(nil), false},
		{json.RawMessage(`{ "a" : "<script>" }`), false},
	} {
		want, err := json.Marshal(tc.v)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := marshal(tc.v); err != nil || string(got) != string(want) {
			t.Errorf("%T: marshal %s %v, want %s", tc.v, got, err, want)
		}
		for range 2 {
			got, pooled, err := srv.encode(tc.v, memory.BinaryArrays)
			if err != nil {
				t.Fatalf("%T: %v", tc.v, err)
			}
			if string(got) != string(want) || pooled != tc.pooled {
				t.Errorf("%T: pooled %v, want %v:\n got %s\nwant %s", tc.v, pooled, tc.pooled, got, want)
			}
			if pooled {
				srv.answers.put(got)
			}
		}
	}
}

// echoRecall answers a recall with one memory whose summary is the query
// text, so that every request has its own answer.
type echoRecall struct{ memory.Service }

func (echoRecall) RecallQuery(_ context.Context, req *memory.RecallQueryRequest) (*memory.RecallQueryResponse, error) {
	return echoAnswer(*req.Cue.Text), nil
}

func echoAnswer(text string) *memory.RecallQueryResponse {
	c := memory.TextContent(strings.Repeat(text, 50))
	c.Summary = &text
	rec := memory.MemoryRecord{Store: memory.StoreEpisodic, Content: c, Meta: memory.LegacyMeta()}
	return &memory.RecallQueryResponse{Memories: []memory.RecalledMemory{{Record: rec, RenderedContent: c}}}
}

// TestAnswerBuffersNotShared: concurrent recalls, whose answers are
// written into reused buffers, each receive exactly their own answer; a
// buffer given back before its answer was written would mix them up.
func TestAnswerBuffersNotShared(t *testing.T) {
	f := newFixture(t, echoRecall{}, Options{})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Go(func() {
			for i := range 40 {
				text := fmt.Sprintf("client %d query %d %s", g, i, strings.Repeat("x", (g*40+i)%97))
				want, err := json.Marshal(echoAnswer(text))
				if err != nil {
					errs <- err
					return
				}
				resp, err := f.ts.Client().Post(f.ts.URL+wire.PathRecallQuery, "application/json",
					strings.NewReader(fmt.Sprintf(`{"cue":{"text":%q},"limit":1}`, text)))
				if err != nil {
					errs <- err
					return
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK || string(body) != string(want) {
					errs <- fmt.Errorf("%q: %v, status %d, body\n%s\nwant\n%s", text, err, resp.StatusCode, body, want)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
