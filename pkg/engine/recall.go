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

	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/engine/textindex"
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
	p, err := e.planRecall(req)
	if err != nil {
		return nil, err
	}
	e.big.RLock()
	defer e.big.RUnlock()

	cands, meta, err := e.candidates(p)
	if err != nil {
		return nil, err
	}
	resp := &memory.RecallQueryResponse{Memories: []memory.RecalledMemory{}, QueryMetadata: meta}
	resp.TotalCandidates = uint32(len(cands))
	e.recalls.Add(1)
	if p.limit == 0 || len(cands) == 0 {
		return resp, nil
	}
	if len(cands) > p.limit {
		cands = cands[:p.limit]
	}
	recs, err := e.finishRecall(memory.AnswerBudgetOf(ctx), req.Reconsolidate, cands)
	if err != nil {
		return nil, err
	}
	if p.text != "" || p.embedding != nil {
		// Evolution observes the fidelity each record had when recalled.
		seen := map[memory.StoreType][]float64{}
		for _, rec := range recs {
			seen[rec.Store] = append(seen[rec.Store], rec.Fidelity.Score)
		}
		e.observeRecall(p.storeList, seen)
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

func (e *Engine) planRecall(req *memory.RecallQueryRequest) (*recallPlan, error) {
	p := &recallPlan{limit: int(req.Limit), depth: int(req.ActivationDepth), minFid: req.MinFidelity,
		decayed: req.IncludeDecayed, temporal: req.Cue.Temporal, clock: e.clock()}
	if req.Cue.Text != nil {
		p.text = strings.TrimSpace(*req.Cue.Text)
	}
	if err := memory.ValidateEmbedding("cue.embedding", req.Cue.Embedding); err != nil {
		return nil, err
	}
	p.embedding = req.Cue.Embedding
	if req.Cue.Image != nil {
		switch {
		case len(req.Cue.Image) == 0:
			return nil, memory.Invalid("cue.image", "must not be empty")
		case len(req.Cue.Image) > memory.MaxImageBlockBytes:
			return nil, memory.Errorf(memory.CodeContentTooLarge, "cue.image: %d bytes exceeds the %d-byte limit", len(req.Cue.Image), memory.MaxImageBlockBytes)
		case p.embedding == nil:
			return nil, memory.Errorf(memory.CodeModalityUnsupported, "cue.image: image recall needs an embedding of the image in cue.embedding; memsvc does not compute embeddings")
		}
	}
	if req.Cue.Audio != nil {
		switch {
		case len(req.Cue.Audio) == 0:
			return nil, memory.Invalid("cue.audio", "must not be empty")
		case len(req.Cue.Audio) > memory.MaxAudioBlockBytes:
			return nil, memory.Errorf(memory.CodeContentTooLarge, "cue.audio: %d bytes exceeds the %d-byte limit", len(req.Cue.Audio), memory.MaxAudioBlockBytes)
		default:
			return nil, memory.Errorf(memory.CodeModalityUnsupported, "cue.audio: audio recall needs a transcript; send it as cue.text")
		}
	}
	if err := memory.ValidateTemporalRange("cue.temporal", p.temporal); err != nil {
		return nil, err
	}
	if p.minFid != nil && (math.IsNaN(*p.minFid) || *p.minFid < 0 || *p.minFid > 1) {
		return nil, memory.Invalid("min_fidelity", "must be between 0 and 1 (got %v)", *p.minFid)
	}
	p.storeList = memory.AllStores
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
		for _, st := range memory.AllStores {
			p.stores[st] = true
		}
	}
	if req.RecallMode != nil {
		if !req.RecallMode.Valid() {
			return nil, memory.Invalid("recall_mode", "want human or perfect")
		}
		for _, st := range memory.AllStores {
			p.modes[st] = *req.RecallMode
		}
	} else {
		// Not named: each store's mode as set with set-mode.
		p.modes = e.modes()
	}
	return p, nil
}

// candidate is a record on its way into a recall answer.
type candidate struct {
	id    memory.ID
	store memory.StoreType
	score float64
	path  []memory.ID
}

