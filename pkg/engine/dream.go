package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/engine/dreamgroup"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// Dream processing turns pending raw journal entries into curated memories
// without an LLM. Grouping and summarising are package dreamgroup; this
// file reads the pending entries, at most max_groups groups per tick
// (oldest first), and writes what a group turns into.
//
// For each group an episodic summary is written, and a semantic memory
// linked both ways with it when the group is promoted. Private, sealed and
// secret entries that a tick was asked to include are marked processed and
// counted, but their text never reaches a summary. Provenance goes both
// ways: the summary's meta-memory cites every raw entry, and every raw
// entry lists the records derived from it (derived_memory_ids and
// metadata._derived) and is marked processed (metadata._dream), so a
// second tick over the same entries does nothing. Each group is one atomic
// commit.
//
// A tick reads and writes one namespace: groups never mix namespaces, and
// the summaries of a namespace's entries are records of that namespace.

// DreamTick implements memory.Service.
func (e *Engine) DreamTick(ctx context.Context, req *memory.DreamTickRequest) (*memory.DreamTickResponse, error) {
	if err := checkDreamTick(ctx, req); err != nil {
		return nil, err
	}
	e.dreamMu.Lock()
	defer e.dreamMu.Unlock()
	ns := e.space(ctx)
	if ns == nil {
		return &memory.DreamTickResponse{}, nil // a namespace that does not exist holds nothing
	}
	return e.dream(ctx, ns, req)
}

// DreamAll is DreamTick for every namespace in turn, each with req (so
// MaxGroups bounds the groups per namespace): what the background dream
// loop runs. The answer adds up the namespaces' answers.
func (e *Engine) DreamAll(ctx context.Context, req *memory.DreamTickRequest) (*memory.DreamTickResponse, error) {
	if err := checkDreamTick(ctx, req); err != nil {
		return nil, err
	}
	total := &memory.DreamTickResponse{}
	for _, ns := range e.allSpaces() {
		resp, err := e.dreamIn(ctx, ns, req)
		if resp != nil {
			total.GroupsProcessed += resp.GroupsProcessed
			total.RawRecordsProcessed += resp.RawRecordsProcessed
			total.EpisodicSummariesCreated += resp.EpisodicSummariesCreated
			total.SemanticNodesCreated += resp.SemanticNodesCreated
		}
		if err != nil {
			return total, fmt.Errorf("namespace %s: %w", ns.name, err)
		}
	}
	return total, nil
}

// dreamIn runs one tick in namespace ns (which stops at once if it was
// dropped meanwhile).
func (e *Engine) dreamIn(ctx context.Context, ns *nsState, req *memory.DreamTickRequest) (*memory.DreamTickResponse, error) {
	e.dreamMu.Lock()
	defer e.dreamMu.Unlock()
	return e.dream(ctx, ns, req)
}

func checkDreamTick(ctx context.Context, req *memory.DreamTickRequest) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for i, l := range req.SecrecyLevels {
		if !l.Valid() {
			return memory.Invalid(fmt.Sprintf("secrecy_levels[%d]", i), "want one of public, sensitive, secret")
		}
	}
	return nil
}

