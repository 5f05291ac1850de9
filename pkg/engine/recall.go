package engine

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"memsvc.dev/memsvc/pkg/engine/idtable"
	"memsvc.dev/memsvc/pkg/engine/vecindex"
	"memsvc.dev/memsvc/pkg/memory"
)

// Ranking constants (DESIGN §5).
const (
	textWeight   = 0.6 // of relevance when both text and vector cues are given
	vectorWeight = 0.4
	// Spreading activation from the best candidates: records reached only
	// through associations score activationOnly·activation, candidates
	// that are also reached get activationBoost·activation on top.
	activationOnly  = 0.5
	activationBoost = 0.3
	activationSeeds = 3    // best candidates activation spreads from
	recallMinWeight = 0.05 // weakest edge recall activation follows
	// Candidates fetched per cue: enough beyond the limit for activation
	// and fidelity weighting to reorder.
	candidateFactor = 3
	candidateExtra  = 20
	// UseFactor bounds what a record's use history (its fidelity, which
	// reinforcement restores) does to its rank in human mode: relevance is
	// multiplied by useWeight(f), between 1/UseFactor at fidelity 0 and 1
	// at fidelity 1, so a less relevant record never passes a more
	// relevant one whose relevance is UseFactor times its own or more.
	// Within that band fidelity orders records of near-equal relevance.
	UseFactor = 1.05
)

// useWeight is the human-mode multiplier of relevance at fidelity f: linear
// from 1/UseFactor at 0 to 1 at 1.
func useWeight(f float64) float64 {
	f = min(max(f, 0), 1)
	return 1/UseFactor + (1-1/UseFactor)*f
}

// recallPlan is a recall request after validation and defaults.
type recallPlan struct {
	text      string
	embedding []float32
	stores    [memory.StoreWorking + 1]bool
	storeList []memory.StoreType
	temporal  *memory.TemporalRange
	before    *memory.PageCursor
	modes     [memory.StoreWorking + 1]memory.RecallMode
	minFid    *float64
	decayed   bool
	limit     int
	depth     int
	clock     float64
}

// RecallQuery implements memory.Service.
func (e *Engine) RecallQuery(ctx context.Context, req *memory.RecallQueryRequest) (*memory.RecallQueryResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	e.big.RLock()
	defer e.big.RUnlock()
	ns := e.space(ctx)
	p, err := e.planRecall(ns, req)
	if err != nil {
		return nil, err
	}
	if ns == nil {
		// A namespace that does not exist holds nothing.
		return &memory.RecallQueryResponse{Memories: []memory.RecalledMemory{}, QueryMetadata: p.metadata()}, nil
	}

	cands, meta, err := e.candidates(ns, p)
	if err != nil {
		return nil, err
	}
	resp := &memory.RecallQueryResponse{Memories: []memory.RecalledMemory{}, QueryMetadata: meta}
	resp.TotalCandidates = uint32(len(cands))
	ns.recalls.Add(1)
	if p.limit == 0 || len(cands) == 0 {
		return resp, nil
	}
	if len(cands) > p.limit {
		cands = cands[:p.limit]
	}
	recs, err := e.finishRecall(ns, memory.AnswerBudgetOf(ctx), req.Reconsolidate, &p.modes, cands)
	if err != nil {
		return nil, err
	}
	if p.text != "" || p.embedding != nil {
		// Evolution observes the fidelity each record had when recalled.
		seen := map[memory.StoreType][]float64{}
		for _, rec := range recs {
			seen[rec.Store] = append(seen[rec.Store], rec.Fidelity.Score)
		}
		e.observeRecall(ns, p.storeList, seen)
	}
	resp.Memories = make([]memory.RecalledMemory, 0, len(cands))
	var words *wordClasser // made for the first record human mode masks
	for i, c := range cands {
		rec := recs[i]
		// Rendered from the score the record had when recalled (see
		// finishRecall), so a faded memory comes back faded even though
		// this recall reinforces it.
		rendered := rec.Content
		if p.modes[rec.Store] == memory.ModeHuman && maskedShare(rec.Fidelity.Score) > 0 {
			if words == nil {
				words = newWordClasser(p.text, e.function)
			}
			rendered = renderHuman(rec, words)
		}
		resp.Memories = append(resp.Memories, memory.RecalledMemory{
			Record: *rec, RelevanceScore: c.score, ActivationPath: c.path, RenderedContent: rendered,
		})
	}
	return resp, nil
}

