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
	similarQueryTerms   = 8
	similarVectorText   = 64
	similarRecent       = 256
)

type link struct {
	target memory.ID
	weight float64
}

// similar finds the records of namespace ns that rec, a record of ns,
// should be linked to.
//
// Text similarity compares the terms the text index holds for each
// record (indexTerms), so a candidate is neither read from the store nor
// analysed again: the index has its terms from when it was added.
func (e *Engine) similar(ns *nsState, rec *memory.MemoryRecord) []link {
	n := e.opts.SimilarLinks
	mine := ns.indexTerms(rec.ID)
	if v := rec.Content.Embedding(); v != nil {
		// A bounded candidate set, whatever the size of the store.
		ids := e.similarCandidates(ns, rec.ID, mine)
		hits := ns.vectors.Rank(vecindex.Query{Vector: v, K: n, MinScore: similarCosine}, ids)
		out := make([]link, len(hits))
		for i, h := range hits {
			out[i] = link{h.ID, h.Score}
		}
		return out
	}
	if len(mine) == 0 {
		return nil
	}
	hits, err := ns.similarText(rec.ID, mine, similarTextSearched)
	if err != nil {
		e.log.Warn("similarity search", "err", err)
		return nil
	}
	var out []link
	shares := newTermOverlap(mine)
	for _, h := range hits {
		fields, ok := ns.text.TermsOf(h.ID)
		if !ok || !shares.canLink(fields[fieldText]) {
			continue
		}
		j, shared := jaccardSorted(mine, sortedSet(fields[fieldText]))
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
// not linked. mine are the record's index terms (indexTerms).
func (e *Engine) similarCandidates(ns *nsState, self memory.ID, mine []string) []memory.ID {
	ids := make([]memory.ID, 0, similarVectorText+similarRecent)
	if len(mine) > 0 {
		hits, err := ns.similarText(self, mine, similarVectorText)
		if err != nil {
			e.log.Warn("similarity search", "err", err)
		}
		for _, h := range hits {
			ids = append(ids, h.ID)
		}
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	text, walked := len(ids), 0
	ns.st.recent.newest(ns.st, func(id memory.ID) bool {
		if ent, ok := ns.st.entries[id]; !ok || !ent.store.Persistent() || id == self {
			return true
		}
		if walked++; !slices.Contains(ids[:text], id) {
			ids = append(ids, id)
		}
		return walked < similarRecent
	})
	return ids
}

// similarText searches namespace ns's text index with the most
// distinctive of terms (similarityQuery), the index terms of record
// self, for the best limit persistent records other than self. The
// index keeps each record's store in its attributes (curatedDoc), so the
// filter reads nothing else.
func (ns *nsState) similarText(self memory.ID, terms []string, limit int) ([]searchindex.Hit, error) {
	return ns.text.Search(searchindex.Query{
		Terms: similarityQuery(terms, ns.text.DocFreq),
		Limit: limit,
		Filter: func(id memory.ID, a searchindex.Attrs) bool {
			return id != self && memory.StoreType(a.Tag).Persistent()
		},
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
// and cost the linker more the larger the store. Eight terms find the
// near-duplicates twelve did (TestSimilarityFindsNearDuplicates) for
// three quarters of the search's CPU.
//
// The terms are index terms already, so they are searched as they are:
// analysing them again as query text could stem a stem into a term the
// index does not hold.
func similarityQuery(terms []string, df func(string) int) []searchindex.QueryTerm {
	type term struct {
		t  string
		df int
	}
	list := make([]term, 0, len(terms))
	for _, t := range terms {
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
	out := make([]searchindex.QueryTerm, len(list))
	for i, t := range list {
		out[i] = searchindex.QueryTerm{Term: t.t, Weight: 1}
	}
	return out
}

// indexTerms returns the distinct terms of record id's texts as namespace
// ns's text index holds them, sorted, or nil when the record is not
// indexed. They are the terms recordTerms gives: the index analysed the
// same texts (recordTexts) with the same analyzer when it added the
// record.
func (ns *nsState) indexTerms(id memory.ID) []string {
	fields, ok := ns.text.TermsOf(id)
	if !ok {
		return nil
	}
	return sortedSet(fields[fieldText])
}

// sortedSet sorts terms and removes repeats, in place.
func sortedSet(terms []string) []string {
	slices.Sort(terms)
	return slices.Compact(terms)
}

// termOverlap tells cheaply whether a record could be linked to one with
// the given terms, before their Jaccard overlap is computed exactly (which
// needs the other record's distinct terms, a sort).
type termOverlap struct {
	at   map[string]int // index in the record's terms
	seen []bool
}

func newTermOverlap(mine []string) *termOverlap {
	o := &termOverlap{at: make(map[string]int, len(mine)), seen: make([]bool, len(mine))}
	for i, t := range mine {
		o.at[t] = i
	}
	return o
}

// canLink reports whether a record with terms (in any order, with
// repeats) shares enough with the record to pass the thresholds of
// similar. A Jaccard overlap of at least similarJaccard needs at least
// that share of the record's own terms in common, since the union is no
// smaller than the record's terms: shared/|union| >= x implies
// shared >= x*|mine|. (The slack keeps rounding from refusing a pair the
// exact computation would accept.)
func (o *termOverlap) canLink(terms []string) bool {
	clear(o.seen)
	shared := 0
	for _, t := range terms {
		if i, ok := o.at[t]; ok && !o.seen[i] {
			o.seen[i] = true
			shared++
		}
	}
	return shared >= similarShared && float64(shared) >= similarJaccard*float64(len(o.seen))-1e-9
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

// jaccardSorted is jaccard of two sorted sets of terms.
func jaccardSorted(a, b []string) (float64, int) {
	if len(a) == 0 || len(b) == 0 {
		return 0, 0
	}
	inter := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch c := strings.Compare(a[i], b[j]); {
		case c < 0:
			i++
		case c > 0:
			j++
		default:
			inter++
			i++
			j++
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
