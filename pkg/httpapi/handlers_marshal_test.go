package httpapi

import (
	"encoding/json"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

// TestMarshal: the answers encoded without the extra scan come out exactly
// as json.Marshal writes them, nil included; any other Marshaler goes
// through json.Marshal, which compacts and escapes its output.
func TestMarshal(t *testing.T) {
	rec := memory.MemoryRecord{Store: memory.StoreEpisodic, Content: memory.TextContent("<b>&</b>"), Meta: memory.LegacyMeta()}
	hit := memory.RecalledMemory{Record: rec, RenderedContent: rec.Content}
	for _, v := range []any{
		&memory.RecallQueryResponse{Memories: []memory.RecalledMemory{hit}},
		&memory.RecallAssociateResponse{Memories: []memory.RecalledMemory{hit}},
		&memory.RecallTimelineResponse{Buckets: []memory.TimelineBucket{{Memories: []memory.RecalledMemory{hit}, Count: 1}}},
		(*memory.RecallQueryResponse)(nil),
		json.RawMessage(`{ "a" : "<script>" }`),
	} {
		got, err := marshal(v)
		if err != nil {
			t.Fatalf("%T: %v", v, err)
		}
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%T:\n got %s\nwant %s", v, got, want)
		}
	}
}
