package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/memory"
)

// EncodeStore implements memory.Service.
func (e *Engine) EncodeStore(ctx context.Context, req *memory.EncodeStoreRequest) (*memory.EncodeStoreResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	e.big.RLock()
	defer e.big.RUnlock()
	ns, err := e.spaceFor(ctx)
	if err != nil {
		return nil, err
	}
	rec, err := e.buildRecord(ns, req, e.now())
	if err != nil {
		return nil, err
	}
	if err := e.writeNew(ns, audit.OpEncodeStore, []*memory.MemoryRecord{rec}, map[string]any{"associations": len(rec.Associations)}); err != nil {
		return nil, err
	}
	return storeResponse(rec, len(rec.Associations)), nil
}

// EncodeBatch implements memory.Service. Every record is validated before
// any is written, and the batch is committed atomically.
func (e *Engine) EncodeBatch(ctx context.Context, req *memory.EncodeBatchRequest) (*memory.EncodeBatchResponse, error) {
	if err := checkBatch(ctx, len(req.Records)); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	e.big.RLock()
	defer e.big.RUnlock()
	ns, err := e.spaceFor(ctx)
	if err != nil {
		return nil, err
	}
	now := e.now()
	recs := make([]*memory.MemoryRecord, len(req.Records))
	manual := make([]int, len(req.Records))
	for i := range req.Records {
		rec, err := e.buildRecord(ns, &req.Records[i], now)
		if err != nil {
			return nil, prefixErr(fmt.Sprintf("records[%d].", i), err)
		}
		recs[i], manual[i] = rec, len(rec.Associations)
	}
	var inferred uint32
	if req.InferAssociations {
		for i := 1; i < len(recs); i++ {
			prev, cur := recs[i-1], recs[i]
			if addEdge(prev, cur.ID, memory.AssocSequential, memory.OriginClient, 0.7, now) {
				inferred++
			}
			if addEdge(cur, prev.ID, memory.AssocSequential, memory.OriginClient, 0.7, now) {
				inferred++
			}
		}
	}
	if err := e.writeNew(ns, audit.OpEncodeBatch, recs, map[string]any{"records": len(recs), "associations_inferred": inferred}); err != nil {
		return nil, err
	}
	resp := &memory.EncodeBatchResponse{Results: make([]memory.EncodeStoreResponse, len(recs)), AssociationsInferred: inferred}
	for i, rec := range recs {
		resp.Results[i] = *storeResponse(rec, manual[i])
	}
	return resp, nil
}

// checkBatch refuses a cancelled request and a batch over the size limit.
func checkBatch(ctx context.Context, n int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if n > memory.MaxBatchRecords {
		return memory.Invalid("records", "batch size %d exceeds the maximum of %d; split it into smaller batches", n, memory.MaxBatchRecords)
	}
	return nil
}

func storeResponse(rec *memory.MemoryRecord, manual int) *memory.EncodeStoreResponse {
	return &memory.EncodeStoreResponse{
		RecordID:            rec.ID,
		Store:               rec.Store,
		InitialFidelity:     rec.Fidelity.Score,
		AssociationsCreated: uint32(manual),
	}
}

// addEdge appends an association unless rec already has one to target of
// that type, and reports whether rec changed. An existing edge that memsvc
// inferred by similarity (or of unknown origin) takes the new origin when
// a client or a derivation makes the same link, so forget --cascade
// follows it.
func addEdge(rec *memory.MemoryRecord, target memory.ID, typ memory.AssociationType, origin memory.AssociationOrigin, w float64, now time.Time) bool {
	for i := range rec.Associations {
		a := &rec.Associations[i]
		if a.TargetID == target && a.AssociationType == typ {
			if origin != memory.OriginSimilarity && (a.Origin == memory.OriginSimilarity || a.Origin == 0) && a.Origin != origin {
				a.Origin = origin
				return true
			}
			return false
		}
	}
	rec.Associations = append(rec.Associations, memory.Association{
		TargetID: target, AssociationType: typ, Weight: w, CreatedAt: now, LastCoActivation: now, Origin: origin,
	})
	return true
}

