package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/engine/dreamgroup"
	"memsvc.dev/memsvc/pkg/engine/vecindex"
	"memsvc.dev/memsvc/pkg/memory"
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
func (e *Engine) Consolidate(ctx context.Context, req *memory.ConsolidateRequest) (*memory.ConsolidateResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !req.Strategy.Valid() {
		return nil, memory.Invalid("strategy", "want one of incremental, full, selective")
	}
	e.big.Lock()
	defer e.big.Unlock()
	if err := e.flushRecalls(); err != nil {
		return nil, err
	}
	ns := e.space(ctx)
	if ns == nil {
		return &memory.ConsolidateResponse{}, nil // a namespace that does not exist holds nothing
	}
	now := e.now()
	clock := ns.clock()

	// What exists: episodic sources and the copies made of them, in this
	// namespace only.
	copies := map[memory.ID]*memory.MemoryRecord{} // source id -> its copy
	if err := e.db.ScanRecords(ns.id, memory.StoreSemantic, func(rec *memory.MemoryRecord) error {
		if from, ok := consolidatedOf(rec); ok {
			copies[from.RecordID] = rec
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("consolidate: %w", err)
	}
	var episodic []*memory.MemoryRecord
	if err := e.db.ScanRecords(ns.id, memory.StoreEpisodic, func(rec *memory.MemoryRecord) error {
		episodic = append(episodic, rec)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("consolidate: %w", err)
	}
	upToDate := func(rec *memory.MemoryRecord) bool {
		c := copies[rec.ID]
		if c == nil {
			return false
		}
		from, _ := consolidatedOf(c)
		return from.Version == rec.Version
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

	resp := &memory.ConsolidateResponse{RecordsProcessed: uint32(len(episodic))}
	var work []*memory.MemoryRecord
	for _, rec := range episodic {
		if eligible(rec) && (req.Strategy == memory.ConsolidateFull || !upToDate(rec)) {
			work = append(work, rec)
		}
	}

	// Near-duplicates: among the work list, or among all episodic records
	// for full.
	pool := work
	if req.Strategy == memory.ConsolidateFull {
		pool = episodic
	}
	merges := e.duplicates(ns, pool, clock)
	resp.RecordsCompressed = uint32(len(merges))
	gone := map[memory.ID]bool{}
	for _, m := range merges {
		gone[m.drop.ID] = true
	}
	work = slices.DeleteFunc(work, func(r *memory.MemoryRecord) bool { return gone[r.ID] })

	for _, rec := range work {
		if !upToDate(rec) {
			resp.RecordsMigrated++
			if copies[rec.ID] == nil {
				resp.SemanticNodesCreated++
			}
		}
	}
	var prune []*memory.MemoryRecord
	if req.Strategy == memory.ConsolidateFull {
		for _, rec := range episodic {
			if gone[rec.ID] || e.entryScore(ns, rec.ID, clock) >= DormantBelow {
				continue
			}
			if upToDate(rec) || slices.ContainsFunc(work, func(w *memory.MemoryRecord) bool { return w.ID == rec.ID }) {
				prune = append(prune, rec)
			}
		}
	}
	resp.RecordsPruned = uint32(len(prune))
	if req.DryRun {
		return resp, nil
	}

	// Merge duplicates: the kept record inherits the dropped one's edges
	// (never an edge to itself), then the dropped one is deleted.
	for _, m := range merges {
		changed := false
		for _, a := range m.drop.Associations {
			if a.TargetID != m.keep.ID && !gone[a.TargetID] {
				changed = addEdge(m.keep, a.TargetID, a.AssociationType, a.Origin, a.Weight, now) || changed
			}
		}
		if changed {
			m.keep.UpdatedAt = now
			m.keep.Version++
			if err := e.rewrite(ns, audit.OpConsolidate, map[string]any{"step": "merge", "merged_from": m.drop.ID.String()}, m.keep); err != nil {
				return nil, err
			}
		}
		if err := e.deleteLocked(ns, map[memory.ID]memory.StoreType{m.drop.ID: memory.StoreEpisodic}, audit.OpConsolidate, map[string]any{"step": "merge", "kept": m.keep.ID.String()}); err != nil {
			return nil, err
		}
	}
	var stale []*memory.MemoryRecord
	for _, rec := range work {
		if !upToDate(rec) {
			stale = append(stale, rec)
		}
	}
	for len(stale) > 0 {
		n := min(len(stale), copyChunk)
		if err := e.consolidateChunk(ns, stale[:n], copies, now); err != nil {
			return nil, err
		}
		stale = stale[n:]
	}
	if len(prune) > 0 {
		doomed := map[memory.ID]memory.StoreType{}
		for _, rec := range prune {
			doomed[rec.ID] = memory.StoreEpisodic
		}
		if err := e.deleteLocked(ns, doomed, audit.OpConsolidate, map[string]any{"step": "prune", "strategy": req.Strategy.String()}); err != nil {
			return nil, err
		}
	}
	return resp, nil
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

// duplicates pairs near-identical records (cosine above dupCosine for
// embeddings, term overlap above dupJaccard for text). The record with the
// higher fidelity is kept (the older one on ties); each record is in at
// most one pair.
func (e *Engine) duplicates(ns *nsState, pool []*memory.MemoryRecord, clock float64) []merge {
	var out []merge
	used := map[memory.ID]bool{}
	// Terms and unit vectors once per record, not once per pair.
	terms := make([]map[string]bool, len(pool))
	vecs := make([]unitVec, len(pool))
	for i, rec := range pool {
		terms[i] = termSet(strings.Join(recordTexts(rec), "\n"))
		v := rec.Content.Embedding()
		vecs[i] = unitVec{dims: len(v), unit: vecindex.Normalize(v)}
	}
	for i, a := range pool {
		if used[a.ID] {
			continue
		}
		for j := i + 1; j < len(pool); j++ {
			b := pool[j]
			if used[b.ID] || !nearDuplicate(vecs[i], vecs[j], terms[i], terms[j]) {
				continue
			}
			keep, drop := a, b
			if e.entryScore(ns, b.ID, clock) > e.entryScore(ns, a.ID, clock) {
				keep, drop = b, a
			}
			out = append(out, merge{keep, drop})
			used[a.ID], used[b.ID] = true, true
			break
		}
	}
	return out
}

// unitVec is a record's embedding as a unit vector (nil for a zero
// vector) and its size (0 for none).
type unitVec struct {
	dims int
	unit []float32
}

// nearDuplicate compares two records by their embeddings when both have
// one of the same size (a zero vector matches nothing), else by their
// index terms.
func nearDuplicate(va, vb unitVec, ta, tb map[string]bool) bool {
	if va.dims > 0 && va.dims == vb.dims {
		return va.unit != nil && vb.unit != nil && float64(vecindex.Dot(va.unit, vb.unit)) > dupCosine
	}
	j, _ := jaccard(ta, tb)
	return len(ta) > 0 && j >= dupJaccard
}

// copyChunk is how many records one commit of a consolidation
// copies: one sync and one audit entry per chunk, not per record. Each
// chunk is atomic; a run stopped between chunks is finished by the next
// one, which skips the copies already up to date.
const copyChunk = 256

// consolidateChunk writes (or refreshes) the semantic copies of recs, in
// their namespace ns, in one commit; copies maps a source to its existing
// copy.
func (e *Engine) consolidateChunk(ns *nsState, recs []*memory.MemoryRecord, copies map[memory.ID]*memory.MemoryRecord, now time.Time) error {
	t := e.begin(ns)
	defer t.close()
	ids := make([]memory.ID, 0, 2*len(recs))
	refreshed := 0
	for _, rec := range recs {
		cp, err := e.consolidateInto(t, ns, rec, copies[rec.ID], now)
		if err != nil {
			return err
		}
		if copies[rec.ID] != nil {
			refreshed++
		}
		ids = append(ids, rec.ID, cp)
	}
	t.audit(audit.OpConsolidate, ids, []memory.StoreType{memory.StoreEpisodic, memory.StoreSemantic},
		map[string]any{"step": "copy", "records": len(recs), "refreshed": refreshed})
	return t.commit()
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
