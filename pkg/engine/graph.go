package engine

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"memsvc.dev/memsvc/pkg/engine/dreamgroup"
	"memsvc.dev/memsvc/pkg/memory"
)

// RecallAssociate implements memory.Service: spreading activation from a
// record. The type filter limits which edges are followed, so it applies
// before the limit and to every hop.
func (e *Engine) RecallAssociate(ctx context.Context, req *memory.RecallAssociateRequest) (*memory.RecallAssociateResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	depth := int(req.Depth)
	switch {
	case depth == 0:
		depth = 2
	case depth > memory.MaxAssociateDepth:
		return nil, memory.Invalid("depth", "%d exceeds the maximum of %d", depth, memory.MaxAssociateDepth)
	}
	if req.Limit > memory.MaxAssociateLimit {
		return nil, memory.Invalid("limit", "%d exceeds the maximum of %d", req.Limit, memory.MaxAssociateLimit)
	}
	if req.MinWeight < 0 || req.MinWeight > 1 {
		return nil, memory.Invalid("min_weight", "must be between 0 and 1 (got %v)", req.MinWeight)
	}
	var types map[memory.AssociationType]bool
	if req.AssociationTypes != nil {
		types = map[memory.AssociationType]bool{}
		for i, t := range req.AssociationTypes {
			if !t.Valid() {
				return nil, memory.Invalid(fmt.Sprintf("association_types[%d]", i), "unknown association type")
			}
			types[t] = true
		}
	}
	e.big.RLock()
	defer e.big.RUnlock()
	ns := e.space(ctx)
	if ns == nil {
		return nil, memory.NotFound(req.RecordID)
	}
	e.mu.RLock()
	_, ok := ns.st.entries[req.RecordID]
	var acts []activated
	if ok {
		acts = spreadLocked(ns, req.RecordID, depth, req.MinWeight, types)
	}
	e.mu.RUnlock()
	if !ok {
		return nil, memory.NotFound(req.RecordID)
	}
	resp := &memory.RecallAssociateResponse{Memories: []memory.RecalledMemory{}, TotalCandidates: uint32(len(acts))}
	if len(acts) > int(req.Limit) {
		acts = acts[:req.Limit]
	}
	budget := memory.AnswerBudgetOf(ctx)
	for _, a := range acts {
		rec, err := e.get(ns, a.id)
		if err != nil {
			return nil, err
		}
		if err := budget.Recalled(rec); err != nil {
			return nil, err
		}
		e.present(ns, rec)
		resp.Memories = append(resp.Memories, memory.RecalledMemory{
			Record: *rec, RelevanceScore: a.level, ActivationPath: a.path, RenderedContent: rec.Content,
		})
	}
	return resp, nil
}

// RecallTimeline implements memory.Service: records of the persistent
// stores created in the (inclusive) range, in time buckets. Weeks start on
// Monday 00:00 UTC (ISO weeks); months are calendar months in UTC.
func (e *Engine) RecallTimeline(ctx context.Context, req *memory.RecallTimelineRequest) (*memory.RecallTimelineResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if !req.Granularity.Valid() {
		return nil, memory.Invalid("granularity", "want one of minute, hour, day, week, month")
	}
	if req.Range.Start.IsZero() || req.Range.End.IsZero() {
		return nil, memory.Invalid("range", "start and end are required")
	}
	if err := memory.ValidateTemporalRange("range", &req.Range); err != nil {
		return nil, err
	}
	resp := &memory.RecallTimelineResponse{Buckets: []memory.TimelineBucket{}}
	e.big.RLock()
	defer e.big.RUnlock()
	ns := e.space(ctx)
	if ns == nil {
		return resp, nil // a namespace that does not exist holds nothing
	}
	c := ns.clock()
	type hit struct {
		id      memory.ID
		created time.Time
	}
	var hits []hit
	e.mu.RLock()
	for id, ent := range ns.st.entries {
		if !ent.store.Persistent() || !req.Range.Contains(ent.created) {
			continue
		}
		if req.After != nil && req.After.Compare(ent.created, id) <= 0 {
			continue // on an earlier page
		}
		if req.MinFidelity != nil && ent.score(c) < *req.MinFidelity {
			continue
		}
		hits = append(hits, hit{id, ent.created})
	}
	e.mu.RUnlock()
	slices.SortFunc(hits, func(a, b hit) int {
		if x := a.created.Compare(b.created); x != 0 {
			return x
		}
		if compareIDs(a.id, b.id) < 0 {
			return -1
		}
		return 1
	})
	limit, returned := req.TimelineLimit(), 0
	budget := memory.AnswerBudgetOf(ctx)
	for _, h := range hits {
		rec, err := e.get(ns, h.id)
		if err != nil {
			return nil, err
		}
		if req.EmotionFilter != nil && !emotionMatches(rec.Emotion, *req.EmotionFilter) {
			continue
		}
		if returned == limit {
			resp.Truncated = true
			break
		}
		if err := budget.Recalled(rec); err != nil {
			return nil, err
		}
		returned++
		e.present(ns, rec)
		start, end := bucket(h.created, req.Granularity)
		if n := len(resp.Buckets); n == 0 || !resp.Buckets[n-1].Start.Equal(start) {
			resp.Buckets = append(resp.Buckets, memory.TimelineBucket{Start: start, End: end, Memories: []memory.RecalledMemory{}})
		}
		b := &resp.Buckets[len(resp.Buckets)-1]
		b.Memories = append(b.Memories, memory.RecalledMemory{Record: *rec, RelevanceScore: rec.Fidelity.Score, RenderedContent: rec.Content})
		b.Count++
	}
	return resp, nil
}

