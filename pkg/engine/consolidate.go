package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/engine/dreamgroup"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// Consolidation turns mature episodic memories into semantic ones.
//
// A consolidated record gets a semantic copy: the same content (with a
// summary when it had none), a fresh semantic fidelity, a meta-memory that
// cites the source, provenance links both ways, and metadata
// "_consolidated_from" naming the source and the version it was copied at.
// Consolidating is idempotent: a source whose copy is up to date is
// skipped; a source that changed since gets its copy refreshed, not a
// second one.
//
// Strategies:
//
//   - incremental: the eligible episodic records that have no up-to-date
//     copy; near-duplicates are merged among those records only.
//   - full: near-duplicates are merged across every episodic record, every
//     eligible record is consolidated, and dormant sources (score under the
//     dormant threshold) whose content now lives in an up-to-date copy are
//     pruned.
//   - selective: like incremental, but only for salient records: recalled
//     at least twice, reinforced, or emotionally intense (intensity ≥ 0.5).
//
// Eligibility always requires min_age_hours since creation and
// min_access_count accesses. A dry run changes nothing and reports what a
// real run would do.
const (
	dupCosine          = 0.92
	dupJaccard         = 0.9
	selectiveAccesses  = 2
	selectiveIntensity = 0.5
	summaryBytes       = 100
)

// consolidation marker in a semantic copy's metadata
type consolidatedFrom struct {
	RecordID memory.ID `json:"record_id"`
	Version  uint32    `json:"version"`
}

func consolidatedOf(rec *memory.MemoryRecord) (consolidatedFrom, bool) {
	if rec.Store != memory.StoreSemantic || !bytes.Contains(rec.Metadata, []byte(`"_consolidated_from"`)) {
		return consolidatedFrom{}, false
	}
	var md struct {
		From *consolidatedFrom `json:"_consolidated_from"`
	}
	if json.Unmarshal(rec.Metadata, &md) != nil || md.From == nil {
		return consolidatedFrom{}, false
	}
	return *md.From, true
}

// Consolidate implements memory.Service.
//
// A run plans without holding the engine: it reads the namespace's
// records, finds the near-duplicates (duplicates.go) and decides what to
// copy and prune. It then applies the plan in chunks, each one commit
// under the engine's exclusive lock, held for that chunk only, and
// re-reads the chunk's records under it: a record forgotten, moved or (for
// a merge) no longer a near-duplicate since the plan is skipped and left to
// the next run. Recalls and stores run between the chunks, and through
// each chunk's disk sync, which comes after the engine is free again
// (consolidationStep).
//
// Before the first chunk the run writes a journal (the request and the
// merges it planned) in one commit; every merge chunk records its progress
// in the same commit as its changes, and the last step removes the
// journal. A run interrupted by a crash or a cancelled request is finished
// by the next consolidation of the namespace before that one plans: it
// applies the merges left, then copies and prunes as the journaled
// request asked (both are idempotent: a copy already up to date is
// skipped). So a crash and a rerun end where the uninterrupted run and the
// same rerun would have.
func (e *Engine) Consolidate(ctx context.Context, req *memory.ConsolidateRequest) (*memory.ConsolidateResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !req.Strategy.Valid() {
		return nil, memory.Invalid("strategy", "want one of incremental, full, selective")
	}
	e.consMu.Lock()
	defer e.consMu.Unlock()
	ns := e.space(ctx)
	if ns == nil {
		return &memory.ConsolidateResponse{}, nil // a namespace that does not exist holds nothing
	}
	if !req.DryRun {
		if err := e.resumeConsolidation(ctx, ns); err != nil {
			return nil, err
		}
	}
	// The plan reads the records from disk: write the recalls' effects
	// first, so eligibility sees the access counts they left.
	if err := e.flushRecallsShared(); err != nil {
		return nil, err
	}
	c, err := e.planConsolidation(ctx, ns, req, true)
	if err != nil {
		return nil, err
	}
	if req.DryRun || c.idle() {
		return &c.resp, nil
	}
	j := &consolidationJournal{Strategy: req.Strategy, MinAgeHours: req.MinAgeHours, MinAccessCount: req.MinAccessCount}
	for _, m := range c.merges {
		j.Merges = append(j.Merges, [2]memory.ID{m.keep.ID, m.drop.ID})
	}
	ok, err := e.consolidationStep(ns, "journal", true, func() error {
		t := e.beginLazy(ns)
		defer t.close()
		t.b.PutNSMeta(ns.id, consolidationKey, mustJSON(j))
		t.b.PutNSMeta(ns.id, consolidationDoneKey, uint64Bytes(0))
		return t.commit()
	})
	if err != nil || !ok {
		return &memory.ConsolidateResponse{}, err
	}
	if err := e.finishConsolidation(ctx, ns, c, j, 0); err != nil {
		return nil, err
	}
	return &c.resp, nil
}