// buildRecord turns an encode request into a validated new record of
// namespace ns. Association targets must be records of ns: associations
// never cross namespaces.
func (e *Engine) buildRecord(ns *nsState, req *memory.EncodeStoreRequest, now time.Time) (*memory.MemoryRecord, error) {
	st := memory.StoreEpisodic
	switch {
	case req.Store != nil:
		st = *req.Store
		if !st.Valid() {
			return nil, memory.Invalid("store", "want one of %s", memory.StoreTypeNames())
		}
	case req.Content.Summary != nil:
		st = memory.StoreSemantic
	}
	var emo memory.EmotionVector
	if req.Emotion != nil {
		emo = *req.Emotion
	}
	md, err := mergeContext(req.Metadata, req.Context)
	if err != nil {
		return nil, err
	}
	rec := &memory.MemoryRecord{
		ID:             e.ids.New(),
		Store:          st,
		CreatedAt:      now,
		UpdatedAt:      now,
		LastAccessedAt: now,
		Content:        req.Content,
		Fidelity:       e.newFidelity(ns, st, emo, now),
		Emotion:        emo,
		Metadata:       md,
		Version:        1,
		Meta:           memory.NormalizeMeta(req.Meta, memory.TriggerEncodeStore, now),
	}
	for i, a := range req.Associations {
		f := fmt.Sprintf("associations[%d]", i)
		if a.TargetID.IsNil() {
			return nil, memory.Invalid(f+".target_id", "required and must not be the nil UUID")
		}
		if !a.AssociationType.Valid() {
			return nil, memory.Invalid(f+".association_type", "required")
		}
		if err := e.checkTarget(ns, a.TargetID); err != nil {
			return nil, prefixErr(f+".target_id: ", err)
		}
		addEdge(rec, a.TargetID, a.AssociationType, memory.OriginClient, a.Weight, now)
	}
	if err := rec.Validate(); err != nil {
		return nil, err
	}
	return rec, nil
}

// mergeContext stores the encode context in metadata under "_context",
// wrapping non-object metadata as {"_metadata": value}.
func mergeContext(md memory.JSON, ctx *memory.EncodeContext) (memory.JSON, error) {
	if ctx == nil {
		return md, nil
	}
	obj := map[string]json.RawMessage{}
	switch {
	case len(md) == 0:
	case md.IsObject():
		if err := json.Unmarshal(md, &obj); err != nil {
			return nil, memory.Invalid("metadata", "not valid JSON: %v", err)
		}
	default:
		obj["_metadata"] = json.RawMessage(md)
	}
	c, err := json.Marshal(ctx)
	if err != nil {
		return nil, memory.Invalid("context", "%v", err)
	}
	obj["_context"] = c
	out, err := json.Marshal(obj)
	if err != nil {
		return nil, memory.Invalid("metadata", "%v", err)
	}
	return out, nil
}

// prefixErr prefixes the message of a client error with a field path such
// as "records[3].".
func prefixErr(prefix string, err error) error {
	var me *memory.Error
	if errors.As(err, &me) {
		return &memory.Error{Code: me.Code, Message: prefix + me.Message, RetryAfter: me.RetryAfter}
	}
	return err
}

// writeNew durably stores new records of namespace ns. Working-store
// records live in memory; when that overflows, the least recently accessed
// working records move to the episodic store in the same commit.
func (e *Engine) writeNew(ns *nsState, op string, recs []*memory.MemoryRecord, summary map[string]any) error {
	t := e.begin(ns)
	defer t.close()
	hasWorking := false
	for _, rec := range recs {
		hasWorking = hasWorking || rec.Store == memory.StoreWorking
	}
	if hasWorking {
		e.workMu.Lock()
		defer e.workMu.Unlock()
	}
	for _, rec := range recs {
		if err := t.putNewRecord(rec); err != nil {
			return err
		}
	}
	var promoted []*memory.MemoryRecord
	if hasWorking {
		promoted = e.planWorking(ns, recs)
		for _, p := range promoted {
			if err := t.moveRecord(p, memory.StoreWorking); err != nil {
				return err
			}
		}
	}
	ids, stores := idsOf(recs), storesOf(recs)
	if len(promoted) > 0 {
		summary["promoted_to_episodic"] = len(promoted)
		ids = append(ids, idsOf(promoted)...)
		stores = append(stores, memory.StoreEpisodic)
	}
	t.audit(op, ids, stores, summary)
	if err := t.commit(); err != nil {
		return err
	}
	e.queueLinks(ns, recs)
	e.queueLinks(ns, promoted)
	return nil
}

// planWorking works out which working records of namespace ns have to
// leave when recs are added, and returns them moved to the episodic store.
// Callers hold workMu.
func (e *Engine) planWorking(ns *nsState, recs []*memory.MemoryRecord) []*memory.MemoryRecord {
	return e.planWorkingFrom(ns, false, recs)
}

