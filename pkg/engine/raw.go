package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/engine/searchindex"
	"memsvc.dev/memsvc/pkg/engine/textindex"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// EncodeStoreRaw implements memory.Service.
func (e *Engine) EncodeStoreRaw(ctx context.Context, req *memory.EncodeStoreRawRequest) (*memory.EncodeStoreRawResponse, error) {
	resp, err := e.EncodeBatchRaw(ctx, &memory.EncodeBatchStoreRawRequest{Records: []memory.EncodeStoreRawRequest{*req}})
	if err != nil {
		return nil, stripPrefix("records[0].", err)
	}
	return &resp.Results[0], nil
}

// EncodeBatchRaw implements memory.Service. Entries are validated first and
// committed atomically. An entry whose client-supplied id is already stored
// (or repeats earlier in the batch) is skipped and reported as a duplicate.
func (e *Engine) EncodeBatchRaw(ctx context.Context, req *memory.EncodeBatchStoreRawRequest) (*memory.EncodeBatchStoreRawResponse, error) {
	if err := checkBatch(ctx, len(req.Records)); err != nil {
		return nil, err
	}
	e.big.RLock()
	defer e.big.RUnlock()
	now := e.now()
	recs := make([]*memory.RawJournalRecord, len(req.Records))
	clientIDs := false
	for i := range req.Records {
		rec, err := e.buildRaw(&req.Records[i], now)
		if err != nil {
			return nil, prefixErr(fmt.Sprintf("records[%d].", i), err)
		}
		recs[i] = rec
		clientIDs = clientIDs || req.Records[i].RecordID != nil
	}
	ns, err := e.spaceFor(ctx) // before rawMu: creating a namespace takes nsMu, of the same rank
	if err != nil {
		return nil, err
	}
	if clientIDs {
		// Checking for an id and writing it must not interleave with
		// another writer of the same id.
		e.rawMu.Lock()
		defer e.rawMu.Unlock()
	}
	resp := &memory.EncodeBatchStoreRawResponse{Results: make([]memory.EncodeStoreRawResponse, len(recs))}
	seen := make(map[memory.ID]int, len(recs))
	t := e.begin(ns)
	defer t.close()
	for i, rec := range recs {
		out := rec
		if req.Records[i].RecordID != nil {
			if j, ok := seen[rec.ID]; ok {
				out = recs[j]
				resp.Results[i] = rawResponse(out, true)
				continue
			}
			old, err := e.db.GetRaw(ns.id, rec.ID)
			switch {
			case err == nil:
				resp.Results[i] = rawResponse(old, true)
				continue
			case !errors.Is(err, store.ErrNotFound):
				return nil, fmt.Errorf("check raw record %s: %w", rec.ID, err)
			}
		}
		seen[rec.ID] = i
		// New: looked up above, or an id the engine just generated.
		if err := t.putNewRaw(rec); err != nil {
			return nil, err
		}
		resp.Results[i] = rawResponse(rec, false)
	}
	op := audit.OpEncodeBatchRaw
	if len(recs) == 1 {
		op = audit.OpEncodeStoreRaw
	}
	var ids []memory.ID
	for _, r := range t.raws {
		ids = append(ids, r.rec.ID)
	}
	if len(ids) > 0 {
		t.audit(op, ids, nil, map[string]any{"records": len(ids), "duplicates": len(recs) - len(ids)})
	}
	if err := t.commit(); err != nil {
		return nil, fmt.Errorf("write raw records: %w", err)
	}
	return resp, nil
}

// getRaw reads a raw entry of namespace ns for a query; a quarantined
// entry (one that cannot be read, see store.Quarantined) reads as nil and
// is left out.
func (e *Engine) getRaw(ns *nsState, id memory.ID) (*memory.RawJournalRecord, error) {
	rec, err := e.db.GetRaw(ns.id, id)
	if errors.Is(err, store.ErrCorrupt) {
		return nil, nil
	}
	return rec, err
}

func rawResponse(rec *memory.RawJournalRecord, dup bool) memory.EncodeStoreRawResponse {
	return memory.EncodeStoreRawResponse{
		RecordID: rec.ID, SessionID: rec.SessionID, Visibility: rec.Visibility,
		SecrecyLevel: rec.SecrecyLevel, Duplicate: dup,
	}
}

func (e *Engine) buildRaw(req *memory.EncodeStoreRawRequest, now time.Time) (*memory.RawJournalRecord, error) {
	rec := &memory.RawJournalRecord{
		SessionID:    req.SessionID,
		TurnID:       req.TurnID,
		TopicID:      req.TopicID,
		Source:       req.Source,
		Speaker:      req.Speaker,
		Visibility:   req.Visibility,
		SecrecyLevel: req.SecrecyLevel,
		CreatedAt:    now,
		UpdatedAt:    now,
		Content:      req.Content,
		Metadata:     req.Metadata,
		Meta:         memory.NormalizeMeta(req.Meta, memory.TriggerEncodeStoreRaw, now),
	}
	if req.RecordID != nil {
		if req.RecordID.IsNil() {
			return nil, memory.Invalid("record_id", "must not be the nil UUID")
		}
		rec.ID = *req.RecordID
	} else {
		rec.ID = e.ids.New()
	}
	if err := rec.Validate(); err != nil {
		return nil, err
	}
	return rec, nil
}

func stripPrefix(prefix string, err error) error {
	var me *memory.Error
	if errors.As(err, &me) && strings.HasPrefix(me.Message, prefix) {
		return &memory.Error{Code: me.Code, Message: strings.TrimPrefix(me.Message, prefix), RetryAfter: me.RetryAfter}
	}
	return err
}

// rawFilter decides which raw entries a query may see.
type rawFilter struct {
	private, sealed bool
	secrecy         [memory.SecrecySecret + 1]bool
}