// Journal of a consolidation under way (store.NSMetaKey): the journal,
// and how many of its merges are applied.
const (
	consolidationKey     = "consolidation"
	consolidationDoneKey = "consolidation_done"
)

// consolidationJournal is what a consolidation under way must finish.
type consolidationJournal struct {
	Strategy       memory.ConsolidationStrategy `json:"strategy"`
	MinAgeHours    uint32                       `json:"min_age_hours"`
	MinAccessCount uint32                       `json:"min_access_count"`
	// Merges are the planned pairs, kept record first.
	Merges [][2]memory.ID `json:"merges"`
}

func (j *consolidationJournal) request() *memory.ConsolidateRequest {
	return &memory.ConsolidateRequest{Strategy: j.Strategy, MinAgeHours: j.MinAgeHours, MinAccessCount: j.MinAccessCount}
}

// resumeConsolidation finishes the consolidation of namespace ns that an
// earlier run left journaled, if any.
func (e *Engine) resumeConsolidation(ctx context.Context, ns *nsState) error {
	v, ok, err := setting(e.db.GetNSMeta(ns.id, consolidationKey))
	if err != nil {
		return fmt.Errorf("consolidate: read journal: %w", err)
	}
	if !ok {
		return nil
	}
	j := &consolidationJournal{}
	if err := json.Unmarshal(v, j); err != nil {
		return fmt.Errorf("consolidate: journal: %w", store.ErrCorrupt)
	}
	done := 0
	switch d, err := e.db.GetNSMeta(ns.id, consolidationDoneKey); {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return fmt.Errorf("consolidate: read journal: %w", err)
	case len(d) != 8:
		return fmt.Errorf("consolidate: journal progress: %w", store.ErrCorrupt)
	default:
		done = int(min(binary.LittleEndian.Uint64(d), uint64(len(j.Merges))))
	}
	e.log.Info("finishing an interrupted consolidation", "namespace", ns.name, "strategy", j.Strategy.String(),
		"merges_left", len(j.Merges)-done)
	return e.finishConsolidation(ctx, ns, nil, j, done)
}

// consolidation is a planned run: what it will do and what it reports.
type consolidation struct {
	req    *memory.ConsolidateRequest
	resp   memory.ConsolidateResponse
	merges []merge
	copy   []memory.ID // sources whose copy is missing or stale, in order
	// kept: sources whose copy was up to date but which a merge of this run
	// keeps (and so changes): their copies are refreshed after the merges,
	// as part of the merge, not counted as migrated.
	kept   map[memory.ID]bool
	copies map[memory.ID]memory.ID // source -> its copy
	prune  []memory.ID             // dormant sources to prune once their copy is up to date
}

func (c *consolidation) idle() bool {
	return len(c.merges) == 0 && len(c.copy) == 0 && len(c.prune) == 0
}