// bucket returns the time bucket of t.
func bucket(t time.Time, g memory.TimeGranularity) (time.Time, time.Time) {
	t = t.UTC()
	switch g {
	case memory.GranularityMinute:
		s := t.Truncate(time.Minute)
		return s, s.Add(time.Minute)
	case memory.GranularityHour:
		s := t.Truncate(time.Hour)
		return s, s.Add(time.Hour)
	case memory.GranularityDay:
		s := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		return s, s.AddDate(0, 0, 1)
	case memory.GranularityWeek:
		d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		s := d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
		return s, s.AddDate(0, 0, 7)
	default:
		s := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
		return s, s.AddDate(0, 1, 0)
	}
}

// emotionMatches keeps records whose eight Plutchik axes point the same way
// as the filter's (cosine above 0.5). A zero vector matches nothing.
func emotionMatches(rec, filter memory.EmotionVector) bool {
	a, b := rec.Axes(), filter.Axes()
	var dot, na, nb float64
	for i := range a {
		dot += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	if na < 1e-12 || nb < 1e-12 {
		return false
	}
	return dot/(math.Sqrt(na)*math.Sqrt(nb)) > 0.5
}

// RecallGraph implements memory.Service: the association graph around a
// record, or around the first records of each persistent store.
func (e *Engine) RecallGraph(ctx context.Context, req *memory.RecallGraphRequest) (*memory.RecallGraphResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	limit := int(req.LimitNodes)
	var types map[string]bool
	if req.EdgeTypes != nil {
		types = map[string]bool{}
		for _, t := range req.EdgeTypes {
			types[strings.ToLower(strings.TrimSpace(t))] = true
		}
	}
	resp := &memory.RecallGraphResponse{Nodes: []memory.GraphNode{}, Edges: []memory.GraphEdge{}, MetaEdges: []memory.MetaEdge{}}
	e.big.RLock()
	defer e.big.RUnlock()
	ns := e.space(ctx)
	if ns == nil {
		return resp, nil // a namespace that does not exist holds nothing
	}
	type item struct {
		id    memory.ID
		depth int
	}
	var queue []item
	e.mu.RLock()
	if req.CenterID != nil {
		queue = append(queue, item{*req.CenterID, 0})
	} else {
		// Seeds: the oldest records of each persistent store.
		for _, st := range memory.PersistentStores() {
			var ids []memory.ID
			for id, ent := range ns.st.entries {
				if ent.store == st {
					ids = append(ids, id)
				}
			}
			slices.SortFunc(ids, compareIDs)
			for _, id := range ids {
				if len(queue) >= limit {
					break
				}
				queue = append(queue, item{id, 0})
			}
		}
	}
	e.mu.RUnlock()
	visited := map[memory.ID]bool{}
	for len(queue) > 0 && len(resp.Nodes) < limit {
		it := queue[0]
		queue = queue[1:]
		if visited[it.id] {
			continue
		}
		visited[it.id] = true
		rec, err := e.get(ns, it.id)
		if err != nil {
			continue // an unknown center (or target) yields no node
		}
		e.present(ns, rec)
		node := memory.GraphNode{ID: rec.ID, Store: rec.Store, Summary: nodeSummary(rec), Fidelity: rec.Fidelity.Score}
		if req.IncludeMeta {
			m := rec.Meta
			node.Meta = &m
			for _, me := range rec.Meta.ContextEdges {
				if me.SourceID == nil {
					id := rec.ID
					me.SourceID = &id
				}
				resp.MetaEdges = append(resp.MetaEdges, me)
			}
		}
		resp.Nodes = append(resp.Nodes, node)
		if it.depth >= int(req.Depth) {
			continue
		}
		for _, a := range rec.Associations {
			if types != nil && !types[a.AssociationType.String()] {
				continue
			}
			if len(resp.Edges) >= 10*limit {
				break
			}
			resp.Edges = append(resp.Edges, memory.GraphEdge{Source: rec.ID, Target: a.TargetID, EdgeType: a.AssociationType, Weight: a.Weight})
			if !visited[a.TargetID] {
				queue = append(queue, item{a.TargetID, it.depth + 1})
			}
		}
	}
	resp.TotalNodes = uint32(len(resp.Nodes))
	return resp, nil
}

// nodeSummary is the summary, else the first 80 bytes of the text.
func nodeSummary(rec *memory.MemoryRecord) *string {
	if rec.Content.Summary != nil {
		return rec.Content.Summary
	}
	text, ok := rec.Content.Text()
	if !ok {
		return nil
	}
	s := dreamgroup.Truncate(text, 80)
	return &s
}
