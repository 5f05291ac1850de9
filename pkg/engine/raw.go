package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

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
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(req.Records) > memory.MaxBatchRecords {
		return nil, memory.Invalid("records", "batch size %d exceeds the maximum of %d; split it into smaller batches", len(req.Records), memory.MaxBatchRecords)
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
	if clientIDs {
		// Checking for an id and writing it must not interleave with
		// another writer of the same id.
		e.rawMu.Lock()
		defer e.rawMu.Unlock()
	}
	resp := &memory.EncodeBatchStoreRawResponse{Results: make([]memory.EncodeStoreRawResponse, len(recs))}
	seen := make(map[memory.ID]int, len(recs))
	b := e.db.NewBatch()
	defer b.Close()
	var added []*memory.RawJournalRecord
	for i, rec := range recs {
		out := rec
		if req.Records[i].RecordID != nil {
			if j, ok := seen[rec.ID]; ok {
				out = recs[j]
				resp.Results[i] = rawResponse(out, true)
				continue
			}
			old, err := e.db.GetRaw(rec.ID)
			switch {
			case err == nil:
				resp.Results[i] = rawResponse(old, true)
				continue
			case !errors.Is(err, store.ErrNotFound):
				return nil, fmt.Errorf("check raw record %s: %w", rec.ID, err)
			}
		}
		seen[rec.ID] = i
		b.PutRaw(rec, nil)
		added = append(added, rec)
		resp.Results[i] = rawResponse(rec, false)
	}
	if len(added) > 0 {
		if err := b.Commit(); err != nil {
			return nil, fmt.Errorf("write raw records: %w", err)
		}
	}
	e.mu.Lock()
	for _, rec := range added {
		e.raw.total++
		if pendingDream(store.FlagsOf(rec)) {
			e.raw.pending++
		}
	}
	e.mu.Unlock()
	return resp, nil
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

// RecallRaw implements memory.Service: entries matching the session, time,
// visibility and secrecy filters (and every word of the query), newest
// first.
func (e *Engine) RecallRaw(ctx context.Context, req *memory.RecallRawQueryRequest) (*memory.RecallRawQueryResponse, error) {
	if err := ctx.Err(); err != nil {
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
	var terms []string
	if req.Query != nil {
		terms = strings.Fields(strings.ToLower(*req.Query))
	}
	filter := newRawFilter(req.IncludePrivateScratch, req.IncludeSealed, req.SecrecyLevels)
	resp := &memory.RecallRawQueryResponse{Records: []memory.RawJournalRecord{}}
	err := e.db.ScanRawNewest(rng, func(id memory.ID, fl store.RawFlags) (bool, error) {
		if !filter.allows(fl) {
			return true, nil
		}
		need := len(terms) > 0 || uint32(len(resp.Records)) < req.Limit
		if !need {
			resp.TotalCandidates++
			return true, ctx.Err()
		}
		rec, err := e.db.GetRaw(id)
		if err != nil {
			return false, err
		}
		if !matchesTerms(rec, terms) {
			return true, nil
		}
		resp.TotalCandidates++
		if uint32(len(resp.Records)) < req.Limit {
			resp.Records = append(resp.Records, *rec)
		}
		return true, ctx.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("raw recall: %w", err)
	}
	return resp, nil
}

// matchesTerms reports whether the entry's text contains every term,
// ignoring case.
func matchesTerms(rec *memory.RawJournalRecord, terms []string) bool {
	if len(terms) == 0 {
		return true
	}
	text, ok := rec.Content.Text()
	if !ok {
		return false
	}
	text = strings.ToLower(text)
	for _, t := range terms {
		if !strings.Contains(text, t) {
			return false
		}
	}
	return true
}
