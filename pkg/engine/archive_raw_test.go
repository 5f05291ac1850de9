package engine

import (
	"bytes"
	"context"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/archive"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// rawArchive writes a plaintext archive of raw entries only.
func rawArchive(t *testing.T, at time.Time, raws ...*memory.RawJournalRecord) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := archive.NewWriter(&buf, archive.Header{Version: archive.Version2, Timestamp: at, Raw: len(raws)}, archive.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range raws {
		if err := w.WriteRaw(r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestImportNeverChangesRawEntries: an archived raw entry that shares its
// id with a stored one, with other text and a later updated_at, never
// replaces it, under every conflict resolution; the answer counts it as
// skipped and in conflict, the new entry beside it is imported, and the
// stored entry's text stays the only one the raw index finds. An entry
// repeated within an archive is written once, also by a replace.
func TestImportNeverChangesRawEntries(t *testing.T) {
	ctx := context.Background()
	id := memory.MustParseID("0196a9e2-5c1d-7f00-8a00-0000000000aa")
	fresh := memory.MustParseID("0196a9e2-5c1d-7f00-8a00-0000000000bb")
	stored := func(t *testing.T) (*harness, []byte) {
		h := newHarness(t, Options{SimilarLinks: -1})
		r := rawReq("s1", "the verbatim original words")
		r.RecordID = &id
		if _, err := h.e.EncodeStoreRaw(ctx, &r); err != nil {
			t.Fatal(err)
		}
		old, err := h.db.GetRaw(store.DefaultNS, id)
		if err != nil {
			t.Fatal(err)
		}
		return h, store.EncodeRaw(old)
	}
	_, original := stored(t)
	base, err := store.DecodeRaw(original)
	if err != nil {
		t.Fatal(err)
	}
	later := base.UpdatedAt.Add(24 * time.Hour)
	rival := *base
	rival.Content = memory.TextContent("rewritten replacement words")
	rival.UpdatedAt = later
	newcomer := *base
	newcomer.ID = fresh
	newcomer.Content = memory.TextContent("a newcomer entry")
	data := rawArchive(t, later, &rival, &newcomer)

	for _, cr := range []memory.ConflictResolution{memory.KeepExisting, memory.KeepNewer, memory.KeepImported} {
		t.Run(cr.String(), func(t *testing.T) {
			h, before := stored(t)
			resp, err := importBytes(t, h, data, func(r *memory.ImportRequest) { r.ConflictResolution = cr })
			if err != nil {
				t.Fatal(err)
			}
			if resp.RecordsImported != 1 || resp.RecordsSkipped != 1 || resp.RawConflicts != 1 {
				t.Errorf("answer %+v, want 1 imported, 1 skipped, 1 conflict", resp)
			}
			after, err := h.db.GetRaw(store.DefaultNS, id)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(store.EncodeRaw(after), before) {
				t.Errorf("stored raw entry changed: %q updated %v", after.Content.Blocks[0].Data, after.UpdatedAt)
			}
			if _, err := h.db.GetRaw(store.DefaultNS, fresh); err != nil {
				t.Errorf("the new entry was not imported: %v", err)
			}
			for query, want := range map[string]uint32{"rewritten": 0, "verbatim": 1, "newcomer": 1} {
				res, err := h.e.RecallRaw(ctx, &memory.RecallRawQueryRequest{Query: &query, Limit: 10})
				if err != nil || res.TotalCandidates != want {
					t.Errorf("raw search %q: %+v %v, want %d", query, res, err, want)
				}
			}
			if s := h.stats(); s.RawJournalRecords != 2 {
				t.Errorf("raw_journal_records %d, want 2", s.RawJournalRecords)
			}
		})
	}

	t.Run("repeated in the archive", func(t *testing.T) {
		for _, strategy := range []memory.ImportStrategy{memory.ImportMerge, memory.ImportReplace} {
			h := newHarness(t, Options{SimilarLinks: -1})
			resp, err := importBytes(t, h, rawArchive(t, later, base, &rival, base), func(r *memory.ImportRequest) {
				r.Strategy, r.ConflictResolution = strategy, memory.KeepImported
			})
			if err != nil {
				t.Fatal(err)
			}
			if resp.RecordsImported != 1 || resp.RecordsSkipped != 2 || resp.RawConflicts != 1 {
				t.Errorf("%s: answer %+v, want 1 imported, 2 skipped, 1 conflict", strategy, resp)
			}
			got, err := h.db.GetRaw(store.DefaultNS, id)
			if err != nil {
				t.Fatal(err)
			}
			if text, _ := got.Content.Text(); text != "the verbatim original words" || !got.UpdatedAt.Equal(base.UpdatedAt) {
				t.Errorf("%s: kept %q updated %v, want the archive's first copy", strategy, text, got.UpdatedAt)
			}
		}
	})
}