// dream runs a tick in namespace ns. Callers hold dreamMu. It reads the
// pending entries without holding the engine and takes it (shared) for
// one group at a time, so a tick over a large journal never keeps the
// operations that need the engine exclusively waiting, nor the requests
// queued behind them.
func (e *Engine) dream(ctx context.Context, ns *nsState, req *memory.DreamTickRequest) (*memory.DreamTickResponse, error) {
	if e.isDropped(ns) {
		return &memory.DreamTickResponse{}, nil
	}
	var session *string
	if req.SessionID != nil {
		if s := strings.TrimSpace(*req.SessionID); s != "" {
			session = &s
		}
	}
	groups, err := e.dreamGroups(ctx, ns, session, newRawFilter(req.IncludePrivateScratch, req.IncludeSealed, req.SecrecyLevels), int(req.MaxGroups))
	if err != nil {
		return nil, err
	}
	resp := &memory.DreamTickResponse{}
	now := e.now()
	for _, g := range groups {
		if err := ctx.Err(); err != nil {
			return resp, err
		}
		plan := dreamgroup.PlanGroup(g, req.PromoteSemantic)
		resp.GroupsProcessed++
		resp.RawRecordsProcessed += uint32(len(g.Entries))
		resp.EpisodicSummariesCreated++
		if plan.Promote {
			resp.SemanticNodesCreated++
		}
		if req.DryRun {
			continue
		}
		if err := e.dreamGroup(ns, g, plan, now); err != nil {
			if errors.Is(err, errGroupChanged) {
				// Counted above as planned; the next tick takes it up.
				resp.GroupsProcessed--
				resp.RawRecordsProcessed -= uint32(len(g.Entries))
				resp.EpisodicSummariesCreated--
				if plan.Promote {
					resp.SemanticNodesCreated--
				}
				continue
			}
			return resp, err
		}
	}
	return resp, nil
}

// errGroupChanged: a group's entries changed between the tick's read and
// its write (an import replaced them, the namespace was dropped).
var errGroupChanged = errors.New("dream group changed meanwhile")

// dreamGroup writes group g of namespace ns holding the engine shared,
// unless one of its entries is gone or processed since the tick read it
// (errGroupChanged).
func (e *Engine) dreamGroup(ns *nsState, g *dreamgroup.Group, plan dreamgroup.Plan, now time.Time) error {
	e.big.RLock()
	defer e.big.RUnlock()
	if e.isDropped(ns) {
		return errGroupChanged
	}
	for _, old := range g.Entries {
		cur, err := e.getRaw(ns, old.ID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (cur == nil || !cur.UpdatedAt.Equal(old.UpdatedAt) || store.FlagsOf(cur) != store.FlagsOf(old))) {
			return errGroupChanged
		}
		if err != nil {
			return fmt.Errorf("dream: %w", err)
		}
	}
	return e.writeDream(ns, g, plan, now)
}

// dreamGroups returns the first max groups a tick processes. It finds the
// pending entries in the raw index (ids and flags only), then reads them
// oldest first and stops as soon as the first max groups are settled (see
// dreamgroup.First), so a tick over a large backlog reads little more than
// the entries it processes.
func (e *Engine) dreamGroups(ctx context.Context, ns *nsState, session *string, filter rawFilter, max int) ([]*dreamgroup.Group, error) {
	if max <= 0 {
		return nil, nil
	}
	var ids []memory.ID
	err := e.db.ScanRawNewest(ns.id, store.RawRange{Session: session}, func(id memory.ID, fl store.RawFlags) (bool, error) {
		if !fl.DreamProcessed() && filter.allows(fl) {
			ids = append(ids, id)
		}
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("dream: %w", err)
	}
	slices.Reverse(ids)
	i := 0
	return dreamgroup.First(max, func() (*memory.RawJournalRecord, error) {
		for ; i < len(ids); i++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			rec, err := e.getRaw(ns, ids[i])
			if err != nil {
				return nil, fmt.Errorf("dream: %w", err)
			}
			if rec != nil {
				i++
				return rec, nil
			}
		}
		return nil, nil
	})
}