// planRecall validates a recall in namespace ns (nil: one that does not
// exist) and works out its plan.
func (e *Engine) planRecall(ns *nsState, req *memory.RecallQueryRequest) (*recallPlan, error) {
	p := &recallPlan{limit: int(req.Limit), depth: int(req.ActivationDepth), minFid: req.MinFidelity,
		decayed: req.IncludeDecayed, temporal: req.Cue.Temporal, before: req.Before}
	if ns != nil {
		p.clock = ns.clock()
	}
	if req.Cue.Text != nil {
		p.text = strings.TrimSpace(*req.Cue.Text)
	}
	if err := memory.ValidateEmbedding("cue.embedding", req.Cue.Embedding); err != nil {
		return nil, err
	}
	p.embedding = req.Cue.Embedding
	if req.Cue.Image != nil {
		if err := checkCueBlock("cue.image", req.Cue.Image, memory.MaxImageBlockBytes); err != nil {
			return nil, err
		}
		if p.embedding == nil {
			return nil, memory.Errorf(memory.CodeModalityUnsupported, "cue.image: image recall needs an embedding of the image in cue.embedding; memsvc does not compute embeddings")
		}
	}
	if req.Cue.Audio != nil {
		if err := checkCueBlock("cue.audio", req.Cue.Audio, memory.MaxAudioBlockBytes); err != nil {
			return nil, err
		}
		return nil, memory.Errorf(memory.CodeModalityUnsupported, "cue.audio: audio recall needs a transcript; send it as cue.text")
	}
	if err := memory.ValidateTemporalRange("cue.temporal", p.temporal); err != nil {
		return nil, err
	}
	if p.minFid != nil && (math.IsNaN(*p.minFid) || *p.minFid < 0 || *p.minFid > 1) {
		return nil, memory.Invalid("min_fidelity", "must be between 0 and 1 (got %v)", *p.minFid)
	}
	p.storeList = memory.AllStores()
	if req.Stores != nil {
		p.storeList = nil
		for i, st := range req.Stores {
			if !st.Valid() {
				return nil, memory.Invalid(fmt.Sprintf("stores[%d]", i), "want one of %s", memory.StoreTypeNames())
			}
			if !p.stores[st] {
				p.storeList = append(p.storeList, st)
			}
			p.stores[st] = true
		}
	} else {
		for _, st := range memory.AllStores() {
			p.stores[st] = true
		}
	}
	if req.RecallMode != nil {
		if !req.RecallMode.Valid() {
			return nil, memory.Invalid("recall_mode", "want human or perfect")
		}
		for _, st := range memory.AllStores() {
			p.modes[st] = *req.RecallMode
		}
	} else {
		// Not named: each store's mode as set with set-mode.
		p.modes = e.modes(ns)
	}
	return p, nil
}

// metadata is the query metadata of the plan before anything was found.
func (p *recallPlan) metadata() *memory.QueryMetadata {
	meta := &memory.QueryMetadata{StoresSearched: slices.Clone(p.storeList)}
	if meta.StoresSearched == nil {
		meta.StoresSearched = []memory.StoreType{}
	}
	return meta
}

// checkCueBlock checks the size of an image or audio cue.
func checkCueBlock(field string, data []byte, max int) error {
	switch {
	case len(data) == 0:
		return memory.Invalid(field, "must not be empty")
	case len(data) > max:
		return memory.Errorf(memory.CodeContentTooLarge, "%s: %d bytes exceeds the %d-byte limit", field, len(data), max)
	}
	return nil
}

// candidate is a record on its way into a recall answer.
type candidate struct {
	id    memory.ID
	store memory.StoreType
	score float64
	path  []memory.ID
}

