package engine

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"memsvc.dev/memsvc/pkg/engine/searchindex"
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
	// Human-mode rendering masks words of records below this score.
	maskBelow = 0.9
	maxMask   = 0.8
)

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
	recs, err := e.finishRecall(ns, memory.AnswerBudgetOf(ctx), req.Reconsolidate, cands)
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
	for i, c := range cands {
		rec := recs[i]
		// Rendered from the score the record had when recalled (see
		// finishRecall), so a faded memory comes back faded even though
		// this recall reinforces it.
		rendered := rec.Content
		if p.modes[rec.Store] == memory.ModeHuman {
			rendered = renderHuman(rec)
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
// found.
type relevance struct {
	score map[memory.ID]float64
	order []memory.ID
}

func (r *relevance) add(id memory.ID, s float64) {
	if r.score == nil {
		r.score = map[memory.ID]float64{}
	}
	if _, ok := r.score[id]; !ok {
		r.order = append(r.order, id)
	}
	r.score[id] += s
}

// eligible decides store, time and dormancy; fidelity filtering is
// counted separately because the response reports it. It reads the
// namespace's state: callers hold e.mu.
func eligible(ns *nsState, p *recallPlan, id memory.ID) (*entry, bool) {
	ent, ok := ns.st.entries[id]
	if !ok || !p.stores[ent.store] {
		return nil, false
	}
	if p.temporal != nil && !p.temporal.Contains(ent.created) {
		return nil, false
	}
	if p.before != nil && p.before.Compare(ent.created, id) >= 0 {
		return nil, false // on an earlier page
	}
	// Dormant records do not take candidate slots in human mode.
	if p.modes[ent.store] == memory.ModeHuman && !p.decayed && ent.score(p.clock) < DormantBelow {
		return nil, false
	}
	return ent, true
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

// textHitsLocked adds the full-text hits, their BM25 scores normalised by
// the best one and weighed by w.
func (e *Engine) textHitsLocked(ns *nsState, p *recallPlan, k int, w float64, found *relevance) error {
	if p.text == "" {
		return nil
	}
	hits, err := ns.text.Search(searchindex.Query{Terms: ns.text.QueryTerms(p.text), Limit: k, Filter: func(id memory.ID, _ searchindex.Attrs) bool {
		_, ok := eligible(ns, p, id)
		return ok
	}})
	if err != nil {
		return fmt.Errorf("text search: %w", err)
	}
	if len(hits) > 0 {
		top := hits[0].Score
		for _, h := range hits {
			found.add(h.ID, w*h.Score/top)
		}
	}
	return nil
}

// eligibleLocked turns what was found into candidates, dropping records
// that changed since the vector scan saw them.
func eligibleLocked(ns *nsState, p *recallPlan, found *relevance) []candidate {
	cands := make([]candidate, 0, len(found.order))
	for _, id := range found.order {
		if ent, ok := eligible(ns, p, id); ok {
			cands = append(cands, candidate{id: id, store: ent.store, score: found.score[id]})
		}
	}
	return cands
}

// weighFidelityLocked weighs human-mode candidates by their fidelity and
// drops those under the plan's minimum fidelity, counting them.
func weighFidelityLocked(ns *nsState, p *recallPlan, cands []candidate, meta *memory.QueryMetadata) []candidate {
	out := cands[:0]
	for _, c := range cands {
		ent := ns.st.entries[c.id]
		f := ent.score(p.clock)
		if p.modes[ent.store] == memory.ModeHuman {
			c.score *= 0.5 + 0.5*f
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
	ranked := slices.Clone(cands)
	slices.SortStableFunc(ranked, func(a, b candidate) int { return cmp.Compare(b.score, a.score) })
	idx := make(map[memory.ID]int, len(cands))
	for i, c := range cands {
		idx[c.id] = i
	}
	for s := 0; s < len(ranked) && s < activationSeeds; s++ {
		src := ranked[s]
		for _, a := range spreadLocked(ns, src.id, p.depth, recallMinWeight, nil) {
			if i, ok := idx[a.id]; ok {
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
			idx[a.id] = len(cands)
			cands = append(cands, candidate{id: a.id, store: ent.store, score: activationOnly * a.level * src.score, path: a.path})
		}
	}
	return cands
}

// finishRecall reads the answer's records and, when asked, reconsolidates
// them: access count and time, spaced reinforcement, and strengthening of
// the edges between records recalled together. The changes take effect in
// memory at once and are written behind (writebehind.go).
//
// Each record's fidelity (score, noise level) is presented as it was when
// recalled, before reinforcement restarts its clock: the answer reports,
// and human mode renders, what was remembered, while the counters and
// stability show this recall's reinforcement. Reinforcement applies to the
// record itself, so the next read sees the restored score.
func (e *Engine) finishRecall(ns *nsState, budget *memory.AnswerBudget, reconsolidate bool, cands []candidate) ([]*memory.MemoryRecord, error) {
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
	recs, err := e.reconsolidate(ns, budget, ids)
	if err != nil {
		return nil, err
	}
	e.recalled()
	return recs, nil
}

// reconsolidate reads and changes the records ids under their locks.
func (e *Engine) reconsolidate(ns *nsState, budget *memory.AnswerBudget, ids []memory.ID) ([]*memory.MemoryRecord, error) {
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
		together[id] = true
	}
	for _, rec := range recs {
		rec.AccessCount++
		rec.LastAccessedAt = now
		reinforced := reinforce(ns, rec)
		for j := range rec.Associations {
			a := &rec.Associations[j]
			if together[a.TargetID] {
				a.Weight += coActivationStep * (1 - a.Weight)
				a.LastCoActivation = now
			}
		}
		rec.UpdatedAt = now
		e.holdRecall(ns, rec, reinforced)
	}
	return recs, nil
}

// coActivationStep is how far an edge between two records recalled
// together moves toward weight 1.
const coActivationStep = 0.1

// renderHuman is the content as a human would remember it: records whose
// score is below maskBelow lose a deterministic share of their words
// (min(1 - score, maxMask)), chosen by hashing the record id, version and
// word position, so the same record renders the same way until it changes.
func renderHuman(rec *memory.MemoryRecord) memory.MemoryContent {
	score := rec.Fidelity.Score
	if score >= maskBelow {
		return rec.Content
	}
	share := math.Min(1-score, maxMask)
	out := rec.Content
	out.Blocks = slices.Clone(rec.Content.Blocks)
	var seed [20]byte
	copy(seed[:], rec.ID[:])
	seed[16], seed[17], seed[18], seed[19] = byte(rec.Version>>24), byte(rec.Version>>16), byte(rec.Version>>8), byte(rec.Version)
	for bi := range out.Blocks {
		b := &out.Blocks[bi]
		if b.Modality != memory.ModalityText || !utf8.Valid(b.Data) {
			continue
		}
		b.Data = memory.Bytes(maskWords(string(b.Data), share, seed[:], bi))
	}
	return out
}

// maskWords replaces exactly round(share·n) of the n words of s with "...",
// keeping the whitespace between them. The masked words are those with the
// smallest hashes of (seed, block, position), so the choice is stable for
// a given record version and spread over the text.
func maskWords(s string, share float64, seed []byte, block int) string {
	type span struct{ start, end int }
	var words []span
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			i += n
			continue
		}
		j := i
		for j < len(s) {
			r, n := utf8.DecodeRuneInString(s[j:])
			if unicode.IsSpace(r) {
				break
			}
			j += n
		}
		words = append(words, span{i, j})
		i = j
	}
	k := int(math.Round(share * float64(len(words))))
	if k <= 0 {
		return s
	}
	order := make([]int, len(words))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Compare(wordHash(seed, block, a), wordHash(seed, block, b))
	})
	masked := make([]bool, len(words))
	for _, w := range order[:k] {
		masked[w] = true
	}
	var b strings.Builder
	prev := 0
	for i, w := range words {
		b.WriteString(s[prev:w.start])
		if masked[i] {
			b.WriteString("...")
		} else {
			b.WriteString(s[w.start:w.end])
		}
		prev = w.end
	}
	b.WriteString(s[prev:])
	return b.String()
}

// wordHash maps (seed, block, word) to [0, 1) with FNV-1a, stable across
// processes and releases.
func wordHash(seed []byte, block, word int) float64 {
	h := uint64(14695981039346656037)
	mix := func(c byte) {
		h ^= uint64(c)
		h *= 1099511628211
	}
	for _, c := range seed {
		mix(c)
	}
	for _, v := range [2]int{block, word} {
		for k := 0; k < 4; k++ {
			mix(byte(v >> (8 * k)))
		}
	}
	// Finalise so neighbouring words are independent.
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return float64(h>>11) / (1 << 53)
}
