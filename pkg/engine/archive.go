package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"memsvc.dev/memsvc/pkg/archive"
	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// Export implements memory.Service. It reads a snapshot, so writers carry
// on while a large archive streams out and the archive is consistent.
// The stores list picks the curated stores and their order (exportStores).
// With include_raw_journal, raw entries go along, except sealed and secret
// ones unless include_sealed / include_secret ask for them too.
func (e *Engine) Export(ctx context.Context, req *memory.ExportRequest, w io.Writer) (*memory.ExportResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if f := strings.ToLower(strings.TrimSpace(req.Format)); f != "cma" && f != "jsonl" {
		return nil, memory.Invalid("format", "want cma or jsonl (an alias of cma), got %s", memory.Quote(req.Format))
	}
	var enc *archive.EncryptOptions
	switch {
	case req.Encrypt && (req.EncryptionKey == nil || *req.EncryptionKey == ""):
		return nil, memory.Invalid("encryption_key", "required when encrypt is true")
	case !req.Encrypt && req.EncryptionKey != nil && *req.EncryptionKey != "":
		return nil, memory.Invalid("encryption_key", "given but encrypt is false: set encrypt to true, or leave the key out for a plaintext archive")
	case req.Encrypt:
		enc = &archive.EncryptOptions{Passphrase: []byte(*req.EncryptionKey), KDF: e.opts.ArchiveKDF, KDFSlot: e.opts.KDFGate.Slot(ctx)}
	}
	stores, err := exportStores(req)
	if err != nil {
		return nil, err
	}

	// A consistent view: the store snapshot and the working store as of now.
	e.big.RLock()
	snap := e.db.NewSnapshot()
	e.mu.RLock()
	working := e.working.all()
	clock, lastTick := e.clock(), e.lastTick
	e.mu.RUnlock()
	e.big.RUnlock()
	defer snap.Close()

	includeRaw := func(r *memory.RawJournalRecord) bool {
		return (r.Visibility != memory.VisibilitySealed || req.IncludeSealed) && (r.SecrecyLevel != memory.SecrecySecret || req.IncludeSecret)
	}
	h := archive.Header{Version: archive.Version1, Timestamp: e.now()}
	if req.IncludeRawJournal {
		h.Version = archive.Version2
	}
	for _, st := range stores {
		if st == memory.StoreWorking {
			h.Curated += len(working)
		} else if err := snap.ScanRecords(store.DefaultNS, st, func(*memory.MemoryRecord) error { h.Curated++; return nil }); err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
	}
	if req.IncludeRawJournal {
		if err := snap.ScanRaw(store.DefaultNS, func(r *memory.RawJournalRecord) error {
			if includeRaw(r) {
				h.Raw++
			}
			return nil
		}); err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
	}

	aw, err := archive.NewWriter(w, h, archive.WriterOptions{Encryption: enc})
	if err != nil {
		return nil, exportFailed(err)
	}
	writeRec := func(rec *memory.MemoryRecord) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		presentAt(rec, clock, lastTick)
		return aw.WriteRecord(rec)
	}
	for _, st := range stores {
		if st == memory.StoreWorking {
			for _, rec := range working {
				if err := writeRec(rec); err != nil {
					return nil, exportFailed(err)
				}
			}
		} else if err := snap.ScanRecords(store.DefaultNS, st, writeRec); err != nil {
			return nil, exportFailed(err)
		}
	}
	if req.IncludeRawJournal {
		if err := snap.ScanRaw(store.DefaultNS, func(r *memory.RawJournalRecord) error {
			if !includeRaw(r) {
				return nil
			}
			return aw.WriteRaw(r)
		}); err != nil {
			return nil, exportFailed(err)
		}
	}
	sum, err := aw.Close()
	if err != nil {
		return nil, exportFailed(err)
	}
	resp := &memory.ExportResponse{
		ArchiveID:   e.ids.New().String(),
		SizeBytes:   uint64(sum.Size),
		RecordCount: uint32(sum.Header.Records()),
		Checksum:    sum.Checksum,
	}
	// A destination that must be made durable (a file renamed into
	// place) is, before the export is audited: the log never records an
	// export whose file did not appear.
	if c, ok := w.(ExportCommitter); ok {
		if err := c.Commit(); err != nil {
			return nil, exportFailed(err)
		}
	}
	if err := e.logOnly(ctx, audit.OpExport, map[string]any{
		"archive_id": resp.ArchiveID, "records": resp.RecordCount, "encrypted": req.Encrypt,
		"include_raw_journal": req.IncludeRawJournal, "checksum": resp.Checksum,
	}); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	return resp, nil
}