// candidates finds, scores, filters and orders everything the plan could
// return. It reads only the in-memory indexes and posting lists, in steps:
// the vector hits (outside the engine's lock, see vectorHits), then under
// one read lock the text hits or, without a query, the most recent
// records; the eligible ones become candidates, activation spreads from
// the best of them, fidelity weighs and filters them, and a query's
// candidates are ranked.
//
// Everything it reads is namespace ns's: its indexes, entries and
// associations. Nothing on this path scans or sizes by another namespace.
func (e *Engine) candidates(ns *nsState, p *recallPlan) ([]candidate, *memory.QueryMetadata, error) {
	meta := p.metadata()
	k := p.limit*candidateFactor + candidateExtra
	vecHits := e.vectorHits(ns, p, k)

	e.mu.RLock()
	defer e.mu.RUnlock()
	var found relevance
	wText, wVec := p.weights()
	if err := e.textHitsLocked(ns, p, k, wText, &found); err != nil {
		return nil, nil, err
	}
	for _, h := range vecHits {
		found.add(h.ID, wVec*h.Score)
	}
	if !p.hasQuery() {
		for _, id := range recentLocked(ns, p, k) {
			found.add(id, 1)
		}
	}
	meta.TotalRecordsScanned = uint32(len(found.order))

	cands := eligibleLocked(ns, p, &found)
	if p.depth > 0 && p.hasQuery() && len(cands) > 0 {
		cands = activateLocked(ns, p, cands)
	}
	cands = weighFidelityLocked(ns, p, cands, meta)
	if p.hasQuery() {
		// Without a query the order is recency; keep it.
		slices.SortStableFunc(cands, func(a, b candidate) int { return byScoreThenID(a.score, b.score, a.id, b.id) })
	}
	return cands, meta, nil
}

// hasQuery reports whether the plan searches by text or vector; without
// either a recall lists the most recent records.
func (p *recallPlan) hasQuery() bool { return p.text != "" || p.embedding != nil }

// weights are the shares of text and vector relevance: each counts fully
// alone, and they are mixed when both cues are given.
func (p *recallPlan) weights() (text, vector float64) {
	if p.text != "" && p.embedding != nil {
		return textWeight, vectorWeight
	}
	return 1, 1
}

// relevance adds up what each record scores, in the order records are
// found: score[i] is what order[i] scored.
type relevance struct {
	order []memory.ID
	score []float64
	at    idtable.Table // indexes of order
}

func (r *relevance) add(id memory.ID, s float64) {
	if r.order == nil {
		r.at = idtable.New(64)
	}
	i, ok := r.at.Find(r.order, id)
	if !ok {
		i = len(r.order)
		r.order = append(r.order, id)
		r.score = append(r.score, 0)
		r.at.Insert(r.order, i)
	}
	r.score[i] += s
}

// eligible decides store, time and dormancy; fidelity filtering is
// counted separately because the response reports it. It reads the
// namespace's state: callers hold e.mu.
func eligible(ns *nsState, p *recallPlan, id memory.ID) (*entry, bool) {
	ent, ok := ns.st.entries[id]
	if !ok || !p.admits(id, ent) {
		return nil, false
	}
	return ent, true
}

// admits is eligible for the record id whose entry is ent. Text recall
// decides most records from their marks instead (marks.go), which must
// give the same answers: what this reads of ent is what markOf keeps.
func (p *recallPlan) admits(id memory.ID, ent *entry) bool {
	if !p.stores[ent.store] {
		return false
	}
	if p.temporal != nil && !p.temporal.Contains(ent.created) {
		return false
	}
	if p.before != nil && p.before.Compare(ent.created, id) >= 0 {
		return false // on an earlier page
	}
	// Dormant records do not take candidate slots in human mode.
	return p.modes[ent.store] != memory.ModeHuman || p.decayed || ent.score(p.clock) >= DormantBelow
}

// vectorHits runs the vector scan, the long part of a search at scale. It
// takes the engine's read lock a chunk of rows at a time, so writes are
// not held up behind it; eligibleLocked checks the hits again.
func (e *Engine) vectorHits(ns *nsState, p *recallPlan, k int) []vecindex.Hit {
	if p.embedding == nil {
		return nil
	}
	return ns.vectors.Search(vecindex.Query{Vector: p.embedding, K: k, Lock: e.mu.RLocker(), Filter: func(id memory.ID) bool {
		_, ok := eligible(ns, p, id)
		return ok
	}})
}

