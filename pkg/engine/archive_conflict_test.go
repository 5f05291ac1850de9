package engine

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// TestImportConflictResolution merges an archive into a copy of the same
// data that has changed since both sides shared a baseline: one record was
// last changed locally, one in the archive, one on neither side, and two
// sessions of raw entries were dreamt on one side only. For curated
// records keep_existing keeps every local version, keep_newer takes the
// archive's only where it is strictly newer, keep_imported always takes
// it; records that exist only in the archive arrive under every
// resolution. Raw entries are verbatim: every stored one stays as it is
// under every resolution, and the answer counts what it left out and
// which of those differ.
func TestImportConflictResolution(t *testing.T) {
	src := newHarness(t, Options{SimilarLinks: -1})
	ctx := context.Background()
	loadTranscript(t, src, "ours")   // dreamt later by the importer only
	loadTranscript(t, src, "theirs") // dreamt later on the archive side only
	localNewer := src.store("changed on both sides, last by the importer", memory.StoreSemantic)
	archiveNewer := src.store("changed on both sides, last on the archive side", memory.StoreEpisodic)
	unchanged := src.store("changed on neither side", memory.StoreProcedural)
	everything := memory.ExportRequest{Format: "cma", IncludeRawJournal: true, IncludeSealed: true, IncludeSecret: true}
	baseline, _ := exportBytes(t, src, everything)
	t0 := src.clock.Now()

	update := func(h *harness, id memory.ID, side string, at time.Time) {
		t.Helper()
		h.clock.Set(at)
		if err := h.e.EncodeUpdate(ctx, &memory.EncodeUpdateRequest{RecordID: id, Metadata: memory.JSON(`{"side":"` + side + `"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	dream := func(h *harness, session string, at time.Time) {
		t.Helper()
		h.clock.Set(at)
		req := dreamReq()
		req.SessionID = &session
		if resp, err := h.e.DreamTick(ctx, req); err != nil || resp.RawRecordsProcessed == 0 {
			t.Fatalf("dream %s: %+v %v", session, resp, err)
		}
	}

	// The archive side changes after the baseline.
	update(src, localNewer, "archive", t0.Add(1*time.Hour))
	update(src, archiveNewer, "archive", t0.Add(3*time.Hour))
	dream(src, "theirs", t0.Add(3*time.Hour))
	added := src.store("exists only in the archive", memory.StoreEmotional)
	changed, _ := exportBytes(t, src, everything)
	archived, archivedRawEntries := archiveRecords(t, changed)
	archivedRaw := rawRecords(t, src)

	// local returns a fresh importer holding the baseline plus its own
	// changes, made at t0+2h: after the archive's change to localNewer,
	// before its change to archiveNewer.
	local := func(t *testing.T) *harness {
		dst := newHarness(t, Options{SimilarLinks: -1})
		if _, err := importBytes(t, dst, baseline, nil); err != nil {
			t.Fatal(err)
		}
		update(dst, localNewer, "local", t0.Add(2*time.Hour))
		update(dst, archiveNewer, "local", t0.Add(2*time.Hour))
		dream(dst, "ours", t0.Add(2*time.Hour))
		return dst
	}

	// Which side each contested raw entry came from is told by the
	// summaries it points to: each side's dream made its own.
	dreamt := func(r *memory.RawJournalRecord) bool { return len(r.DerivedMemoryIDs) > 0 }
	var oursRaw, theirsRaw []memory.ID
	for id, r := range archivedRaw {
		switch {
		case r.SessionID == "theirs" && dreamt(r):
			theirsRaw = append(theirsRaw, id)
		case r.SessionID == "ours":
			oursRaw = append(oursRaw, id)
		}
	}
	// Archive entries the importer lacks: the new record and the archive
	// side's dream summaries.
	var onlyInArchive []memory.ID
	probe := local(t)
	for _, rec := range archived {
		if _, err := probe.e.Record(ctx, &memory.IntrospectRecordRequest{RecordID: rec.ID}); err != nil {
			onlyInArchive = append(onlyInArchive, rec.ID)
		}
	}
	if len(theirsRaw) == 0 || len(oursRaw) == 0 || len(onlyInArchive) < 2 || !slices.Contains(onlyInArchive, added) {
		t.Fatalf("fixture: %d raw entries dreamt in the archive, %d of the importer's session, %d records only in the archive",
			len(theirsRaw), len(oursRaw), len(onlyInArchive))
	}

	tests := []struct {
		resolution memory.ConflictResolution
		// The side whose version each contested record ends up with.
		localNewer, archiveNewer, oursRaw, theirsRaw string
		imported                                     int
	}{
		{memory.KeepExisting, "local", "local", "local", "local",
			len(onlyInArchive)},
		{memory.KeepNewer, "local", "archive", "local", "local",
			len(onlyInArchive) + 1},
		{memory.KeepImported, "archive", "archive", "local", "local",
			len(archived)},
	}
	for _, tt := range tests {
		t.Run(tt.resolution.String(), func(t *testing.T) {
			dst := local(t)
			before := rawRecords(t, dst)
			unchangedBefore := dst.record(unchanged)
			resp, err := importBytes(t, dst, changed, func(r *memory.ImportRequest) { r.ConflictResolution = tt.resolution })
			if err != nil {
				t.Fatal(err)
			}
			if int(resp.RecordsImported) != tt.imported {
				t.Errorf("records_imported %d, want %d", resp.RecordsImported, tt.imported)
			}
			if want := len(archived) + len(archivedRaw) - tt.imported; int(resp.RecordsSkipped) != want {
				t.Errorf("records_skipped %d, want %d", resp.RecordsSkipped, want)
			}
			differ := 0
			for _, r := range archivedRawEntries {
				if !bytes.Equal(store.EncodeRaw(r), store.EncodeRaw(before[r.ID])) {
					differ++
				}
			}
			if differ < len(theirsRaw) || int(resp.RawConflicts) != differ {
				t.Errorf("raw_conflicts %d, want %d (at least the %d entries dreamt in the archive)", resp.RawConflicts, differ, len(theirsRaw))
			}
			for id, r := range rawRecords(t, dst) {
				if !bytes.Equal(store.EncodeRaw(r), store.EncodeRaw(before[id])) {
					t.Errorf("raw entry %s changed under import", id)
				}
			}
			side := func(id memory.ID) string {
				switch md := string(dst.record(id).Metadata); md {
				case `{"side":"local"}`:
					return "local"
				case `{"side":"archive"}`:
					return "archive"
				default:
					return "neither: " + md
				}
			}
			if got := side(localNewer); got != tt.localNewer {
				t.Errorf("record changed last by the importer: %s version kept, want %s", got, tt.localNewer)
			}
			if got := side(archiveNewer); got != tt.archiveNewer {
				t.Errorf("record changed last in the archive: %s version kept, want %s", got, tt.archiveNewer)
			}
			if got := dst.record(unchanged); got.Version != unchangedBefore.Version || !bytes.Equal(got.Metadata, unchangedBefore.Metadata) {
				t.Errorf("unchanged record became %+v", got)
			}
			for _, id := range onlyInArchive {
				dst.record(id) // fails the test when missing
			}

			after := rawRecords(t, dst)
			rawSide := func(id memory.ID) string {
				derived := func(r *memory.RawJournalRecord) string { return fmt.Sprint(r.DerivedMemoryIDs) }
				switch got := derived(after[id]); got {
				case derived(before[id]):
					return "local"
				case derived(archivedRaw[id]):
					return "archive"
				default:
					return "neither: " + got
				}
			}
			for _, id := range oursRaw {
				// Dreamt by the importer only; skip the ones its dream left out.
				if !dreamt(before[id]) {
					continue
				}
				if got := rawSide(id); got != tt.oursRaw {
					t.Errorf("raw entry dreamt by the importer (%s): %s version kept, want %s", id, got, tt.oursRaw)
				}
			}
			for _, id := range theirsRaw {
				if got := rawSide(id); got != tt.theirsRaw {
					t.Errorf("raw entry dreamt in the archive (%s): %s version kept, want %s", id, got, tt.theirsRaw)
				}
			}
		})
	}
}
