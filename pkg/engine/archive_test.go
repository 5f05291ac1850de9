package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/archive"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

var testKDF = archive.KDFParams{MemoryKiB: 64, Iterations: 1, Parallelism: 1}

func exportBytes(t *testing.T, h *harness, req memory.ExportRequest) ([]byte, *memory.ExportResponse) {
	t.Helper()
	var buf bytes.Buffer
	resp, err := h.e.Export(context.Background(), &req, &buf)
	if err != nil {
		t.Fatal(err)
	}
	if int(resp.SizeBytes) != buf.Len() {
		t.Fatalf("size_bytes %d, wrote %d", resp.SizeBytes, buf.Len())
	}
	return buf.Bytes(), resp
}

func importBytes(t *testing.T, h *harness, data []byte, mod func(*memory.ImportRequest)) (*memory.ImportResponse, error) {
	t.Helper()
	req := memory.DefaultImportRequest()
	req.ArchiveID = "test"
	if mod != nil {
		mod(&req)
	}
	return h.e.Import(context.Background(), &req, bytes.NewReader(data))
}

// TestExportImportRoundTrip exports a populated engine and imports it into
// an empty one: every record comes back equal, decay state included.
func TestExportImportRoundTrip(t *testing.T) {
	src := newHarness(t, Options{ArchiveKDF: testKDF})
	ctx := context.Background()
	loadTranscript(t, src, "s1")
	if _, err := src.e.DreamTick(ctx, dreamReq()); err != nil {
		t.Fatal(err)
	}
	vecRecord(src, "with a vector", []float32{0.1, 0.2, 0.3})
	src.store("working note", memory.StoreWorking)
	tick(t, src, 3*day)
	if err := src.e.syncLinks(ctx); err != nil {
		t.Fatal(err)
	}

	plain, resp := exportBytes(t, src, memory.ExportRequest{Format: "CMA ", IncludeRawJournal: true})
	// 3 summaries + 3 semantic nodes + vector + working; 8 raw (the
	// secret entry stays out).
	if resp.RecordCount != 8+9 || len(resp.Checksum) != 64 {
		t.Fatalf("export %+v", resp)
	}
	if n := secretEntries(t, plain); n != 0 {
		t.Fatalf("%d secret raw entries exported without include_secret", n)
	}
	all, _ := exportBytes(t, src, memory.ExportRequest{Format: "jsonl", IncludeRawJournal: true, IncludeSecret: true, IncludeSealed: true})
	if n := secretEntries(t, all); n != 1 {
		t.Fatalf("include_secret exported %d secret entries, want 1", n)
	}

	dst := newHarness(t, Options{})
	got, err := importBytes(t, dst, all, nil)
	if err != nil || got.RecordsImported != 8+10 {
		t.Fatalf("import %+v %v", got, err)
	}
	// Same records, same derived scores (dst's clock started at zero).
	check := func(id memory.ID) {
		a, b := src.record(id), dst.record(id)
		if math.Abs(a.Fidelity.Score-b.Fidelity.Score) > 1e-9 {
			t.Fatalf("score of %s: %v became %v", id, a.Fidelity.Score, b.Fidelity.Score)
		}
		a.Fidelity, b.Fidelity = memory.FidelityState{}, memory.FidelityState{}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if !bytes.Equal(ja, jb) {
			t.Fatalf("record changed in the round trip:\n%s\n%s", ja, jb)
		}
	}
	for _, st := range memory.PersistentStores() {
		if err := src.db.ScanRecords(store.DefaultNS, st, func(rec *memory.MemoryRecord) error { check(rec.ID); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	ss, ds := src.stats(), dst.stats()
	if ss.TotalRecords != ds.TotalRecords || ss.RawJournalRecords != ds.RawJournalRecords || !ds.LastDreamTickAt.Equal(*ss.LastDreamTickAt) || ss.TotalAssociations != ds.TotalAssociations ||
		math.Abs(ss.AvgFidelity-ds.AvgFidelity) > 1e-9 {
		t.Fatalf("stats differ:\n%+v\n%+v", ss, ds)
	}
	// Imported records are searchable.
	r, err := dst.e.RecallRaw(ctx, &memory.RecallRawQueryRequest{Query: ptr("flaky"), Limit: 10})
	if err != nil || r.TotalCandidates == 0 {
		t.Fatalf("raw search after import: %+v %v", r, err)
	}

	// Merging the same archive again: keep_newer changes nothing, and the
	// answer says all 18 entries were left out, none of them in conflict.
	again, err := importBytes(t, dst, all, nil)
	if err != nil || again.RecordsImported != 0 || again.RecordsSkipped != 18 || again.RawConflicts != 0 {
		t.Fatalf("re-import %+v %v", again, err)
	}
	// keep_imported overwrites the 8 curated records; the 10 raw entries
	// are verbatim and stay.
	again, err = importBytes(t, dst, all, func(r *memory.ImportRequest) { r.ConflictResolution = memory.KeepImported })
	if err != nil || again.RecordsImported != 8 || again.RecordsSkipped != 10 || again.RawConflicts != 0 {
		t.Fatalf("keep_imported %+v %v", again, err)
	}
}

func TestEncryptedExport(t *testing.T) {
	h := newHarness(t, Options{ArchiveKDF: testKDF})
	id := h.store("a private thought about Zanzibar", memory.StoreSemantic)
	key := "correct horse battery staple"
	enc, _ := exportBytes(t, h, memory.ExportRequest{Format: "cma", Encrypt: true, EncryptionKey: &key})
	if bytes.Contains(enc, []byte("Zanzibar")) || archive.Detect(enc) != archive.FormatEncrypted {
		t.Fatal("encrypted export is readable or not detected as encrypted")
	}
	dst := newHarness(t, Options{})
	_, err := importBytes(t, dst, enc, nil)
	wantCode(t, err, memory.CodeImportConflict, "archive rejected")
	_, err = importBytes(t, dst, enc, func(r *memory.ImportRequest) { r.DecryptionKey = ptr("wrong") })
	wantCode(t, err, memory.CodeImportConflict, "archive rejected")
	if resp, err := importBytes(t, dst, enc, func(r *memory.ImportRequest) { r.DecryptionKey = &key }); err != nil || resp.RecordsImported != 1 {
		t.Fatalf("decrypting import %+v %v", resp, err)
	}
	dst.record(id)

	ctx := context.Background()
	_, err = h.e.Export(ctx, &memory.ExportRequest{Format: "cma", Encrypt: true}, &bytes.Buffer{})
	wantCode(t, err, memory.CodeValidation, "encryption_key")
	_, err = h.e.Export(ctx, &memory.ExportRequest{Format: "cma", EncryptionKey: &key}, &bytes.Buffer{})
	wantCode(t, err, memory.CodeValidation, "encrypt is false")
	_, err = h.e.Export(ctx, &memory.ExportRequest{Format: "zip"}, &bytes.Buffer{})
	wantCode(t, err, memory.CodeValidation, "cma or jsonl")
}

// TestImportBadArchiveWritesNothing: a corrupt archive is refused and the
// existing data is untouched, even with the replace strategy.
func TestImportBadArchiveWritesNothing(t *testing.T) {
	src := newHarness(t, Options{SimilarLinks: -1})
	for i := 0; i < 5; i++ {
		src.store("exported record", memory.StoreEpisodic)
	}
	good, _ := exportBytes(t, src, memory.ExportRequest{Format: "cma"})
	dst := newHarness(t, Options{})
	keep := dst.store("the only record that must survive", memory.StoreSemantic)
	// Change one record's access count inside an entry line: the checksum
	// no longer matches.
	corrupt := bytes.Replace(good, []byte(`"access_count":0,`), []byte(`"access_count":7,`), 1)
	if bytes.Equal(corrupt, good) {
		t.Fatal("test corruption did not apply")
	}
	truncated := good[:len(good)-80]
	for name, data := range map[string][]byte{"corrupt": corrupt, "truncated": truncated, "garbage": []byte("not an archive")} {
		_, err := importBytes(t, dst, data, func(r *memory.ImportRequest) { r.Strategy = memory.ImportReplace })
		if memory.CodeOf(err) != memory.CodeImportConflict {
			t.Fatalf("%s archive: %v", name, err)
		}
		if s := dst.stats(); s.TotalRecords != 1 {
			t.Fatalf("%s archive changed the data: %d records", name, s.TotalRecords)
		}
	}
	// A good replace swaps everything, atomically.
	resp, err := importBytes(t, dst, good, func(r *memory.ImportRequest) { r.Strategy = memory.ImportReplace })
	if err != nil || resp.RecordsImported != 5 {
		t.Fatalf("replace %+v %v", resp, err)
	}
	if _, err := dst.e.Record(context.Background(), &memory.IntrospectRecordRequest{RecordID: keep}); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("replace kept an old record: %v", err)
	}
	dst.reopen()
	if s := dst.stats(); s.TotalRecords != 5 || s.RecordsByStore[memory.StoreEpisodic] != 5 {
		t.Fatalf("after replace and reopen %+v", s.RecordsByStore)
	}
	r, err := dst.e.RecallQuery(context.Background(), ptr(textQuery("exported")))
	if err != nil || r.TotalCandidates != 5 {
		t.Fatalf("search after replace: %+v %v", r, err)
	}
	if r, _ := dst.e.RecallQuery(context.Background(), ptr(textQuery("survive"))); r.TotalCandidates != 0 {
		t.Fatal("the replaced record is still indexed")
	}
}

// secretEntries counts the raw entries with secrecy secret in an archive.
func secretEntries(t *testing.T, data []byte) int {
	t.Helper()
	entries, _ := readArchive(t, data)
	n := 0
	for _, ent := range entries {
		if ent.Raw != nil && ent.Raw.SecrecyLevel == memory.SecrecySecret {
			n++
		}
	}
	return n
}

// TestImportSizeLimit: an archive over Options.ImportMaxBytes is refused
// with a message that says how to raise the limit, and writes nothing; a
// limit that fits lets the same archive in.
func TestImportSizeLimit(t *testing.T) {
	src := newHarness(t, Options{SimilarLinks: -1})
	for i := range 20 {
		src.store(fmt.Sprint("a record that makes the archive longer, number ", i), memory.StoreEpisodic)
	}
	data, _ := exportBytes(t, src, memory.ExportRequest{Format: "cma"})
	small := newHarness(t, Options{ImportMaxBytes: int64(len(data)) / 2})
	_, err := importBytes(t, small, data, nil)
	if memory.CodeOf(err) != memory.CodeImportConflict || !strings.Contains(err.Error(), "max_import_bytes") {
		t.Fatalf("oversized archive: %v", err)
	}
	if s := small.stats(); s.TotalRecords != 0 {
		t.Fatalf("a refused archive wrote %d records", s.TotalRecords)
	}
	fits := newHarness(t, Options{ImportMaxBytes: int64(len(data))})
	if resp, err := importBytes(t, fits, data, nil); err != nil || resp.RecordsImported != 20 {
		t.Fatalf("archive at the limit: %+v %v", resp, err)
	}
}
