package engine

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/engine/searchindex"
	"memsvc.dev/memsvc/pkg/engine/textindex"
	"memsvc.dev/memsvc/pkg/engine/vecindex"
	"memsvc.dev/memsvc/pkg/memory"
)

// Similarity associations: a stored record is linked both ways, with type
// semantic, to the few most similar records already stored. With an
// embedding, similarity is the cosine of the embeddings, over a bounded
// candidate set (similarCandidates); without one it is
// the Jaccard overlap of the records' index terms among the best text
// matches, and at least similarShared terms must be shared (two one-word
// notes are not similar because they share one word).
const (
	similarCosine       = 0.8
	similarJaccard      = 0.3
	similarShared       = 2
	similarTextSearched = 8
	similarQueryTerms   = 12
	similarVectorText   = 64
	similarRecent       = 256
)

type link struct {
	target memory.ID
	weight float64
}

// similar finds the records of namespace ns that rec, a record of ns,
// should be linked to.
func (e *Engine) similar(ns *nsState, rec *memory.MemoryRecord) []link {
	persistentOnly := func(id memory.ID) bool {
		ent, ok := ns.st.entries[id]
		return ok && ent.store.Persistent() && id != rec.ID
	}
	n := e.opts.SimilarLinks
	if v := rec.Content.Embedding(); v != nil {
		// A bounded candidate set, whatever the size of the store.
		ids := e.similarCandidates(ns, rec, persistentOnly)
		hits := ns.vectors.Rank(vecindex.Query{Vector: v, K: n, MinScore: similarCosine}, ids)
		out := make([]link, len(hits))
		for i, h := range hits {
			out[i] = link{h.ID, h.Score}
		}
		return out
	}
	mine := ns.recordTerms(rec)
	if len(mine) == 0 {
		return nil
	}
	query := similarityQuery(mine, ns.text.DocFreq)
	e.mu.RLock()
	hits, err := ns.similarText(query, similarTextSearched, persistentOnly)
	e.mu.RUnlock()
	if err != nil {
		e.log.Warn("similarity search", "err", err)
		return nil
	}
	var out []link
	for _, h := range hits {
		other, err := e.get(ns, h.ID)
		if err != nil {
			continue
		}
		j, shared := jaccard(mine, ns.recordTerms(other))
		if j >= similarJaccard && shared >= similarShared {
			out = append(out, link{h.ID, j})
			if len(out) == n {
				break
			}
		}
	}
	return out
}

// similarCandidates are the records a record with an embedding is
// compared with: the best text matches of its most distinctive terms
// (similarVectorText) and the newest records of the namespace
// (similarRecent), so linking costs the same at any store size. A record
// whose embedding is close but which shares no term and is not recent is
// not linked.
func (e *Engine) similarCandidates(ns *nsState, rec *memory.MemoryRecord, persistentOnly func(memory.ID) bool) []memory.ID {
	e.mu.RLock()
	defer e.mu.RUnlock()
	ids := make([]memory.ID, 0, similarVectorText+similarRecent)
	if mine := ns.recordTerms(rec); len(mine) > 0 {
		hits, err := ns.similarText(similarityQuery(mine, ns.text.DocFreq), similarVectorText, persistentOnly)
		if err != nil {
			e.log.Warn("similarity search", "err", err)
		}
		for _, h := range hits {
			ids = append(ids, h.ID)
		}
	}
	text, walked := len(ids), 0
	ns.st.recent.newest(ns.st, func(id memory.ID) bool {
		if !persistentOnly(id) {
			return true
		}
		if walked++; !slices.Contains(ids[:text], id) {
			ids = append(ids, id)
		}
		return walked < similarRecent
	})
	return ids
}

// similarText searches namespace ns's text index with query, a record's
// most distinctive terms (similarityQuery), for the best limit records
// keep accepts. Callers hold e.mu (shared is enough).
func (ns *nsState) similarText(query string, limit int, keep func(memory.ID) bool) ([]searchindex.Hit, error) {
	return ns.text.Search(searchindex.Query{
		Terms:  ns.text.QueryTerms(query),
		Limit:  limit,
		Filter: func(id memory.ID, _ searchindex.Attrs) bool { return keep(id) },
	})
}

// similarityQuery picks the record's most distinctive terms to search
// with, at most similarQueryTerms, so the search stays cheap however long
// the record is and however large the store: the terms fewest other
// records hold (df, the index's document frequency, counts the record
// itself), longer first among equals. A term no other record holds finds
// nothing and goes last. Rare terms have short posting lists, so the
// search walks few postings at any store size; choosing by length alone
// (long words are often rare) walked the long lists of common long words
// and cost the linker more the larger the store.
func similarityQuery(terms map[string]bool, df func(string) int) string {
	type term struct {
		t  string
		df int
	}
	list := make([]term, 0, len(terms))
	for t := range terms {
		n := df(t)
		if n <= 1 {
			n = math.MaxInt
		}
		list = append(list, term{t, n})
	}
	slices.SortFunc(list, func(a, b term) int {
		if c := cmp.Compare(a.df, b.df); c != 0 {
			return c
		}
		if c := cmp.Compare(len(b.t), len(a.t)); c != 0 {
			return c
		}
		return strings.Compare(a.t, b.t)
	})
	if len(list) > similarQueryTerms {
		list = list[:similarQueryTerms]
	}
	words := make([]string, len(list))
	for i, t := range list {
		words[i] = t.t
	}
	return strings.Join(words, " ")
}

