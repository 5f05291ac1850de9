package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/memory"
)

// Forget implements memory.Service. The selectors (ids, a whole store, a
// creation-time range) are unioned. With Cascade, the direct association
// targets of the listed ids go too, along the links a client made and the
// derivation links (dream and consolidation provenance), never along the
// similarity links memsvc infers on its own (see cascades). Edges that
// other records hold to deleted records are removed in the same atomic
// commit, so no dangling association survives.
func (e *Engine) Forget(ctx context.Context, req *memory.ForgetRequest) (*memory.ForgetResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req.Confirm == nil {
		return nil, memory.Invalid("confirm", "required: set confirm to true to delete records permanently")
	}
	if !*req.Confirm {
		return nil, &memory.Error{Code: memory.CodeForgetUnconfirmed, Message: "forget deletes records permanently: set confirm to true to proceed"}
	}
	if req.Store != nil && !req.Store.Valid() {
		return nil, memory.Invalid("store", "want one of %s", memory.StoreTypeNames())
	}
	if err := memory.ValidateTemporalRange("temporal_range", req.TemporalRange); err != nil {
		return nil, err
	}

	e.big.Lock()
	defer e.big.Unlock()
	if err := e.flushRecalls(); err != nil {
		return nil, err
	}
	ns := e.space(ctx)
	if ns == nil {
		return &memory.ForgetResponse{}, nil // a namespace that does not exist holds nothing
	}

	doomed, err := e.selectForget(ns, req)
	if err != nil {
		return nil, fmt.Errorf("forget: %w", err)
	}
	if len(doomed) == 0 {
		return &memory.ForgetResponse{}, nil
	}

	if err := e.deleteLocked(ns, doomed, audit.OpForget, map[string]any{"cascade": req.Cascade, "records_deleted": len(doomed)}); err != nil {
		return nil, fmt.Errorf("forget: %w", err)
	}
	return &memory.ForgetResponse{RecordsDeleted: uint32(len(doomed))}, nil
}

// selectForget returns the ids (with their stores) of namespace ns a
// forget request selects. Callers hold big exclusively, so nothing changes
// while it reads.
func (e *Engine) selectForget(ns *nsState, req *memory.ForgetRequest) (map[memory.ID]memory.StoreType, error) {
	doomed := make(map[memory.ID]memory.StoreType)
	for _, id := range req.RecordIDs {
		rec, err := e.get(ns, id)
		if errors.Is(err, memory.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		doomed[id] = rec.Store
		if !req.Cascade {
			continue
		}
		for _, a := range rec.Associations {
			target, err := e.get(ns, a.TargetID)
			if errors.Is(err, memory.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			if cascades(rec, a, target) {
				doomed[target.ID] = target.Store
			}
		}
	}
	if req.Store != nil || req.TemporalRange != nil {
		e.mu.RLock()
		for id, ent := range ns.st.entries {
			if (req.Store != nil && ent.store == *req.Store) ||
				(req.TemporalRange != nil && req.TemporalRange.Contains(ent.created)) {
				doomed[id] = ent.store
			}
		}
		e.mu.RUnlock()
	}
	return doomed, nil
}

// cascades reports whether forgetting rec with cascade deletes target, the
// record its association a points to: yes along links a client made and
// derivation links, no along similarity links. An edge written before
// associations recorded their origin (or imported from an archive without
// it) is judged by its shape: a derivation when one record was derived
// from the other (a consolidated copy and its source, a dream summary and
// its semantic node); a similarity link when it is a semantic edge that
// the target mirrors with the same weight and creation time, as the
// similarity linker writes them; otherwise a client's link.
func cascades(rec *memory.MemoryRecord, a memory.Association, target *memory.MemoryRecord) bool {
	switch a.Origin {
	case memory.OriginClient, memory.OriginDerivation:
		return true
	case memory.OriginSimilarity:
		return false
	}
	if derivedFrom(rec, target) || derivedFrom(target, rec) {
		return true
	}
	if a.AssociationType != memory.AssocSemantic {
		return true
	}
	mirrored := slices.ContainsFunc(target.Associations, func(b memory.Association) bool {
		return b.TargetID == rec.ID && b.AssociationType == a.AssociationType && b.Weight == a.Weight && b.CreatedAt.Equal(a.CreatedAt)
	})
	return !mirrored
}

// derivedFrom reports whether memsvc made rec from src: rec is src's
// consolidated copy, or the semantic node promoted from the dream summary
// src.
func derivedFrom(rec, src *memory.MemoryRecord) bool {
	if from, ok := consolidatedOf(rec); ok && from.RecordID == src.ID {
		return true
	}
	if dreamKindOf(rec) != dreamSemantic {
		return false
	}
	var md struct {
		Origin struct {
			Summary memory.ID `json:"raw_summary_record_id"`
		} `json:"_origin"`
	}
	return json.Unmarshal(rec.Metadata, &md) == nil && md.Origin.Summary == src.ID
}

// deleteLocked deletes records of namespace ns and, in the same commit,
// the edges other records hold to them. Callers hold big exclusively.
func (e *Engine) deleteLocked(ns *nsState, doomed map[memory.ID]memory.StoreType, op string, summary map[string]any) error {
	t := e.begin(ns)
	defer t.close()
	return e.deleteIn(t, doomed, op, summary)
}

// deleteIn is deleteLocked within change t, which it commits.
func (e *Engine) deleteIn(t *txn, doomed map[memory.ID]memory.StoreType, op string, summary map[string]any) error {
	ns := t.ns
	now := e.now()
	e.mu.RLock()
	var holders []memory.ID
	for id := range doomed {
		for _, src := range ns.st.sources(id) {
			if _, gone := doomed[src]; !gone && !slices.Contains(holders, src) {
				holders = append(holders, src)
			}
		}
	}
	e.mu.RUnlock()
	for _, id := range holders {
		rec, err := e.get(ns, id)
		if err != nil {
			return fmt.Errorf("read %s: %w", id, err)
		}
		rec.Associations = slices.DeleteFunc(rec.Associations, func(a memory.Association) bool {
			_, gone := doomed[a.TargetID]
			return gone
		})
		rec.UpdatedAt = now
		rec.Version++
		t.touchRecord(rec)
	}
	var ids []memory.ID
	var stores []memory.StoreType
	for id, st := range doomed {
		if err := t.deleteRecord(id, st); err != nil {
			return err
		}
		ids = append(ids, id)
		stores = append(stores, st)
	}
	t.audit(op, ids, stores, summary)
	return t.commit()
}