func newRawFilter(private, sealed bool, levels []memory.SecrecyLevel) rawFilter {
	f := rawFilter{private: private, sealed: sealed}
	if levels == nil {
		f.secrecy[memory.SecrecyPublic] = true
		f.secrecy[memory.SecrecySensitive] = true
	}
	for _, l := range levels {
		if l.Valid() {
			f.secrecy[l] = true
		}
	}
	return f
}

func (f rawFilter) allows(fl store.RawFlags) bool {
	if fl.Suppressed() || !f.secrecy[fl.SecrecyLevel()&3] {
		return false
	}
	switch fl.Visibility() {
	case memory.VisibilityNormal:
		return true
	case memory.VisibilityPrivateScratch:
		return f.private
	case memory.VisibilitySealed:
		return f.sealed
	}
	return false
}

// RecallRaw implements memory.Service: entries that match the query (every
// query term, after stemming; a query without index terms, such as "?!",
// matches as a case-insensitive substring) and the session, time,
// visibility and secrecy filters, newest first. total_candidates counts
// every match, not just the returned ones.
func (e *Engine) RecallRaw(ctx context.Context, req *memory.RecallRawQueryRequest) (*memory.RecallRawQueryResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if err := memory.ValidateTemporalRange("temporal", req.Temporal); err != nil {
		return nil, err
	}
	var rng store.RawRange
	if req.SessionID != nil {
		if s := strings.TrimSpace(*req.SessionID); s != "" {
			rng.Session = &s
		}
	}
	if req.Temporal != nil {
		rng.Start, rng.End = req.Temporal.Start, req.Temporal.End
	}
	query := ""
	if req.Query != nil {
		query = strings.TrimSpace(*req.Query)
	}
	filter := newRawFilter(req.IncludePrivateScratch, req.IncludeSealed, req.SecrecyLevels)
	resp := &memory.RecallRawQueryResponse{Records: []memory.RawJournalRecord{}}
	ns := e.space(ctx)
	if ns == nil {
		return resp, nil // a namespace that does not exist holds nothing
	}
	if query != "" && len(textindex.Tokenize(query)) > 0 {
		return e.rawSearch(ctx, ns, query, rng, filter, req.Before, int(req.Limit))
	}
	needle := strings.ToLower(query)
	budget := memory.AnswerBudgetOf(ctx)
	err := e.scanRawNewest(ns, rng, req.Before, func(id memory.ID, fl store.RawFlags) (bool, error) {
		if !filter.allows(fl) {
			return true, nil
		}
		if needle == "" && uint32(len(resp.Records)) >= req.Limit {
			resp.TotalCandidates++ // counting needs only the index entry
			return true, ctx.Err()
		}
		rec, err := e.getRaw(ns, id)
		if err != nil || rec == nil {
			return err == nil, err
		}
		if needle != "" {
			text, ok := rec.Content.Text()
			if !ok || !strings.Contains(strings.ToLower(text), needle) {
				return true, nil
			}
		}
		resp.TotalCandidates++
		if uint32(len(resp.Records)) < req.Limit {
			if err := budget.Raw(rec); err != nil {
				return false, err
			}
			resp.Records = append(resp.Records, *rec)
		}
		return true, ctx.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("raw recall: %w", err)
	}
	return resp, nil
}

// rawSearch answers a raw query with index terms from the raw index: the
// filters run on the attributes stored with each posting, so only the
// returned entries are read.
func (e *Engine) rawSearch(ctx context.Context, ns *nsState, query string, rng store.RawRange, filter rawFilter, before *memory.PageCursor, limit int) (*memory.RecallRawQueryResponse, error) {
	type match struct {
		id      memory.ID
		created int64
	}
	var matches []match
	var wantSession uint64
	if rng.Session != nil {
		wantSession = sessionHash(*rng.Session)
	}
	// The bounds apply as ScanRawNewest applies them: each when set.
	start, end := int64(math.MinInt64), int64(math.MaxInt64)
	if !rng.Start.IsZero() {
		start = rng.Start.UnixNano()
	}
	if !rng.End.IsZero() {
		end = rng.End.UnixNano()
	}
	q := searchindex.Query{Terms: ns.rawText.QueryTerms(query), All: true, Filter: func(id memory.ID, a searchindex.Attrs) bool {
		if !filter.allows(store.RawFlags(a.Tag)) || a.Time < start || a.Time > end {
			return false
		}
		if rng.Session != nil && a.Group != wantSession {
			return false
		}
		return before == nil || before.Compare(time.Unix(0, a.Time), id) < 0 // else on an earlier page
	}}
	err := ns.rawText.Match(q, func(id memory.ID, a searchindex.Attrs) bool {
		matches = append(matches, match{id, a.Time})
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("raw search: %w", err)
	}
	slices.SortFunc(matches, func(a, b match) int {
		if c := cmp.Compare(b.created, a.created); c != 0 {
			return c
		}
		return compareIDs(b.id, a.id)
	})
	resp := &memory.RecallRawQueryResponse{Records: []memory.RawJournalRecord{}, TotalCandidates: uint32(len(matches))}
	for _, m := range matches {
		if len(resp.Records) >= limit {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rec, err := e.getRaw(ns, m.id)
		if err != nil {
			return nil, fmt.Errorf("raw recall: %w", err)
		}
		if rec == nil || rng.Session != nil && rec.SessionID != *rng.Session {
			resp.TotalCandidates-- // quarantined, or a 64-bit session hash collision
			continue
		}
		if err := memory.AnswerBudgetOf(ctx).Raw(rec); err != nil {
			return nil, err
		}
		resp.Records = append(resp.Records, *rec)
	}
	return resp, nil
}