// termSet is the set of index terms of text. The namespace's analyzer
// gives the terms textindex.Tokenize gives, through its stem cache:
// linking a record tokenizes it and its best matches, and the Snowball
// stemmer was most of a store's CPU when every word went through it.
func (ns *nsState) termSet(text string) map[string]bool {
	set := map[string]bool{}
	for _, t := range ns.indexConfig.Analyzer.AppendTerms(nil, text) {
		set[t] = true
	}
	return set
}

// recordTerms is the set of index terms of record rec's texts.
func (ns *nsState) recordTerms(rec *memory.MemoryRecord) map[string]bool {
	return ns.termSet(strings.Join(recordTexts(rec), "\n"))
}

// termSet is the set of index terms of text, by the default analysis
// (textindex.Tokenize), for code that has no namespace at hand.
func termSet(text string) map[string]bool {
	set := map[string]bool{}
	for _, t := range textindex.Tokenize(text) {
		set[t] = true
	}
	return set
}

// recordTermSet is termSet of record rec's texts.
func recordTermSet(rec *memory.MemoryRecord) map[string]bool {
	return termSet(strings.Join(recordTexts(rec), "\n"))
}

// jaccard returns the Jaccard index of two term sets and the number of
// shared terms.
func jaccard(a, b map[string]bool) (float64, int) {
	if len(a) == 0 || len(b) == 0 {
		return 0, 0
	}
	inter := 0
	for t := range a {
		if b[t] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter), inter
}

// The linker computes similarity associations in the background, so a
// store never waits for a search over every record. New persistent records
// are queued after they commit; when the queue is full, linking is skipped
// for the overflow (the records are stored all the same). Close drains the
// queue for a bounded time.
const (
	linkQueue      = 4096
	linkDrainLimit = 5 * time.Second
)

type linkJob struct {
	ns      *nsState
	id      memory.ID
	barrier chan struct{} // non-nil: close it when everything before is done
}

type linker struct {
	jobs    chan linkJob
	stop    chan struct{}
	done    chan struct{}
	dropped atomic.Uint64
}

func (e *Engine) startLinker() {
	e.link = &linker{jobs: make(chan linkJob, linkQueue), stop: make(chan struct{}), done: make(chan struct{})}
	go e.runLinker()
}

func (e *Engine) runLinker() {
	defer close(e.link.done)
	for {
		select {
		case j := <-e.link.jobs:
			e.linkJob(j)
		case <-e.link.stop:
			deadline := time.After(linkDrainLimit)
			for {
				select {
				case j := <-e.link.jobs:
					e.linkJob(j)
				case <-deadline:
					return
				default:
					return
				}
			}
		}
	}
}

func (e *Engine) linkJob(j linkJob) {
	if j.barrier != nil {
		close(j.barrier)
		return
	}
	defer func() {
		if r := recover(); r != nil {
			e.log.Error("similarity linking panicked", "record", j.id, "panic", r)
		}
	}()
	if err := e.linkRecord(j.ns, j.id); err != nil {
		e.log.Warn("similarity linking", "namespace", j.ns.name, "record", j.id, "err", err)
	}
}

// queueLinks asks the linker to link new records of namespace ns.
func (e *Engine) queueLinks(ns *nsState, recs []*memory.MemoryRecord) {
	if e.opts.SimilarLinks <= 0 {
		return
	}
	for _, rec := range recs {
		if !rec.Store.Persistent() {
			continue
		}
		select {
		case e.link.jobs <- linkJob{ns: ns, id: rec.ID}:
		default:
			e.link.dropped.Add(1)
		}
	}
}

// syncLinks waits until every record queued before the call is linked.
func (e *Engine) syncLinks(ctx context.Context) error {
	b := make(chan struct{})
	select {
	case e.link.jobs <- linkJob{barrier: b}:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-b:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (e *Engine) stopLinker() {
	close(e.link.stop)
	<-e.link.done
}

// linkRecord adds similarity associations from a record of namespace ns to
// its most similar records of ns and back, in one commit.
func (e *Engine) linkRecord(ns *nsState, id memory.ID) error {
	e.big.RLock()
	defer e.big.RUnlock()
	if e.isDropped(ns) {
		return nil
	}
	rec, err := e.get(ns, id)
	if err != nil {
		return nil // forgotten meanwhile
	}
	links := e.similar(ns, rec)
	if len(links) == 0 {
		return nil
	}
	ids := []memory.ID{id}
	for _, l := range links {
		ids = append(ids, l.target)
	}
	defer e.lockRecords(ids)()
	now := e.now()
	t := e.begin(ns)
	defer t.close()
	// Re-read under the locks: the records may have changed meanwhile.
	if rec, err = e.get(ns, id); err != nil {
		return nil
	}
	added, changed := 0, false
	for _, l := range links {
		other, err := e.get(ns, l.target)
		if err != nil {
			continue
		}
		w := round3(l.weight)
		if addEdge(rec, l.target, memory.AssocSemantic, memory.OriginSimilarity, w, now) {
			changed = true
			added++
		}
		if addEdge(other, id, memory.AssocSemantic, memory.OriginSimilarity, w, now) {
			other.UpdatedAt = now
			other.Version++
			t.touchRecord(other)
			added++
		}
	}
	if changed {
		rec.UpdatedAt = now
		rec.Version++
		t.touchRecord(rec)
	}
	if added == 0 {
		return nil // every edge was there already: nothing changed, nothing to log
	}
	t.audit(audit.OpLink, ids, nil, map[string]any{"links": len(links), "edges_added": added})
	return t.commit()
}

func round3(v float64) float64 { return float64(int(v*1000+0.5)) / 1000 }
