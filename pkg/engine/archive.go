package engine

import (
	"bytes"
	"cmp"
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
//
// The namespaces list picks the namespaces (the caller's by default; see
// memory.ExportRequest). Their curated records come first, namespace by
// namespace in name order, then their raw entries in the same order; every
// entry of a namespace other than the default one names it, which takes a
// 2.0 bundle even without the raw journal.
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
	names, err := exportNamespaces(ctx, req)
	if err != nil {
		return nil, err
	}

	// A consistent view: the store snapshot and the working stores as of
	// now.
	e.big.RLock()
	if err := e.flushRecalls(); err != nil {
		// An export is a read and goes on when the disk is full: the
		// archive then lacks the access counts still pending.
		e.log.Warn("export without the recall effects not yet written", "err", err)
	}
	snap := e.db.NewSnapshot()
	views := e.exportViews(names)
	e.big.RUnlock()
	defer snap.Close()

	includeRaw := func(r *memory.RawJournalRecord) bool {
		return (r.Visibility != memory.VisibilitySealed || req.IncludeSealed) && (r.SecrecyLevel != memory.SecrecySecret || req.IncludeSecret)
	}
	h := archive.Header{Version: archive.Version1, Timestamp: e.now()}
	for _, v := range views {
		if req.IncludeRawJournal || v.ns.id != store.DefaultNS {
			h.Version = archive.Version2
		}
		for _, st := range stores {
			if st == memory.StoreWorking {
				h.Curated += len(v.working)
			} else if err := snap.ScanRecords(v.ns.id, st, func(*memory.MemoryRecord) error { h.Curated++; return nil }); err != nil {
				return nil, fmt.Errorf("export: %w", err)
			}
		}
		if req.IncludeRawJournal {
			if err := snap.ScanRaw(v.ns.id, func(r *memory.RawJournalRecord) error {
				if includeRaw(r) {
					h.Raw++
				}
				return nil
			}); err != nil {
				return nil, fmt.Errorf("export: %w", err)
			}
		}
	}

	aw, err := archive.NewWriter(w, h, archive.WriterOptions{Encryption: enc})
	if err != nil {
		return nil, exportFailed(err)
	}
	for _, v := range views {
		writeRec := func(rec *memory.MemoryRecord) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			presentAt(rec, v.clock, v.lastTick)
			return aw.WriteRecordIn(v.ns.name, rec)
		}
		for _, st := range stores {
			if st == memory.StoreWorking {
				for _, rec := range v.working {
					if err := writeRec(rec); err != nil {
						return nil, exportFailed(err)
					}
				}
			} else if err := snap.ScanRecords(v.ns.id, st, writeRec); err != nil {
				return nil, exportFailed(err)
			}
		}
	}
	if req.IncludeRawJournal {
		for _, v := range views {
			if err := snap.ScanRaw(v.ns.id, func(r *memory.RawJournalRecord) error {
				if !includeRaw(r) {
					return nil
				}
				return aw.WriteRawIn(v.ns.name, r)
			}); err != nil {
				return nil, exportFailed(err)
			}
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
	summary := map[string]any{
		"archive_id": resp.ArchiveID, "records": resp.RecordCount, "encrypted": req.Encrypt,
		"include_raw_journal": req.IncludeRawJournal, "checksum": resp.Checksum,
	}
	if len(req.Namespaces) == 0 {
		summary["namespace"] = memory.NamespaceFrom(ctx)
	} else {
		summary["namespaces"] = req.Namespaces
	}
	if err := e.logOnly(ctx, audit.OpExport, summary); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	return resp, nil
}

// exportNamespaces resolves an export's namespace list: the names to
// export, in name order, or nil for every namespace.
func exportNamespaces(ctx context.Context, req *memory.ExportRequest) ([]string, error) {
	if len(req.Namespaces) == 0 {
		return []string{memory.NamespaceFrom(ctx)}, nil
	}
	if slices.Contains(req.Namespaces, memory.AllNamespaces) {
		if len(req.Namespaces) > 1 {
			return nil, memory.Invalid("namespaces", "%s stands for every namespace and comes alone", memory.Quote(memory.AllNamespaces))
		}
		return nil, nil
	}
	out := make([]string, 0, len(req.Namespaces))
	for i, name := range req.Namespaces {
		if err := memory.ValidateNamespace(name); err != nil {
			return nil, prefixErr(fmt.Sprintf("namespaces[%d]: ", i), err)
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// exportView is what an export reads of one namespace besides the
// snapshot: its working store and clock at the moment of the snapshot.
type exportView struct {
	ns       *nsState
	working  []*memory.MemoryRecord
	clock    float64
	lastTick time.Time
}

// exportViews returns the views of the named namespaces that exist (every
// namespace for nil names). Callers hold big.
func (e *Engine) exportViews(names []string) []exportView {
	var spaces []*nsState
	if names == nil {
		spaces = e.allSpaces()
	} else {
		e.mu.RLock()
		for _, name := range names {
			if ns := e.spaces[name]; ns != nil {
				spaces = append(spaces, ns)
			}
		}
		e.mu.RUnlock()
	}
	views := make([]exportView, len(spaces))
	e.mu.RLock()
	defer e.mu.RUnlock()
	for i, ns := range spaces {
		views[i] = exportView{ns: ns, working: ns.working.all(), clock: ns.clock(), lastTick: ns.tickAtLocked()}
	}
	return views
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
		return memory.AllStores(), nil
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
// Entries go into the caller's namespace, or with preserve_namespaces each
// into the namespace the archive names for it (see memory.ImportRequest);
// namespaces that do not exist yet are created first (a failed import may
// leave them, empty). A replace empties the namespaces it writes to (with
// preserve_namespaces, every namespace) and nothing else.
//
// Curated records that already exist in their namespace are resolved by
// conflict_resolution. The raw journal is verbatim: an archived raw entry
// whose id is already stored in its namespace is never applied, whatever
// the strategy or resolution (a replace starts from an empty journal, so
// only an id repeated within the archive can meet one). Such entries are
// counted in records_skipped, and those that differ from the stored entry
// in raw_conflicts.
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
	parts, err := e.readArchive(ctx, req, r)
	if err != nil {
		return nil, err
	}

	e.big.Lock()
	defer e.big.Unlock()
	if err := e.flushRecalls(); err != nil {
		return nil, err
	}
	targets := make([]*nsState, len(parts))
	for i, p := range parts {
		if targets[i], err = e.spaceFor(memory.WithNamespace(ctx, p.name)); err != nil {
			return nil, err
		}
	}
	e.workMu.Lock()
	defer e.workMu.Unlock()
	im := e.newImport(req)
	defer im.t.close()
	if im.replace {
		emptied := targets // created above when the archive holds anything
		switch {
		case req.PreserveNamespaces:
			emptied = e.allSpaces()
		case len(targets) == 0:
			if ns := e.space(ctx); ns != nil {
				emptied = []*nsState{ns}
			}
		}
		for _, ns := range emptied {
			im.t.ns = ns
			im.t.empty()
			// A consolidation left unfinished concerns records that go.
			im.t.b.DeleteNSMeta(ns.id, consolidationKey)
			im.t.b.DeleteNSMeta(ns.id, consolidationDoneKey)
		}
	}
	for i, p := range parts {
		im.t.ns = targets[i]
		if err := im.curated(p.curated); err != nil {
			return nil, err
		}
		if err := im.raws(p.raws); err != nil {
			return nil, err
		}
	}
	if err := im.commit(ctx, targets, parts); err != nil {
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

// importPart is what an archive brings to one namespace.
type importPart struct {
	name    string
	curated []*memory.MemoryRecord
	raws    []*memory.RawJournalRecord
}

// readArchive reads and checks the whole archive and sorts its entries by
// the namespace they go to: all into the caller's, or with
// preserve_namespaces each into its own. Parts come in name order.
func (e *Engine) readArchive(ctx context.Context, req *memory.ImportRequest, r io.Reader) ([]*importPart, error) {
	opts := archive.ReaderOptions{Now: e.now, MaxSize: e.opts.ImportMaxBytes, KDFSlot: e.opts.KDFGate.Slot(ctx)}
	if req.DecryptionKey != nil {
		opts.Passphrase = []byte(*req.DecryptionKey)
	}
	ar, err := archive.NewReader(r, opts)
	if err != nil {
		return nil, e.importConflict(err)
	}
	parts := map[string]*importPart{}
	for {
		ent, err := ar.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, e.importConflict(err)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		name := memory.NamespaceFrom(ctx)
		if req.PreserveNamespaces {
			name = cmp.Or(ent.Namespace, memory.DefaultNamespace)
		}
		p := parts[name]
		if p == nil {
			p = &importPart{name: name}
			parts[name] = p
		}
		if ent.Record != nil {
			p.curated = append(p.curated, ent.Record)
		} else {
			p.raws = append(p.raws, ent.Raw)
		}
	}
	out := make([]*importPart, 0, len(parts))
	for _, p := range parts {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *importPart) int { return cmp.Compare(a.name, b.name) })
	return out, nil
}

// importer is one import on its way into a commit. Its txn's namespace
// is the one being written. Callers hold big and workMu.
type importer struct {
	e       *Engine
	req     *memory.ImportRequest
	t       *txn
	replace bool
	now     time.Time
	resp    memory.ImportResponse
	// raw entries written by this import, to meet ids the archive repeats
	rawWritten map[nsID]*memory.RawJournalRecord
}

// newImport starts the change.
func (e *Engine) newImport(req *memory.ImportRequest) *importer {
	return &importer{e: e, req: req, t: e.begin(nil), replace: req.Strategy == memory.ImportReplace,
		now: e.now(), rawWritten: map[nsID]*memory.RawJournalRecord{}}
}

// curated writes the archive's curated records that win their conflicts
// into the current namespace, settled on its decay clock. Working-store
// records go through the working store's capacity like new ones.
func (im *importer) curated(recs []*memory.MemoryRecord) error {
	e, ns := im.e, im.t.ns
	clock := ns.clock()
	var working []*memory.MemoryRecord
	for _, rec := range recs {
		fromStore, exists := memory.StoreType(0), false
		if !im.replace {
			e.mu.RLock()
			if ent, ok := ns.st.entries[rec.ID]; ok {
				fromStore, exists = ent.store, true
			}
			e.mu.RUnlock()
		}
		if exists && !e.importWins(ns, im.req.ConflictResolution, rec.ID, rec) {
			im.resp.RecordsSkipped++
			continue
		}
		settleImported(rec, clock, e.opts.Decay, im.now)
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
		for _, p := range e.planWorkingFrom(ns, im.replace, working) {
			if err := im.t.moveRecord(p, memory.StoreWorking); err != nil {
				return err
			}
		}
	}
	return nil
}

// raws writes the archive's raw entries whose ids the current namespace
// does not hold yet. The raw journal is verbatim: an entry already stored,
// or already written by this import, is left as it is and counted.
func (im *importer) raws(recs []*memory.RawJournalRecord) error {
	ns := im.t.ns
	for _, rec := range recs {
		old, err := im.storedRaw(ns, rec.ID)
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
		im.rawWritten[nsID{ns, rec.ID}] = rec
		im.resp.RecordsImported++
	}
	return nil
}

// storedRaw returns the raw entry of namespace ns with this id that the
// import would meet: one written earlier in this import, or (merging) one
// in the store. A stored entry that is quarantined (cannot be read) is met
// as an empty entry, so it stays as it is and counts as a conflict.
func (im *importer) storedRaw(ns *nsState, id memory.ID) (*memory.RawJournalRecord, error) {
	if rec, ok := im.rawWritten[nsID{ns, id}]; ok {
		return rec, nil
	}
	if im.replace {
		return nil, nil
	}
	rec, err := im.e.db.GetRaw(ns.id, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, nil
	case errors.Is(err, store.ErrCorrupt):
		return &memory.RawJournalRecord{ID: id}, nil
	}
	return rec, err
}

// commit logs the import and commits it. Dream summaries bring the time of
// the tick that made them: in each namespace written, the latest becomes
// the namespace's last dream tick when later, or whatever it is (none
// included) after a replace.
func (im *importer) commit(ctx context.Context, targets []*nsState, parts []*importPart) error {
	e, t := im.e, im.t
	var ids []memory.ID
	var stores []memory.StoreType
	for _, p := range t.puts {
		ids = append(ids, p.rec.ID)
		stores = append(stores, p.rec.Store)
	}
	for _, r := range t.raws {
		ids = append(ids, r.rec.ID)
	}
	summary := map[string]any{
		"archive_id": im.req.ArchiveID, "strategy": im.req.Strategy.String(),
		"conflict_resolution": im.req.ConflictResolution.String(), "records_imported": im.resp.RecordsImported,
		"records_skipped": im.resp.RecordsSkipped, "raw_conflicts": im.resp.RawConflicts,
	}
	if im.req.PreserveNamespaces {
		names := make([]string, len(parts))
		for i, p := range parts {
			names[i] = p.name
		}
		summary["namespaces"] = names
		summary["preserve_namespaces"] = true
	} else {
		summary["namespace"] = memory.NamespaceFrom(ctx)
	}
	t.ns = nil
	t.audit(audit.OpImport, ids, stores, summary)
	dreams := map[*nsState]time.Time{}
	for _, ns := range t.reset {
		dreams[ns] = time.Time{} // emptied: no dream tick unless the archive brings one
	}
	for i, p := range parts {
		ns := targets[i]
		last := latestDreamTick(p.curated)
		if _, emptied := dreams[ns]; emptied || last.After(e.lastDreamAt(ns)) {
			dreams[ns] = last
		}
	}
	for ns, last := range dreams {
		if last.IsZero() {
			t.b.DeleteNSMeta(ns.id, lastDreamKey)
		} else {
			t.b.PutNSMeta(ns.id, lastDreamKey, uint64Bytes(uint64(last.UnixNano())))
		}
	}
	if err := t.commit(); err != nil {
		return err
	}
	e.mu.Lock()
	for ns, last := range dreams {
		ns.lastDream = last
	}
	e.mu.Unlock()
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

func (e *Engine) lastDreamAt(ns *nsState) time.Time {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return ns.lastDream
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

// importWins decides a conflict for a curated record that already exists
// in namespace ns.
func (e *Engine) importWins(ns *nsState, cr memory.ConflictResolution, id memory.ID, imported *memory.MemoryRecord) bool {
	switch cr {
	case memory.KeepExisting:
		return false
	case memory.KeepImported:
		return true
	}
	existing, err := e.get(ns, id)
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