// writeDream stores a group's summary (and semantic node) in namespace ns
// and marks its entries processed, in one commit.
func (e *Engine) writeDream(ns *nsState, g *dreamgroup.Group, plan dreamgroup.Plan, now time.Time) error {
	rawIDs := make([]memory.ID, len(g.Entries))
	for i, rec := range g.Entries {
		rawIDs[i] = rec.ID
	}
	origin := map[string]any{
		"raw_session_id":     g.Session,
		"raw_topic_id":       g.Topic,
		"raw_topic_hint":     g.Hint,
		"raw_topic_inferred": g.Inferred,
		"raw_record_ids":     rawIDs,
		"raw_record_count":   len(rawIDs),
		"dream_tick_at":      now,
		"range_start":        g.Entries[0].CreatedAt,
		"range_end":          g.Last().CreatedAt,
	}
	newRecord := func(st memory.StoreType, meta memory.MetaMemory) *memory.MemoryRecord {
		return &memory.MemoryRecord{
			ID: e.ids.New(), Store: st, CreatedAt: now, UpdatedAt: now, LastAccessedAt: now,
			Content:  memory.MemoryContent{Blocks: []memory.ContentBlock{memory.TextBlock(plan.Text)}, Summary: &plan.Short},
			Fidelity: e.newFidelity(ns, st, memory.EmotionVector{}, now),
			Version:  1,
			Meta:     meta,
		}
	}
	summary := newRecord(memory.StoreEpisodic, withDreamMeta(memory.InferredMeta(memory.TriggerDreamTick,
		"Summarised from raw journal entries by dream processing.", rawIDs, now),
		"summarize the raw journal of this session and topic", []string{"summarize_raw_journal", "preserve_traceability"},
		[]string{"dream_tick", "episodic_summary"}))
	var node *memory.MemoryRecord
	if plan.Promote {
		node = newRecord(memory.StoreSemantic, withDreamMeta(memory.InferredMeta(memory.TriggerDreamTick,
			"Promoted to semantic memory because the topic recurred across the session.", rawIDs, now),
			"keep the recurring topic as a fact", []string{"promote_topic_signal", "preserve_traceability"},
			[]string{"dream_tick", "semantic_summary"}))
		decision := "Promoted the summary of topic " + g.Hint + " to semantic memory."
		node.Meta.Decision = &decision
		addEdge(summary, node.ID, memory.AssocSemantic, memory.OriginDerivation, 1, now)
		addEdge(node, summary.ID, memory.AssocSemantic, memory.OriginDerivation, 1, now)
		nodeOrigin := maps.Clone(origin)
		delete(nodeOrigin, "range_start")
		delete(nodeOrigin, "range_end")
		nodeOrigin["raw_summary_record_id"] = summary.ID
		node.Metadata = mustJSON(map[string]any{
			"_origin": nodeOrigin,
			"_dream":  map[string]any{"kind": "semantic_summary", "source": "raw_journal", "summary_stats": plan.Stats},
		})
		// The node's meta cites the summary first, then the raw entries.
		src := summary.ID
		one := 1.0
		label := "source_episodic_summary"
		node.Meta.ContextEdges = append([]memory.MetaEdge{{SourceID: &node.ID, TargetID: summary.ID, Relation: memory.RelDerivedFrom, Confidence: &one,
			Evidence: []memory.MetaEvidenceRef{{RecordID: &src, Label: &label, Confidence: &one}}}}, node.Meta.ContextEdges...)
	}
	derived := map[string]any{"semantic_ids": []memory.ID{}}
	if node != nil {
		derived["semantic_ids"] = []memory.ID{node.ID}
	}
	summary.Metadata = mustJSON(map[string]any{
		"_origin":  origin,
		"_dream":   map[string]any{"kind": "episodic_summary", "source": "raw_journal", "summary_stats": plan.Stats},
		"_derived": derived,
	})
	for i := range summary.Meta.ContextEdges {
		summary.Meta.ContextEdges[i].SourceID = &summary.ID
	}
	if node != nil {
		for i := 1; i < len(node.Meta.ContextEdges); i++ {
			node.Meta.ContextEdges[i].SourceID = &node.ID
		}
	}

	t := e.begin(ns)
	defer t.close()
	if err := t.putNewRecord(summary); err != nil {
		return err
	}
	made := []memory.ID{summary.ID}
	if node != nil {
		if err := t.putNewRecord(node); err != nil {
			return err
		}
		made = append(made, node.ID)
	}
	for _, old := range g.Entries {
		rec := *old
		rec.UpdatedAt = now
		for _, id := range made {
			if !slices.Contains(rec.DerivedMemoryIDs, id) {
				rec.DerivedMemoryIDs = append(rec.DerivedMemoryIDs, id)
			}
		}
		md, err := markDreamt(rec.Metadata, summary.ID, made, node != nil, now)
		if err != nil {
			return fmt.Errorf("mark raw record %s: %w", rec.ID, err)
		}
		rec.Metadata = md
		if err := t.putRaw(&rec, old); err != nil {
			return err
		}
	}
	t.b.PutNSMeta(ns.id, lastDreamKey, uint64Bytes(uint64(now.UnixNano())))
	t.audit(audit.OpDreamTick, made, []memory.StoreType{memory.StoreEpisodic, memory.StoreSemantic}, map[string]any{
		"raw_records": len(g.Entries), "raw_record_ids": rawIDs, "promoted": node != nil,
		"normal_records": plan.Stats["normal_records"], "redacted_total": plan.Stats["redacted_total"],
	})
	if err := t.commit(); err != nil {
		return fmt.Errorf("dream: %w", err)
	}
	e.mu.Lock()
	ns.lastDream = now
	e.mu.Unlock()
	recs := []*memory.MemoryRecord{summary}
	if node != nil {
		recs = append(recs, node)
	}
	e.queueLinks(ns, recs)
	return nil
}