// textHitsLocked adds the text hits of the ranking stage (textrank.go:
// query analysis, BM25, proximity, conversation neighbours), their scores
// normalised by the best one and weighed by w. A hit need not contain a
// query word: the record after one that does shares its evidence.
func (e *Engine) textHitsLocked(ns *nsState, p *recallPlan, k int, w float64, found *relevance) error {
	if p.text == "" {
		return nil
	}
	hits, err := e.ranking.rankAdmitted(ns.text, e.function, conversation{ns.st}, p.text, k, func(id memory.ID) bool {
		_, ok := eligible(ns, p, id)
		return ok
	}, admitLocked(ns, p))
	if err != nil {
		return err
	}
	if len(hits) > 0 {
		top := hits[0].Score
		for _, h := range hits {
			found.add(h.Doc, w*h.Score/top)
		}
	}
	return nil
}

// eligibleLocked turns what was found into candidates, dropping records
// that changed since the vector scan saw them.
func eligibleLocked(ns *nsState, p *recallPlan, found *relevance) []candidate {
	cands := make([]candidate, 0, len(found.order))
	for i, id := range found.order {
		if ent, ok := eligible(ns, p, id); ok {
			cands = append(cands, candidate{id: id, store: ent.store, score: found.score[i]})
		}
	}
	return cands
}

// weighFidelityLocked weighs human-mode candidates by their fidelity
// (useWeight, a bounded factor) and drops those under the plan's minimum
// fidelity, counting them.
func weighFidelityLocked(ns *nsState, p *recallPlan, cands []candidate, meta *memory.QueryMetadata) []candidate {
	out := cands[:0]
	for _, c := range cands {
		ent := ns.st.entries[c.id]
		f := ent.score(p.clock)
		if p.modes[ent.store] == memory.ModeHuman {
			c.score *= useWeight(f)
		}
		if p.minFid != nil && f < *p.minFid && !p.decayed {
			meta.FidelityFiltered++
			continue
		}
		out = append(out, c)
	}
	return out
}

// byScoreThenID orders by descending score, then ascending id.
func byScoreThenID(as, bs float64, a, b memory.ID) int {
	if c := cmp.Compare(bs, as); c != 0 {
		return c
	}
	return compareIDs(a, b)
}

// recentLocked lists up to k eligible records, newest first, from the
// namespace's recency order (it reads the newest entries only).
func recentLocked(ns *nsState, p *recallPlan, k int) []memory.ID {
	if k <= 0 {
		return nil
	}
	out := make([]memory.ID, 0, k)
	ns.st.recent.newest(ns.st, func(id memory.ID) bool {
		if _, ok := eligible(ns, p, id); ok {
			out = append(out, id)
		}
		return len(out) < k
	})
	return out
}

// activateLocked spreads activation from the best candidates and merges the
// activated records in.
func activateLocked(ns *nsState, p *recallPlan, cands []candidate) []candidate {
	seeds := bestSeeds(cands)
	ids := make([]memory.ID, len(cands), len(cands)+16)
	idx := idtable.New(cap(ids)) // indexes of ids, which are those of cands
	for i, c := range cands {
		ids[i] = c.id
		idx.Insert(ids, i)
	}
	for _, src := range seeds {
		for _, a := range spreadLocked(ns, src.id, p.depth, recallMinWeight, nil) {
			if i, ok := idx.Find(ids, a.id); ok {
				cands[i].score += activationBoost * a.level * src.score
				if cands[i].path == nil {
					cands[i].path = a.path
				}
				continue
			}
			ent, ok := eligible(ns, p, a.id)
			if !ok {
				continue
			}
			ids = append(ids, a.id)
			idx.Insert(ids, len(cands))
			cands = append(cands, candidate{id: a.id, store: ent.store, score: activationOnly * a.level * src.score, path: a.path})
		}
	}
	return cands
}

// bestSeeds returns copies of the activationSeeds best candidates, best
// first, the earlier of equal scores first: the head of cands sorted
// stably by descending score.
func bestSeeds(cands []candidate) []candidate {
	n := min(activationSeeds, len(cands))
	var picked [activationSeeds]int
	out := make([]candidate, 0, n)
	for len(out) < n {
		best := -1
		for i := range cands {
			if slices.Contains(picked[:len(out)], i) {
				continue
			}
			if best < 0 || cands[i].score > cands[best].score {
				best = i
			}
		}
		picked[len(out)] = best
		out = append(out, cands[best])
	}
	return out
}