// candidates finds, scores, filters and orders everything the plan could
// return. It reads only the in-memory indexes and posting lists.
func (e *Engine) candidates(p *recallPlan) ([]candidate, *memory.QueryMetadata, error) {
	meta := &memory.QueryMetadata{StoresSearched: slices.Clone(p.storeList)}
	if meta.StoresSearched == nil {
		meta.StoresSearched = []memory.StoreType{}
	}
	// eligible decides store and time; fidelity filtering is counted
	// separately because the response reports it. It reads the engine's
	// state: call it with e.mu held.
	eligible := func(id memory.ID) (*entry, bool) {
		ent, ok := e.st.entries[id]
		if !ok || !p.stores[ent.store] {
			return nil, false
		}
		if p.temporal != nil && !p.temporal.Contains(ent.created) {
			return nil, false
		}
		// Dormant records do not take candidate slots in human mode.
		if p.modes[ent.store] == memory.ModeHuman && !p.decayed && ent.score(p.clock) < DormantBelow {
			return nil, false
		}
		return ent, true
	}
	k := p.limit*candidateFactor + candidateExtra
	scores := map[memory.ID]float64{}
	var order []memory.ID
	add := func(id memory.ID, s float64) {
		if _, ok := scores[id]; !ok {
			order = append(order, id)
		}
		scores[id] += s
	}
	haveText, haveVec := p.text != "", p.embedding != nil
	wText, wVec := 1.0, 1.0
	if haveText && haveVec {
		wText, wVec = textWeight, vectorWeight
	}
	// The vector scan is the long part of a search at scale; it takes the
	// read lock a chunk of rows at a time, so writes are not held up
	// behind it. Everything after it reads under one read lock, and
	// checks again that the vector hits are still eligible.
	var vecHits []vecHit
	if haveVec {
		vecHits = e.vectors.search(vecQuery{vector: p.embedding, k: k, lock: e.mu.RLocker(), filter: func(id memory.ID) bool {
			_, ok := eligible(id)
			return ok
		}})
	}
	e.mu.RLock()
	defer e.mu.RUnlock()

	if haveText {
		res, err := e.idx.text.Search(textindex.Query{Text: p.text, Limit: k, Filter: func(id memory.ID, _ []byte) bool {
			_, ok := eligible(id)
			return ok
		}})
		if err != nil {
			return nil, nil, fmt.Errorf("text search: %w", err)
		}
		if len(res.Hits) > 0 {
			top := res.Hits[0].Score
			for _, h := range res.Hits {
				add(h.Doc, wText*h.Score/top)
			}
		}
	}
	for _, h := range vecHits {
		add(h.id, wVec*h.score)
	}

	if !haveText && !haveVec {
		// No query: the most recent records.
		for _, id := range e.recentLocked(p, k, eligible) {
			add(id, 1)
		}
	}
	meta.TotalRecordsScanned = uint32(len(order))

	cands := make([]candidate, 0, len(order))
	for _, id := range order {
		ent, ok := eligible(id)
		if !ok {
			continue // changed since the vector scan saw it
		}
		cands = append(cands, candidate{id: id, store: ent.store, score: scores[id]})
	}
	if p.depth > 0 && (haveText || haveVec) && len(cands) > 0 {
		cands = e.activateLocked(p, cands, eligible)
	}
	out := cands[:0]
	for _, c := range cands {
		ent, _ := eligible(c.id)
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
	if !haveText && !haveVec {
		// Listing order is recency; keep it.
		return out, meta, nil
	}
	slices.SortStableFunc(out, func(a, b candidate) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		case idLess(a.id, b.id):
			return -1
		case idLess(b.id, a.id):
			return 1
		}
		return 0
	})
	return out, meta, nil
}

