package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// TestEncodeUpdateMeta: encode.update with meta replaces the meta-memory
// with its normalised form under the trigger "encode.update" (legacy input
// becomes provided and loses the canned legacy rationale, schema version 0
// becomes 1, trigger and capture time are filled in), leaves the rest of
// the record alone apart from version and updated_at, re-indexes the
// meta-memory text, and persists all of it across a restart. A trigger and
// capture time the caller gives are kept. Both index placements are
// covered, since a restart rebuilds the in-memory index from the records.
func TestEncodeUpdateMeta(t *testing.T) {
	for _, persist := range []bool{true, false} {
		t.Run(fmt.Sprintf("persist=%v", persist), func(t *testing.T) {
			h := newHarness(t, Options{PersistIndexes: persist, SimilarLinks: -1})
			ctx := context.Background()
			resp, err := h.e.EncodeStore(ctx, &memory.EncodeStoreRequest{
				Content: memory.TextContent("field notes from the coast"),
				Meta:    &memory.MetaMemory{SchemaVersion: 1, CaptureStatus: memory.CaptureProvided, Intent: ptr("zebra crossing survey")},
			})
			if err != nil {
				t.Fatal(err)
			}
			id := resp.RecordID
			before := h.record(id)

			h.clock.Advance(time.Minute)
			now := h.clock.Now()
			in := memory.MetaMemory{
				CaptureStatus: memory.CaptureLegacy,
				Rationale:     ptr(memory.LegacyRationale),
				Intent:        ptr("walrus migration plan"),
				Tags:          []string{"ops"},
			}
			if err := h.e.EncodeUpdate(ctx, &memory.EncodeUpdateRequest{RecordID: id, Meta: &in}); err != nil {
				t.Fatal(err)
			}
			rec := h.record(id)
			m := rec.Meta
			if m.SchemaVersion != 1 || m.CaptureStatus != memory.CaptureProvided || m.Rationale != nil ||
				m.Trigger == nil || *m.Trigger != memory.TriggerEncodeUpdate || m.CapturedAt == nil || !m.CapturedAt.Equal(now) ||
				m.Intent == nil || *m.Intent != "walrus migration plan" || !slices.Equal(m.Tags, []string{"ops"}) {
				t.Fatalf("updated meta not normalised: %s", jsonText(t, m))
			}
			// Field by field, it is exactly what NormalizeMeta makes of the
			// input under the update trigger.
			if got, want := jsonText(t, m), jsonText(t, memory.NormalizeMeta(&in, memory.TriggerEncodeUpdate, now)); got != want {
				t.Fatalf("updated meta\n got %s\nwant %s", got, want)
			}
			if rec.Version != before.Version+1 || !rec.UpdatedAt.Equal(now) || !rec.CreatedAt.Equal(before.CreatedAt) {
				t.Fatalf("version %d (was %d), updated_at %v, created_at %v", rec.Version, before.Version, rec.UpdatedAt, rec.CreatedAt)
			}
			for _, part := range []struct {
				name          string
				before, after any
			}{
				{"content", before.Content, rec.Content},
				{"store", before.Store, rec.Store},
				{"emotion", before.Emotion, rec.Emotion},
				{"metadata", before.Metadata, rec.Metadata},
				{"fidelity", before.Fidelity, rec.Fidelity},
				{"associations", before.Associations, rec.Associations},
			} {
				if b, a := jsonText(t, part.before), jsonText(t, part.after); b != a {
					t.Errorf("a meta update changed %s: %s, then %s", part.name, b, a)
				}
			}
			findsOnly := func(when, query string, want ...memory.ID) {
				t.Helper()
				resp, err := h.e.RecallQuery(ctx, ptr(textQuery(query)))
				if err != nil {
					t.Fatal(err)
				}
				var got []memory.ID
				for _, mem := range resp.Memories {
					got = append(got, mem.Record.ID)
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s: recall %q found %v, want %v", when, query, got, want)
				}
			}
			findsOnly("after the update", "walrus", id)
			findsOnly("after the update", "zebra")

			updated := jsonText(t, rec)
			h.reopen()
			if again := jsonText(t, h.record(id)); again != updated {
				t.Fatalf("record changed across a restart:\n%s\n%s", updated, again)
			}
			findsOnly("after a restart", "walrus", id)
			findsOnly("after a restart", "zebra")

			// A caller's own trigger and capture time are kept.
			h.clock.Advance(time.Minute)
			captured := time.Date(2026, 2, 27, 8, 30, 0, 0, time.UTC)
			own := memory.MetaMemory{SchemaVersion: 1, CaptureStatus: memory.CaptureProvided, Intent: ptr("review"), Trigger: ptr("agent.review"), CapturedAt: &captured}
			if err := h.e.EncodeUpdate(ctx, &memory.EncodeUpdateRequest{RecordID: id, Meta: &own}); err != nil {
				t.Fatal(err)
			}
			h.reopen()
			m = h.record(id).Meta
			if m.Trigger == nil || *m.Trigger != "agent.review" || m.CapturedAt == nil || !m.CapturedAt.Equal(captured) {
				t.Fatalf("caller's trigger and capture time not kept: %s", jsonText(t, m))
			}
			if v := h.record(id).Version; v != before.Version+2 {
				t.Fatalf("version %d after two updates of version %d", v, before.Version)
			}
		})
	}
}

// jsonText is v as JSON, for comparing and printing values.
func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