// planWorkingFrom is planWorking starting from an empty working store when
// fresh is set (an import that replaces everything).
func (e *Engine) planWorkingFrom(ns *nsState, fresh bool, recs []*memory.MemoryRecord) []*memory.MemoryRecord {
	var sim []*memory.MemoryRecord
	if !fresh {
		e.mu.RLock()
		sim = ns.working.all()
		e.mu.RUnlock()
	}
	var out []*memory.MemoryRecord
	for _, rec := range recs {
		if rec.Store != memory.StoreWorking {
			continue
		}
		if len(sim) >= ns.working.capacity {
			v := 0
			for i := 1; i < len(sim); i++ {
				if sim[i].LastAccessedAt.Before(sim[v].LastAccessedAt) ||
					(sim[i].LastAccessedAt.Equal(sim[v].LastAccessedAt) && compareIDs(sim[i].ID, sim[v].ID) < 0) {
					v = i
				}
			}
			out = append(out, e.promote(ns, sim[v]))
			sim = append(sim[:v], sim[v+1:]...)
		}
		sim = append(sim, rec)
	}
	return out
}

// promote returns a copy of a working record of namespace ns as an
// episodic record.
func (e *Engine) promote(ns *nsState, rec *memory.MemoryRecord) *memory.MemoryRecord {
	c := *rec
	now := e.now()
	c.Store = memory.StoreEpisodic
	c.UpdatedAt = now
	c.Version++
	c.Fidelity.Stability = e.opts.Decay.StabilityDays[memory.StoreEpisodic]
	c.Fidelity.ClockBase = ns.clock()
	return &c
}

// EncodeUpdate implements memory.Service.
func (e *Engine) EncodeUpdate(ctx context.Context, req *memory.EncodeUpdateRequest) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return err
	}
	if req.Content == nil && req.Emotion == nil && req.Metadata == nil && req.Meta == nil {
		return memory.Invalid("", "nothing to update: give at least one of content, emotion, metadata or meta")
	}
	e.big.RLock()
	defer e.big.RUnlock()
	ns := e.space(ctx)
	if ns == nil {
		return memory.NotFound(req.RecordID)
	}
	defer e.lockRecord(req.RecordID)()
	rec, err := e.get(ns, req.RecordID)
	if err != nil {
		return err
	}
	now := e.now()
	if req.Content != nil {
		rec.Content = *req.Content
	}
	if req.Emotion != nil {
		// The emotional anchor stays the one set at creation: it is
		// applied once, never compounding (DESIGN §5), and recomputing it
		// here would raise fidelity without any reinforcement.
		rec.Emotion = *req.Emotion
	}
	if req.Metadata != nil {
		rec.Metadata = req.Metadata
	}
	if req.Meta != nil {
		rec.Meta = memory.NormalizeMeta(req.Meta, memory.TriggerEncodeUpdate, now)
	}
	rec.UpdatedAt = now
	rec.Version++
	if err := rec.Validate(); err != nil {
		return err
	}
	return e.rewrite(ns, audit.OpEncodeUpdate, map[string]any{
		"content_changed": req.Content != nil, "emotion_changed": req.Emotion != nil,
		"metadata_changed": req.Metadata != nil, "meta_changed": req.Meta != nil,
	}, rec)
}

// rewrite durably replaces existing records of namespace ns and logs op.
// Callers hold their locks.
func (e *Engine) rewrite(ns *nsState, op string, summary map[string]any, recs ...*memory.MemoryRecord) error {
	t := e.begin(ns)
	defer t.close()
	for _, rec := range recs {
		if err := t.putRecord(rec); err != nil {
			return err
		}
	}
	t.audit(op, idsOf(recs), storesOf(recs), summary)
	return t.commit()
}

// checkTarget makes sure a client-supplied association target is a record
// of namespace ns: a record of another namespace is not found, so a link
// can never reach across namespaces. A target that exists in no namespace
// is accepted, as memsvc always has (a link to a record yet to be
// imported, or one that was forgotten); it can never reach another
// namespace's record either, because activation and graphs only follow
// links to records of the namespace they run in.
func (e *Engine) checkTarget(ns *nsState, target memory.ID) error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if _, ok := ns.st.entries[target]; ok {
		return nil
	}
	for _, other := range e.spaces {
		if _, ok := other.st.entries[target]; ok && other != ns {
			return memory.NotFound(target)
		}
	}
	return nil
}