// recentLocked lists up to k eligible records, newest first, keeping only
// the best k in a heap while it scans.
func (e *Engine) recentLocked(p *recallPlan, k int, eligible func(memory.ID) (*entry, bool)) []memory.ID {
	if k <= 0 {
		return nil
	}
	// newer orders records by creation time, then id; the heap's top is
	// the oldest of the k kept.
	newer := func(a, b vecHit) bool { return a.score > b.score || a.score == b.score && idLess(b.id, a.id) }
	h := make([]vecHit, 0, k)
	down := func(i int) {
		for {
			l, m := 2*i+1, i
			if l < len(h) && newer(h[m], h[l]) {
				m = l
			}
			if r := l + 1; r < len(h) && newer(h[m], h[r]) {
				m = r
			}
			if m == i {
				return
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	for id, ent := range e.st.entries {
		if _, ok := eligible(id); !ok {
			continue
		}
		c := vecHit{id: id, score: float64(ent.created.UnixNano())}
		switch {
		case len(h) < k:
			h = append(h, c)
			for i := len(h) - 1; i > 0 && newer(h[(i-1)/2], h[i]); i = (i - 1) / 2 {
				h[i], h[(i-1)/2] = h[(i-1)/2], h[i]
			}
		case newer(c, h[0]):
			h[0] = c
			down(0)
		}
	}
	slices.SortFunc(h, func(a, b vecHit) int {
		if newer(a, b) {
			return -1
		}
		return 1
	})
	out := make([]memory.ID, len(h))
	for i, c := range h {
		out[i] = c.id
	}
	return out
}

// activateLocked spreads activation from the best candidates and merges the
// activated records in.
func (e *Engine) activateLocked(p *recallPlan, cands []candidate, eligible func(memory.ID) (*entry, bool)) []candidate {
	ranked := slices.Clone(cands)
	slices.SortStableFunc(ranked, func(a, b candidate) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	idx := make(map[memory.ID]int, len(cands))
	for i, c := range cands {
		idx[c.id] = i
	}
	for s := 0; s < len(ranked) && s < activationSeeds; s++ {
		src := ranked[s]
		for _, a := range e.spreadLocked(src.id, p.depth, recallMinWeight, nil) {
			if i, ok := idx[a.id]; ok {
				cands[i].score += activationBoost * a.level * src.score
				if cands[i].path == nil {
					cands[i].path = a.path
				}
				continue
			}
			ent, ok := eligible(a.id)
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
// the edges between records recalled together. All of it is one commit.
//
// Each record's fidelity (score, noise level) is presented as it was when
// recalled, before reinforcement restarts its clock: the answer reports,
// and human mode renders, what was remembered, while the counters and
// stability show this recall's reinforcement. Reinforcement applies to the
// stored record, so the next read sees the restored score.
func (e *Engine) finishRecall(budget *memory.AnswerBudget, reconsolidate bool, cands []candidate) ([]*memory.MemoryRecord, error) {
	ids := make([]memory.ID, len(cands))
	for i, c := range cands {
		ids[i] = c.id
	}
	if !reconsolidate {
		recs := make([]*memory.MemoryRecord, len(ids))
		for i, id := range ids {
			rec, err := e.get(id)
			if err != nil {
				return nil, err
			}
			if err := budget.Recalled(rec); err != nil {
				return nil, err
			}
			e.present(rec)
			recs[i] = rec
		}
		return recs, nil
	}
	defer e.lockRecords(ids)()
	now := e.now()
	recs := make([]*memory.MemoryRecord, len(ids))
	together := make(map[memory.ID]bool, len(ids))
	for i, id := range ids {
		rec, err := e.get(id)
		if err != nil {
			return nil, err
		}
		if err := budget.Recalled(rec); err != nil {
			return nil, err
		}
		e.present(rec) // as recalled: before reinforce moves its clock
		recs[i] = rec
		together[id] = true
	}
	t := e.begin()
	defer t.close()
	reinforced := 0
	for _, rec := range recs {
		rec.AccessCount++
		rec.LastAccessedAt = now
		if e.reinforce(rec) {
			reinforced++
		}
		for j := range rec.Associations {
			a := &rec.Associations[j]
			if together[a.TargetID] {
				a.Weight += coActivationStep * (1 - a.Weight)
				a.LastCoActivation = now
			}
		}
		rec.UpdatedAt = now
		t.touchRecord(rec)
	}
	t.b.PutMeta(recallCountKey, uint64Bytes(e.recalls.Load()))
	t.audit(audit.OpRecallReconsolidate, ids, storesOf(recs), map[string]any{"records": len(recs), "reinforced": reinforced})
	if err := t.commit(); err != nil {
		return nil, err
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