// ExportCommitter is an export destination with a final step, such as a
// temporary file that is synced and renamed into place. Export calls
// Commit after the archive's last byte and before it audits the export.
type ExportCommitter interface {
	Commit() error
}

// exportStores resolves an export's store filter into the curated stores
// to write, in the order their records go into the archive. Without a list
// (nil, as from an absent or null "stores") every store is exported in the
// canonical order. A list names the stores and their order; a store named
// twice is written once. An explicit empty list selects no curated store:
// with include_raw_journal that is a raw-journal-only archive, and without
// it the archive could hold nothing at all, which is refused rather than
// handing back an empty "backup" to a caller who most likely meant every
// store.
func exportStores(req *memory.ExportRequest) ([]memory.StoreType, error) {
	if req.Stores == nil {
		return memory.AllStores, nil
	}
	if len(req.Stores) == 0 && !req.IncludeRawJournal {
		return nil, memory.Invalid("stores", "an empty list exports no curated records and include_raw_journal is false, "+
			"so the archive would be empty: leave stores out (or null) to export every store")
	}
	out := make([]memory.StoreType, 0, len(req.Stores))
	for i, st := range req.Stores {
		if !st.Valid() {
			return nil, memory.Invalid(fmt.Sprintf("stores[%d]", i), "want one of %s", memory.StoreTypeNames())
		}
		if !slices.Contains(out, st) {
			out = append(out, st)
		}
	}
	return out, nil
}

// exportFailed keeps client errors (a cancelled context) and reports
// everything else as EXPORT_FAILED; the cause goes to the caller's log.
func exportFailed(err error) error {
	var me *memory.Error
	if errors.As(err, &me) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w: %w", &memory.Error{Code: memory.CodeExportFailed, Message: "the archive could not be written"}, err)
}

// Import implements memory.Service. The whole archive is read and checked
// (checksum, counts, every record) before anything is written, and it is
// written in one atomic commit: a bad archive changes nothing, and a
// replace that crashes half-way leaves the old data intact.
//
// Curated records that already exist are resolved by conflict_resolution.
// The raw journal is verbatim: an archived raw entry whose id is already
// stored is never applied, whatever the strategy or resolution (a replace
// starts from an empty journal, so only an id repeated within the archive
// can meet one). Such entries are counted in records_skipped, and those
// that differ from the stored entry in raw_conflicts.
func (e *Engine) Import(ctx context.Context, req *memory.ImportRequest, r io.Reader) (*memory.ImportResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if err := checkImport(req, r); err != nil {
		return nil, err
	}
	curated, raws, err := e.readArchive(ctx, req, r)
	if err != nil {
		return nil, err
	}

	e.big.Lock()
	defer e.big.Unlock()
	e.workMu.Lock()
	defer e.workMu.Unlock()
	im := e.newImport(req)
	defer im.t.close()
	if err := im.curated(curated); err != nil {
		return nil, err
	}
	if err := im.raws(raws); err != nil {
		return nil, err
	}
	if err := im.commit(latestDreamTick(curated)); err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	return &im.resp, nil
}

// checkImport validates an import request before the archive is read.
func checkImport(req *memory.ImportRequest, r io.Reader) error {
	switch {
	case !req.Strategy.Valid():
		return memory.Invalid("strategy", "want merge or replace")
	case !req.ConflictResolution.Valid():
		return memory.Invalid("conflict_resolution", "want keep_existing, keep_imported or keep_newer")
	case r == nil:
		return memory.Invalid("archive_data", "required: the archive to import")
	}
	return nil
}