// finishRecall reads the answer's records and, when asked, reconsolidates
// them: access count and time, spaced reinforcement, and strengthening of
// the edges between records recalled together in human mode (modes holds
// the recall mode of each store). The changes take effect in memory at
// once and are written behind (writebehind.go).
//
// Perfect mode learns no associations: co-activation raises the edge
// weights spreading activation follows, so a perfect-mode recall that
// strengthened them would rank the next question by the questions asked
// before it. Its answer depends on the records alone.
//
// Each record's fidelity (score, noise level) is presented as it was when
// recalled, before reinforcement restarts its clock: the answer reports,
// and human mode renders, what was remembered, while the counters and
// stability show this recall's reinforcement. Reinforcement applies to the
// record itself, so the next read sees the restored score.
func (e *Engine) finishRecall(ns *nsState, budget *memory.AnswerBudget, reconsolidate bool, modes *[memory.StoreWorking + 1]memory.RecallMode, cands []candidate) ([]*memory.MemoryRecord, error) {
	ids := make([]memory.ID, len(cands))
	for i, c := range cands {
		ids[i] = c.id
	}
	if !reconsolidate {
		recs := make([]*memory.MemoryRecord, len(ids))
		for i, id := range ids {
			rec, err := e.get(ns, id)
			if err != nil {
				return nil, err
			}
			if err := budget.Recalled(rec); err != nil {
				return nil, err
			}
			e.present(ns, rec)
			recs[i] = rec
		}
		return recs, nil
	}
	if err := e.makeRoom(); err != nil {
		return nil, err
	}
	return e.reconsolidate(ns, budget, modes, ids)
}

// reconsolidate reads and changes the records ids under their locks;
// modes holds the recall mode of each store.
func (e *Engine) reconsolidate(ns *nsState, budget *memory.AnswerBudget, modes *[memory.StoreWorking + 1]memory.RecallMode, ids []memory.ID) ([]*memory.MemoryRecord, error) {
	defer e.lockRecords(ids)()
	now := e.now()
	recs := make([]*memory.MemoryRecord, len(ids))
	together := make(map[memory.ID]bool, len(ids))
	for i, id := range ids {
		rec, err := e.get(ns, id)
		if err != nil {
			return nil, err
		}
		if err := budget.Recalled(rec); err != nil {
			return nil, err
		}
		e.present(ns, rec) // as recalled: before reinforce moves its clock
		recs[i] = rec
		if modes[rec.Store] == memory.ModeHuman {
			together[id] = true
		}
	}
	reinforced := make([]bool, len(recs))
	for i, rec := range recs {
		rec.AccessCount++
		rec.LastAccessedAt = now
		reinforced[i] = reinforce(ns, rec)
		for j := range rec.Associations {
			a := &rec.Associations[j]
			if together[rec.ID] && together[a.TargetID] {
				coActivate(a, now)
			}
		}
		rec.UpdatedAt = now
	}
	e.holdRecalls(ns, recs, reinforced)
	return recs, nil
}

// Co-activation strengthens the edge between two records recalled
// together in human mode: it moves coActivationStep of the way toward
// weight 1, by at most a factor UseFactor, and at most once per
// coActivationSpacing (from the edge's last co-activation, or its
// creation). Like reinforcement it is spaced, so questions asked in a
// row do not teach the graph again and again what the first of them
// taught it: within any hour an edge's weight, and so what spreading
// activation passes along it, changes by at most UseFactor, and a recall
// ranks by what the graph held before the questions that preceded it
// within a factor of UseFactor per hop (TestReconsolidationCostsAtMostAPoint,
// TestCoActivationBounded).
const (
	coActivationStep    = 0.1
	coActivationSpacing = time.Hour
)

// coActivate strengthens a, an edge between two records recalled
// together at now.
func coActivate(a *memory.Association, now time.Time) {
	last := a.LastCoActivation
	if last.IsZero() {
		last = a.CreatedAt
	}
	if now.Sub(last) < coActivationSpacing {
		return
	}
	a.Weight = min(a.Weight+coActivationStep*(1-a.Weight), UseFactor*a.Weight, 1)
	a.LastCoActivation = now
}
