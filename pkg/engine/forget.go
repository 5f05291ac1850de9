package engine

import (
	"context"
	"fmt"
	"slices"

	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/memory"
)

// Forget implements memory.Service. The selectors (ids, a whole store, a
// creation-time range) are unioned; with Cascade, the direct association
// targets of the listed ids go too. Edges that other records hold to
// deleted records are removed in the same atomic commit, so no dangling
// association survives.
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

	doomed := e.selectForget(req)
	if len(doomed) == 0 {
		return &memory.ForgetResponse{}, nil
	}

	if err := e.deleteLocked(doomed, audit.OpForget, map[string]any{"cascade": req.Cascade, "records_deleted": len(doomed)}); err != nil {
		return nil, fmt.Errorf("forget: %w", err)
	}
	return &memory.ForgetResponse{RecordsDeleted: uint32(len(doomed))}, nil
}

// selectForget returns the ids (with their stores) a forget request selects.
// Callers hold big exclusively.
func (e *Engine) selectForget(req *memory.ForgetRequest) map[memory.ID]memory.StoreType {
	e.mu.Lock()
	defer e.mu.Unlock()
	doomed := make(map[memory.ID]memory.StoreType)
	for _, id := range req.RecordIDs {
		ent, ok := e.st.entries[id]
		if !ok {
			continue
		}
		doomed[id] = ent.store
		if req.Cascade {
			for _, ed := range ent.edges {
				if t, ok := e.st.entries[ed.target]; ok {
					doomed[ed.target] = t.store
				}
			}
		}
	}
	if req.Store != nil || req.TemporalRange != nil {
		for id, ent := range e.st.entries {
			if (req.Store != nil && ent.store == *req.Store) ||
				(req.TemporalRange != nil && req.TemporalRange.Contains(ent.created)) {
				doomed[id] = ent.store
			}
		}
	}
	return doomed
}

// deleteLocked deletes records and, in the same commit, the edges other
// records hold to them. Callers hold big exclusively.
func (e *Engine) deleteLocked(doomed map[memory.ID]memory.StoreType, op string, summary map[string]any) error {
	now := e.now()
	e.mu.RLock()
	var holders []memory.ID
	for id := range doomed {
		for _, src := range e.st.sources(id) {
			if _, gone := doomed[src]; !gone && !slices.Contains(holders, src) {
				holders = append(holders, src)
			}
		}
	}
	e.mu.RUnlock()
	t := e.begin()
	defer t.close()
	for _, id := range holders {
		rec, err := e.get(id)
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