// readArchive reads and checks the whole archive.
func (e *Engine) readArchive(ctx context.Context, req *memory.ImportRequest, r io.Reader) ([]*memory.MemoryRecord, []*memory.RawJournalRecord, error) {
	opts := archive.ReaderOptions{Now: e.now, MaxSize: e.opts.ImportMaxBytes, KDFSlot: e.opts.KDFGate.Slot(ctx)}
	if req.DecryptionKey != nil {
		opts.Passphrase = []byte(*req.DecryptionKey)
	}
	ar, err := archive.NewReader(r, opts)
	if err != nil {
		return nil, nil, e.importConflict(err)
	}
	var curated []*memory.MemoryRecord
	var raws []*memory.RawJournalRecord
	for {
		ent, err := ar.Next()
		if errors.Is(err, io.EOF) {
			return curated, raws, nil
		}
		if err != nil {
			return nil, nil, e.importConflict(err)
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		if ent.Record != nil {
			curated = append(curated, ent.Record)
		} else {
			raws = append(raws, ent.Raw)
		}
	}
}

// importer is one import on its way into a commit. Callers hold big and
// workMu.
type importer struct {
	e       *Engine
	req     *memory.ImportRequest
	t       *txn
	replace bool
	clock   float64
	now     time.Time
	resp    memory.ImportResponse
	// raw entries written by this import, to meet ids the archive repeats
	rawWritten map[memory.ID]*memory.RawJournalRecord
}

// newImport starts the change; a replace begins by deleting every record
// and raw entry and clearing both full-text indexes.
func (e *Engine) newImport(req *memory.ImportRequest) *importer {
	im := &importer{e: e, req: req, t: e.begin(), replace: req.Strategy == memory.ImportReplace,
		clock: e.clock(), now: e.now(), rawWritten: map[memory.ID]*memory.RawJournalRecord{}}
	if im.replace {
		im.t.b.DeleteAllRecords(store.DefaultNS)
		im.t.clear(e.idx.text)
		im.t.clear(e.idx.raw)
		im.t.replace = true
	}
	return im
}

// curated writes the archive's curated records that win their conflicts,
// settled on this engine's decay clock. Working-store records go through
// the working store's capacity like new ones.
func (im *importer) curated(recs []*memory.MemoryRecord) error {
	e := im.e
	var working []*memory.MemoryRecord
	for _, rec := range recs {
		fromStore, exists := memory.StoreType(0), false
		if !im.replace {
			e.mu.RLock()
			if ent, ok := e.st.entries[rec.ID]; ok {
				fromStore, exists = ent.store, true
			}
			e.mu.RUnlock()
		}
		if exists && !e.importWins(im.req.ConflictResolution, rec.ID, rec) {
			im.resp.RecordsSkipped++
			continue
		}
		settleImported(rec, im.clock, e.opts.Decay, im.now)
		if rec.Store == memory.StoreWorking {
			working = append(working, rec)
		} else if err := im.t.moveRecord(rec, fromStore); err != nil {
			return err
		}
		im.resp.RecordsImported++
	}
	for _, rec := range working {
		if err := im.t.putRecord(rec); err != nil {
			return err
		}
	}
	if len(working) > 0 {
		for _, p := range e.planWorkingFrom(im.replace, working) {
			if err := im.t.moveRecord(p, memory.StoreWorking); err != nil {
				return err
			}
		}
	}
	return nil
}

// raws writes the archive's raw entries whose ids are not stored yet. The
// raw journal is verbatim: an entry already stored, or already written by
// this import, is left as it is and counted.
func (im *importer) raws(recs []*memory.RawJournalRecord) error {
	for _, rec := range recs {
		old, err := im.storedRaw(rec.ID)
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		if old != nil {
			im.resp.RecordsSkipped++
			if !bytes.Equal(store.EncodeRaw(old), store.EncodeRaw(rec)) {
				im.resp.RawConflicts++
			}
			continue
		}
		if err := im.t.putNewRaw(rec); err != nil {
			return err
		}
		im.rawWritten[rec.ID] = rec
		im.resp.RecordsImported++
	}
	return nil
}

// storedRaw returns the raw entry with this id that the import would meet:
// one written earlier in this import, or (merging) one in the store. A
// stored entry that is quarantined (cannot be read) is met as an empty
// entry, so it stays as it is and counts as a conflict.
func (im *importer) storedRaw(id memory.ID) (*memory.RawJournalRecord, error) {
	if rec, ok := im.rawWritten[id]; ok {
		return rec, nil
	}
	if im.replace {
		return nil, nil
	}
	rec, err := im.e.db.GetRaw(store.DefaultNS, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, nil
	case errors.Is(err, store.ErrCorrupt):
		return &memory.RawJournalRecord{ID: id}, nil
	}
	return rec, err
}

// commit logs the import and commits it. Dream summaries bring the time of
// the tick that made them (lastDream, zero for none): it becomes the
// engine's last dream tick when later, or whatever it is after a replace.
func (im *importer) commit(lastDream time.Time) error {
	e, t := im.e, im.t
	var ids []memory.ID
	for _, rec := range t.puts {
		ids = append(ids, rec.ID)
	}
	for _, rec := range t.raws {
		ids = append(ids, rec.ID)
	}
	t.audit(audit.OpImport, ids, storesOf(t.puts), map[string]any{
		"archive_id": im.req.ArchiveID, "strategy": im.req.Strategy.String(),
		"conflict_resolution": im.req.ConflictResolution.String(), "records_imported": im.resp.RecordsImported,
		"records_skipped": im.resp.RecordsSkipped, "raw_conflicts": im.resp.RawConflicts,
	})
	advance := !lastDream.IsZero() && (im.replace || lastDream.After(e.lastDreamAt()))
	if advance {
		t.b.PutMeta(lastDreamKey, uint64Bytes(uint64(lastDream.UnixNano())))
	}
	if err := t.commit(); err != nil {
		return err
	}
	if advance || im.replace {
		e.mu.Lock()
		e.lastDream = lastDream
		e.mu.Unlock()
	}
	return nil
}

// latestDreamTick is the time of the latest dream tick that made any of
// recs (zero when none is a dream output).
func latestDreamTick(recs []*memory.MemoryRecord) time.Time {
	var latest time.Time
	for _, rec := range recs {
		if at, ok := dreamTickOf(rec); ok && at.After(latest) {
			latest = at
		}
	}
	return latest
}

func (e *Engine) lastDreamAt() time.Time {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.lastDream
}

// dreamTickOf reads metadata._origin.dream_tick_at of a dream output.
func dreamTickOf(rec *memory.MemoryRecord) (time.Time, bool) {
	if dreamKindOf(rec) == notDreamt {
		return time.Time{}, false
	}
	var md struct {
		Origin struct {
			At time.Time `json:"dream_tick_at"`
		} `json:"_origin"`
	}
	if json.Unmarshal(rec.Metadata, &md) != nil || md.Origin.At.IsZero() {
		return time.Time{}, false
	}
	return md.Origin.At.UTC(), true
}

// importWins decides a conflict for a curated record that already exists.
func (e *Engine) importWins(cr memory.ConflictResolution, id memory.ID, imported *memory.MemoryRecord) bool {
	switch cr {
	case memory.KeepExisting:
		return false
	case memory.KeepImported:
		return true
	}
	existing, err := e.get(id)
	if err != nil {
		return true
	}
	return imported.UpdatedAt.After(existing.UpdatedAt)
}

// settleImported maps an archived record onto this engine's decay clock:
// the archived score becomes the record's age, missing or invalid decay
// parameters take the store's defaults, and a last decay tick later than
// now (an archive from a machine whose clock ran ahead) becomes now.
func settleImported(rec *memory.MemoryRecord, clock float64, cfg DecayConfig, now time.Time) {
	f := &rec.Fidelity
	if f.LastDecayTick.After(now) {
		f.LastDecayTick = now
	}
	if !(f.Stability > 0) || math.IsInf(f.Stability, 0) {
		f.Stability = cfg.StabilityDays[rec.Store]
	}
	if !(f.EmotionalAnchor >= 1) || math.IsInf(f.EmotionalAnchor, 0) {
		f.EmotionalAnchor = anchor(rec.Emotion)
	}
	if !(f.DecayRate > 0) || math.IsInf(f.DecayRate, 0) {
		f.DecayRate = cfg.DecayRate
	}
	age := 0.0
	if f.Score < 1 {
		age = ageForScore(math.Max(f.Score, 1e-9), f.Stability, f.EmotionalAnchor, f.DecayRate)
	}
	f.ClockBase = clock - age*secondsPerDay
}

// importConflict reports an archive problem as IMPORT_CONFLICT with a
// message that says what is wrong with it.
func (e *Engine) importConflict(err error) error {
	var me *memory.Error
	if errors.As(err, &me) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err // a cancelled import (waiting for a key derivation) is not the archive's fault
	}
	msg := "archive rejected: " + err.Error()
	if errors.Is(err, archive.ErrSizeLimit) {
		msg += "; the server's max_import_bytes setting raises the limit"
	}
	return &memory.Error{Code: memory.CodeImportConflict, Message: msg}
}