// withDreamMeta completes an inferred meta-memory: intent, goals, tags, and
// one derived_from context edge per cited raw record.
func withDreamMeta(m memory.MetaMemory, intent string, goals, tags []string) memory.MetaMemory {
	m.Intent = &intent
	m.Goals = goals
	m.Tags = tags
	one := 1.0
	label := "source_raw_record"
	for _, id := range m.SourceRecordIDs {
		raw := id
		m.ContextEdges = append(m.ContextEdges, memory.MetaEdge{TargetID: raw, Relation: memory.RelDerivedFrom, Confidence: &one,
			Evidence: []memory.MetaEvidenceRef{{RawRecordID: &raw, Label: &label, Confidence: &one}}})
	}
	return m
}

// markDreamt records on a raw entry's metadata that it was summarised:
// _dream.processed_at and last_summary_id, and the derived ids under
// _derived. Non-object metadata is kept under "_metadata" rather than lost,
// and a non-object _dream or _derived value under "_dream_replaced" /
// "_derived_replaced".
func markDreamt(md memory.JSON, summaryID memory.ID, made []memory.ID, promoted bool, now time.Time) (memory.JSON, error) {
	obj := map[string]json.RawMessage{}
	switch {
	case len(md) == 0:
	case md.IsObject():
		if err := json.Unmarshal(md, &obj); err != nil {
			return nil, err
		}
	default:
		obj["_metadata"] = json.RawMessage(md)
	}
	dream := map[string]json.RawMessage{}
	if raw, ok := obj["_dream"]; ok {
		if err := json.Unmarshal(raw, &dream); err != nil {
			dream = map[string]json.RawMessage{}
			obj["_dream_replaced"] = raw
		}
	}
	dream["processed_at"] = mustJSON(now.UTC().Format(time.RFC3339Nano))
	dream["last_summary_id"] = mustJSON(summaryID)
	obj["_dream"] = mustJSON(dream)

	var derived struct {
		Episodic []memory.ID `json:"episodic_summary_ids"`
		Semantic []memory.ID `json:"semantic_ids"`
	}
	if raw, ok := obj["_derived"]; ok {
		if err := json.Unmarshal(raw, &derived); err != nil {
			obj["_derived_replaced"] = raw
			derived.Episodic, derived.Semantic = nil, nil
		}
	}
	if !slices.Contains(derived.Episodic, summaryID) {
		derived.Episodic = append(derived.Episodic, summaryID)
	}
	if promoted && !slices.Contains(derived.Semantic, made[1]) {
		derived.Semantic = append(derived.Semantic, made[1])
	}
	if derived.Semantic == nil {
		derived.Semantic = []memory.ID{}
	}
	obj["_derived"] = mustJSON(derived)
	return mustJSON(obj), nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(errors.New("engine: marshal metadata: " + err.Error()))
	}
	return b
}