// planConsolidation decides what a run of req does in namespace ns,
// merging near-duplicates when dups is set. It reads without holding the
// engine.
func (e *Engine) planConsolidation(ctx context.Context, ns *nsState, req *memory.ConsolidateRequest, dups bool) (*consolidation, error) {
	now := e.now()
	clock := ns.clock()

	// What exists: episodic sources and the copies made of them, in this
	// namespace only.
	type copyRef struct {
		id      memory.ID
		version uint32
	}
	copies := map[memory.ID]copyRef{} // source id -> its copy
	if err := e.db.ScanRecords(ns.id, memory.StoreSemantic, func(rec *memory.MemoryRecord) error {
		if from, ok := consolidatedOf(rec); ok {
			copies[from.RecordID] = copyRef{rec.ID, from.Version}
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("consolidate: %w", err)
	}
	var episodic []*memory.MemoryRecord
	if err := e.db.ScanRecords(ns.id, memory.StoreEpisodic, func(rec *memory.MemoryRecord) error {
		episodic = append(episodic, rec)
		return ctx.Err()
	}); err != nil {
		return nil, fmt.Errorf("consolidate: %w", err)
	}
	upToDate := func(rec *memory.MemoryRecord) bool {
		c, ok := copies[rec.ID]
		return ok && c.version == rec.Version
	}
	eligible := func(rec *memory.MemoryRecord) bool {
		age := now.Sub(rec.CreatedAt)
		if age < 0 || age < time.Duration(req.MinAgeHours)*time.Hour || rec.AccessCount < req.MinAccessCount {
			return false
		}
		if req.Strategy == memory.ConsolidateSelective {
			return rec.AccessCount >= selectiveAccesses || rec.Fidelity.ReinforcementCount > 0 || rec.Emotion.Intensity >= selectiveIntensity
		}
		return true
	}

	c := &consolidation{req: req, resp: memory.ConsolidateResponse{RecordsProcessed: uint32(len(episodic))}, copies: map[memory.ID]memory.ID{}}
	for src, cp := range copies {
		c.copies[src] = cp.id
	}
	var work []*memory.MemoryRecord
	for _, rec := range episodic {
		if eligible(rec) && (req.Strategy == memory.ConsolidateFull || !upToDate(rec)) {
			work = append(work, rec)
		}
	}

	// Near-duplicates: among the work list, or among all episodic records
	// for full.
	if dups {
		pool := work
		if req.Strategy == memory.ConsolidateFull {
			pool = episodic
		}
		c.merges = e.duplicates(ns, pool, clock, func() bool { return ctx.Err() != nil })
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	c.resp.RecordsCompressed = uint32(len(c.merges))
	gone := map[memory.ID]bool{}
	for _, m := range c.merges {
		gone[m.drop.ID] = true
	}
	work = slices.DeleteFunc(work, func(r *memory.MemoryRecord) bool { return gone[r.ID] })

	inWork := map[memory.ID]bool{}
	keeps := map[memory.ID]bool{}
	for _, m := range c.merges {
		keeps[m.keep.ID] = true
	}
	c.kept = map[memory.ID]bool{}
	for _, rec := range work {
		inWork[rec.ID] = true
		if upToDate(rec) && keeps[rec.ID] {
			c.kept[rec.ID] = true
		}
		if !upToDate(rec) {
			c.copy = append(c.copy, rec.ID)
			c.resp.RecordsMigrated++
			if _, ok := copies[rec.ID]; !ok {
				c.resp.SemanticNodesCreated++
			}
		}
	}
	if req.Strategy == memory.ConsolidateFull {
		for _, rec := range episodic {
			if gone[rec.ID] || e.entryScore(ns, rec.ID, clock) >= DormantBelow {
				continue
			}
			if upToDate(rec) || inWork[rec.ID] {
				c.prune = append(c.prune, rec.ID)
			}
		}
	}
	c.resp.RecordsPruned = uint32(len(c.prune))
	return c, nil
}

// Chunk sizes of a consolidation's commits: each holds the engine
// exclusively for one commit of this many merges, copies or prunes.
const (
	mergeChunk = 64
	pruneChunk = 64
)

// consolidationStep runs fn, the step named step, holding the engine
// exclusively, unless namespace ns was dropped meanwhile (then it reports
// false), then, when sync is set, makes what it and the steps before it
// committed durable.
//
// fn commits lazily (beginLazy): holding the engine through a disk sync
// (tens of milliseconds on a loaded disk, more than a chunk's work) would
// keep every recall and store waiting through it. The sync comes once the
// engine is free, every chunksPerSync chunks and at the end. Until then a
// recall may see the steps' changes, which a crash would undo: the
// journal, written in the same commits, has the next run redo them (with
// fresh ids for the new copies). A client's own write made meanwhile
// syncs the same sequential log, so nothing acknowledged ever depends on
// a change that is lost.
func (e *Engine) consolidationStep(ns *nsState, step string, sync bool, fn func() error) (bool, error) {
	ok, err := e.consolidationStepLocked(ns, step, fn)
	if !ok || !sync {
		return ok, err
	}
	if serr := e.syncWAL(); err == nil {
		err = serr
	}
	return true, err
}

// chunksPerSync is how many chunks of one kind a consolidation commits
// between two syncs: the chunks are small so that each holds the engine
// briefly, and syncing each would make the run wait for a sync per few
// dozen records.
const chunksPerSync = 4

func (e *Engine) consolidationStepLocked(ns *nsState, step string, fn func() error) (bool, error) {
	e.big.Lock()
	defer e.big.Unlock()
	if e.isDropped(ns) {
		return false, nil
	}
	if err := fn(); err != nil {
		return true, err
	}
	if e.opts.consolidationStepped != nil {
		e.opts.consolidationStepped(step)
	}
	return true, nil
}

// finishConsolidation applies a run's journal j from its done-th merge on,
// then its copies and prunes (c, or planned anew from the journaled
// request when c is nil), chunk by chunk, then removes the journal. The
// figures of c.resp become what was done.
func (e *Engine) finishConsolidation(ctx context.Context, ns *nsState, c *consolidation, j *consolidationJournal, done int) (err error) {
	defer func() {
		if err != nil {
			// What the chunks committed before the failure is
			// durable when the run answers, and so are their audit
			// entries.
			_ = e.syncWAL()
		}
	}()
	gone := map[memory.ID]bool{}
	for _, m := range j.Merges {
		gone[m[1]] = true
	}
	merged := 0
	for chunk := 1; done < len(j.Merges); chunk++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(len(j.Merges)-done, mergeChunk)
		var k int
		sync := chunk%chunksPerSync == 0 || done+n == len(j.Merges)
		ok, err := e.consolidationStep(ns, "merge", sync, func() (err error) {
			k, err = e.applyMerges(ns, j.Merges[done:done+n], gone, done+n)
			return err
		})
		if err != nil || !ok {
			return err
		}
		merged += k
		done += n
	}
	if c == nil {
		var err error
		if c, err = e.planConsolidation(ctx, ns, j.request(), false); err != nil {
			return err
		}
	}
	c.resp.RecordsCompressed = uint32(merged)
	c.resp.RecordsMigrated, c.resp.SemanticNodesCreated, c.resp.RecordsPruned = 0, 0, 0
	ids := slices.Clone(c.copy)
	for id := range c.kept {
		ids = append(ids, id)
	}
	slices.SortFunc(ids[len(c.copy):], compareIDs)
	ok, err := e.consolidationChunks(ctx, ns, "copy", ids, copyChunk, func(ids []memory.ID) error { return e.applyCopies(ns, ids, c) })
	if err != nil || !ok {
		return err
	}
	ok, err = e.consolidationChunks(ctx, ns, "prune", c.prune, pruneChunk, func(ids []memory.ID) error { return e.applyPrunes(ns, ids, c) })
	if err != nil || !ok {
		return err
	}
	_, err = e.consolidationStep(ns, "done", true, func() error {
		t := e.beginLazy(ns)
		defer t.close()
		t.b.DeleteNSMeta(ns.id, consolidationKey)
		t.b.DeleteNSMeta(ns.id, consolidationDoneKey)
		return t.commit()
	})
	return err
}

// consolidationChunks applies apply to ids in chunks of at most size, each
// in a step named step (consolidationStep), syncing every chunksPerSync
// chunks and after the last. It stops at the first error, when ctx ends,
// or when namespace ns was dropped (then it reports false).
func (e *Engine) consolidationChunks(ctx context.Context, ns *nsState, step string, ids []memory.ID, size int, apply func([]memory.ID) error) (bool, error) {
	for chunk := 1; len(ids) > 0; chunk++ {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		n := min(len(ids), size)
		sync := chunk%chunksPerSync == 0 || n == len(ids)
		ok, err := e.consolidationStep(ns, step, sync, func() error { return apply(ids[:n]) })
		if err != nil || !ok {
			return ok, err
		}
		ids = ids[n:]
	}
	return true, nil
}

func (e *Engine) entryScore(ns *nsState, id memory.ID, clock float64) float64 {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if ent, ok := ns.st.entries[id]; ok {
		return ent.score(clock)
	}
	return 0
}

type merge struct{ keep, drop *memory.MemoryRecord }

// applyMerges merges pairs (kept record first) in one commit that also
// records progress as the journal's count of applied merges, and returns
// how many it merged. The kept record inherits the dropped one's edges
// (never an edge to itself, nor to a record the run drops: gone), and
// the edges other records hold to a dropped one are removed. A pair whose
// records are gone, no longer episodic or no longer near-duplicates is
// skipped. Callers hold big exclusively.
func (e *Engine) applyMerges(ns *nsState, pairs [][2]memory.ID, gone map[memory.ID]bool, progress int) (int, error) {
	now := e.now()
	recs := map[memory.ID]*memory.MemoryRecord{}
	load := func(id memory.ID) *memory.MemoryRecord {
		if rec, ok := recs[id]; ok {
			return rec
		}
		rec, err := e.get(ns, id)
		if err != nil {
			rec = nil
		}
		recs[id] = rec
		return rec
	}
	var changed []*memory.MemoryRecord
	touch := func(rec *memory.MemoryRecord) {
		if !slices.Contains(changed, rec) {
			changed = append(changed, rec)
		}
	}
	doomed := map[memory.ID]memory.StoreType{}
	var ids []memory.ID
	for _, p := range pairs {
		keep, drop := load(p[0]), load(p[1])
		if keep == nil || drop == nil || keep.Store != memory.StoreEpisodic || drop.Store != memory.StoreEpisodic ||
			doomed[keep.ID] != 0 || doomed[drop.ID] != 0 || !recordsDuplicate(keep, drop) {
			continue
		}
		for _, a := range drop.Associations {
			if a.TargetID != keep.ID && !gone[a.TargetID] && addEdge(keep, a.TargetID, a.AssociationType, a.Origin, a.Weight, now) {
				touch(keep)
			}
		}
		doomed[drop.ID] = memory.StoreEpisodic
		ids = append(ids, drop.ID, keep.ID)
	}
	var holders []memory.ID
	e.mu.RLock()
	for id := range doomed {
		for _, src := range ns.st.sources(id) {
			if _, d := doomed[src]; !d && !slices.Contains(holders, src) {
				holders = append(holders, src)
			}
		}
	}
	e.mu.RUnlock()
	slices.SortFunc(holders, compareIDs)
	for _, id := range holders {
		rec := load(id)
		if rec == nil {
			continue
		}
		n := len(rec.Associations)
		rec.Associations = slices.DeleteFunc(rec.Associations, func(a memory.Association) bool {
			_, d := doomed[a.TargetID]
			return d
		})
		if len(rec.Associations) != n {
			touch(rec)
		}
	}
	t := e.beginLazy(ns)
	defer t.close()
	for _, rec := range changed {
		rec.UpdatedAt = now
		rec.Version++
		t.touchRecord(rec)
	}
	stores := make([]memory.StoreType, len(ids))
	for i := range ids {
		stores[i] = memory.StoreEpisodic
	}
	for i := 0; i < len(ids); i += 2 {
		if err := t.deleteRecord(ids[i], memory.StoreEpisodic); err != nil {
			return 0, err
		}
	}
	t.b.PutNSMeta(ns.id, consolidationDoneKey, uint64Bytes(uint64(progress)))
	if len(doomed) > 0 {
		t.audit(audit.OpConsolidate, ids, stores, map[string]any{"step": "merge", "pairs": len(doomed)})
	}
	return len(doomed), t.commit()
}

// copyChunk is how many records one commit of a consolidation copies: one
// audit entry per chunk, not per record, and a sync every chunksPerSync
// chunks. Most of a chunk's
// time under the engine is indexing the copies' text (about 40 µs a copy
// on one idle core): 32 copies keep a recall issued during a chunk
// waiting a millisecond or two, and the syncs, which come after the
// engine is let go, cost the consolidation itself, not the recalls.
const copyChunk = 32

// applyCopies writes (or refreshes) the semantic copies of sources ids of
// namespace ns in one commit, counting them in c.resp. A source gone or
// moved since the plan, or whose copy is up to date by now, is skipped.
// Callers hold big exclusively.
func (e *Engine) applyCopies(ns *nsState, ids []memory.ID, c *consolidation) error {
	now := e.now()
	t := e.beginLazy(ns)
	defer t.close()
	out := make([]memory.ID, 0, 2*len(ids))
	made, refreshed, keptRefreshed := 0, 0, 0
	for _, id := range ids {
		src, err := e.get(ns, id)
		if err != nil || src.Store != memory.StoreEpisodic {
			continue
		}
		existing := e.copyOf(ns, src.ID, c.copies)
		if existing != nil {
			if from, _ := consolidatedOf(existing); from.Version == src.Version {
				continue
			}
		}
		cp, err := e.consolidateInto(t, ns, src, existing, now)
		if err != nil {
			return err
		}
		c.copies[src.ID] = cp
		made++
		if existing != nil {
			refreshed++
		}
		if c.kept[src.ID] {
			keptRefreshed++
		}
		out = append(out, src.ID, cp)
	}
	if made == 0 {
		return nil
	}
	t.audit(audit.OpConsolidate, out, []memory.StoreType{memory.StoreEpisodic, memory.StoreSemantic},
		map[string]any{"step": "copy", "records": made, "refreshed": refreshed})
	if err := t.commit(); err != nil {
		return err
	}
	c.resp.RecordsMigrated += uint32(made - keptRefreshed)
	c.resp.SemanticNodesCreated += uint32(made - refreshed)
	return nil
}

// copyOf reads the semantic copy of source src, nil when it has none.
func (e *Engine) copyOf(ns *nsState, src memory.ID, copies map[memory.ID]memory.ID) *memory.MemoryRecord {
	id, ok := copies[src]
	if !ok {
		return nil
	}
	cp, err := e.get(ns, id)
	if err != nil {
		return nil
	}
	if from, ok := consolidatedOf(cp); !ok || from.RecordID != src {
		return nil
	}
	return cp
}

// applyPrunes deletes, in one commit, the sources ids of namespace ns that
// are still episodic, dormant, and whose copy is up to date, counting them
// in c.resp. Callers hold big exclusively.
func (e *Engine) applyPrunes(ns *nsState, ids []memory.ID, c *consolidation) error {
	clock := ns.clock()
	doomed := map[memory.ID]memory.StoreType{}
	for _, id := range ids {
		src, err := e.get(ns, id)
		if err != nil || src.Store != memory.StoreEpisodic || e.entryScore(ns, id, clock) >= DormantBelow {
			continue
		}
		if cp := e.copyOf(ns, id, c.copies); cp != nil {
			if from, _ := consolidatedOf(cp); from.Version == src.Version {
				doomed[id] = memory.StoreEpisodic
			}
		}
	}
	if len(doomed) == 0 {
		return nil
	}
	t := e.beginLazy(ns)
	defer t.close()
	if err := e.deleteIn(t, doomed, audit.OpConsolidate, map[string]any{"step": "prune", "strategy": c.req.Strategy.String()}); err != nil {
		return err
	}
	c.resp.RecordsPruned += uint32(len(doomed))
	return nil
}

// consolidateInto adds to t the semantic copy of rec (a new one, or
// existing refreshed) and returns its id.
func (e *Engine) consolidateInto(t *txn, ns *nsState, rec *memory.MemoryRecord, existing *memory.MemoryRecord, now time.Time) (memory.ID, error) {
	cp := &memory.MemoryRecord{
		ID: e.ids.New(), Store: memory.StoreSemantic, CreatedAt: now, LastAccessedAt: now, Version: 1,
		Fidelity: e.newFidelity(ns, memory.StoreSemantic, rec.Emotion, now),
	}
	if existing != nil {
		cp = existing
		cp.Version++
	}
	cp.UpdatedAt = now
	cp.Content = rec.Content
	if cp.Content.Summary == nil {
		if text, ok := rec.Content.Text(); ok {
			s := dreamgroup.Truncate(text, summaryBytes)
			cp.Content.Summary = &s
		}
	}
	cp.Emotion = rec.Emotion
	cp.Metadata = mustJSON(map[string]any{"_consolidated_from": consolidatedFrom{RecordID: rec.ID, Version: rec.Version}})
	cp.Meta = memory.InferredMeta(memory.TriggerConsolidate, "Consolidated from an episodic memory.", nil, now)
	src := rec.ID
	one := 1.0
	label := "consolidated_from"
	cp.Meta.SourceRecordIDs = []memory.ID{src}
	cp.Meta.Evidence = []memory.MetaEvidenceRef{{RecordID: &src, Label: &label, Confidence: &one}}
	cp.Meta.ContextEdges = []memory.MetaEdge{{SourceID: &cp.ID, TargetID: src, Relation: memory.RelDerivedFrom, Confidence: &one}}
	addEdge(cp, rec.ID, memory.AssocSemantic, memory.OriginDerivation, 1, now)

	if addEdge(rec, cp.ID, memory.AssocSemantic, memory.OriginDerivation, 1, now) {
		// The link is provenance, not a change of the memory: the version
		// stays, so the copy remains up to date.
		rec.UpdatedAt = now
		t.touchRecord(rec) // a new link: the indexed text is unchanged
	}
	put := t.putRecord
	if existing == nil {
		put = t.putNewRecord
	}
	if err := put(cp); err != nil {
		return memory.ID{}, err
	}
	return cp.ID, nil
}
