package engine

import (
	"cmp"
	"slices"
	"strings"

	"memsvc.dev/memsvc/pkg/engine/vecindex"
	"memsvc.dev/memsvc/pkg/memory"
)

// Near-duplicate detection for consolidation.
//
// The rule is the one consolidation has always applied: two records with
// embeddings of the same size are near-duplicates when the cosine of their
// embeddings exceeds dupCosine; any other two when the Jaccard overlap of
// their index terms is at least dupJaccard. Records are paired greedily in
// pool order: each record not yet paired takes the first later record not
// yet paired that is its near-duplicate.
//
// Comparing every pair of terms costs O(n²) set intersections (tens of
// minutes at 40,000 records). The text rule is instead answered exactly by
// a prefix-filtered similarity join: the terms of every record are sorted
// rarest first, and two sets whose Jaccard overlap is at least t share a
// term among the first |x| - ⌈t·|x|⌉ + 1 terms of each (if they overlap in
// at least α terms, any two prefixes that leave out fewer than α terms
// meet; a Jaccard of t needs α ≥ t·max(|x|,|y|)). Only the records whose
// prefixes share a term are compared, so the cost follows the number of
// records that share rare terms, not the square of the pool. The result
// is the same as comparing every pair (a property test checks it).
//
// Embeddings are compared by a scan of the later records of the same size,
// which stops at the first near-duplicate: O(n²·d) in the worst case, but
// a dot product over contiguous unit vectors, and run without any lock.

// dupPool is a pool prepared for the search: every record's terms as
// ranks (rarest first, ascending) and its unit embedding.
type dupPool struct {
	terms [][]int32
	vecs  []unitVec
	// posting lists of the prefix terms: the pool positions whose prefix
	// holds the term, ascending.
	prefix map[int32][]int32
}

func newDupPool(pool []*memory.MemoryRecord) *dupPool {
	p := &dupPool{terms: make([][]int32, len(pool)), vecs: make([]unitVec, len(pool)), prefix: map[int32][]int32{}}
	dict := map[string]int32{}
	var df []int
	words := make([][]int32, len(pool))
	for i, rec := range pool {
		for t := range recordTermSet(rec) {
			id, ok := dict[t]
			if !ok {
				id = int32(len(df))
				dict[t] = id
				df = append(df, 0)
			}
			df[id]++
			words[i] = append(words[i], id)
		}
		v := rec.Content.Embedding()
		p.vecs[i] = unitVec{dims: len(v), unit: vecindex.Normalize(v)}
	}
	// Rank the terms rarest first (ties by term, so the order is
	// deterministic).
	byTerm := make([]string, len(df))
	for t, id := range dict {
		byTerm[id] = t
	}
	order := make([]int32, len(df))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := cmp.Compare(df[a], df[b]); c != 0 {
			return c
		}
		return strings.Compare(byTerm[a], byTerm[b])
	})
	rank := make([]int32, len(df))
	for r, id := range order {
		rank[id] = int32(r)
	}
	for i, ws := range words {
		ts := make([]int32, len(ws))
		for k, w := range ws {
			ts[k] = rank[w]
		}
		slices.Sort(ts)
		p.terms[i] = ts
		for _, t := range ts[:prefixLen(len(ts))] {
			p.prefix[t] = append(p.prefix[t], int32(i))
		}
	}
	return p
}

// prefixLen is how many of a set's n terms (rarest first) two sets with a
// Jaccard overlap of at least dupJaccard must meet in: n - α + 1 with α the
// overlap such a pair has at least. α is rounded down (the prefix errs
// on the long side, never the short one).
func prefixLen(n int) int {
	if n == 0 {
		return 0
	}
	alpha := int(dupJaccard * float64(n))
	return max(1, min(n, n-alpha+1))
}

// intersect counts the common elements of two ascending lists.
func intersect(a, b []int32) int {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			n++
			i++
			j++
		}
	}
	return n
}

// textDuplicate applies the text rule to records i and j.
func (p *dupPool) textDuplicate(i, j int) bool {
	a, b := p.terms[i], p.terms[j]
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	inter := intersect(a, b)
	return float64(inter)/float64(len(a)+len(b)-inter) >= dupJaccard
}

// byVector reports whether records i and j are compared by their
// embeddings.
func (p *dupPool) byVector(i, j int) bool {
	return p.vecs[i].dims > 0 && p.vecs[i].dims == p.vecs[j].dims
}

// firstDuplicate returns the first position after i, not used, holding a
// near-duplicate of record i; -1 when there is none. seen is scratch of
// the pool's size.
func (p *dupPool) firstDuplicate(i int, used []bool, seen []int32) int {
	best := -1
	// Text rule: the records whose prefix meets i's.
	if ts := p.terms[i]; len(ts) > 0 {
		var cands []int32
		for _, t := range ts[:prefixLen(len(ts))] {
			post := p.prefix[t]
			k, _ := slices.BinarySearch(post, int32(i+1))
			for _, j := range post[k:] {
				if seen[j] == int32(i)+1 || used[j] || p.byVector(i, int(j)) {
					continue
				}
				seen[j] = int32(i) + 1
				cands = append(cands, j)
			}
		}
		slices.Sort(cands)
		for _, j := range cands {
			if p.textDuplicate(i, int(j)) {
				best = int(j)
				break
			}
		}
	}
	// Embedding rule: the later records of the same size, up to the
	// first text match.
	if v := p.vecs[i]; v.dims > 0 && v.unit != nil {
		end := len(p.vecs)
		if best >= 0 {
			end = best
		}
		for j := i + 1; j < end; j++ {
			w := p.vecs[j]
			if !used[j] && w.dims == v.dims && w.unit != nil && float64(vecindex.Dot(v.unit, w.unit)) > dupCosine {
				return j
			}
		}
	}
	return best
}

// duplicates pairs the near-duplicates of pool (in pool order, see
// above). The record with the higher fidelity is kept (the earlier one on
// ties); each record is in at most one pair. stop is polled between
// records; when it reports true the search ends early with what it found.
func (e *Engine) duplicates(ns *nsState, pool []*memory.MemoryRecord, clock float64, stop func() bool) []merge {
	p := newDupPool(pool)
	used := make([]bool, len(pool))
	seen := make([]int32, len(pool))
	var out []merge
	for i, a := range pool {
		if i%1024 == 0 && stop() {
			break
		}
		if used[i] {
			continue
		}
		j := p.firstDuplicate(i, used, seen)
		if j < 0 {
			continue
		}
		b := pool[j]
		keep, drop := a, b
		if e.entryScore(ns, b.ID, clock) > e.entryScore(ns, a.ID, clock) {
			keep, drop = b, a
		}
		out = append(out, merge{keep, drop})
		used[i], used[j] = true, true
	}
	return out
}

// unitVec is a record's embedding as a unit vector (nil for a zero
// vector) and its size (0 for none).
type unitVec struct {
	dims int
	unit []float32
}

// nearDuplicate compares two records by their embeddings when both have
// one of the same size (a zero vector matches nothing), else by their
// index terms.
func nearDuplicate(va, vb unitVec, ta, tb map[string]bool) bool {
	if va.dims > 0 && va.dims == vb.dims {
		return va.unit != nil && vb.unit != nil && float64(vecindex.Dot(va.unit, vb.unit)) > dupCosine
	}
	j, _ := jaccard(ta, tb)
	return len(ta) > 0 && j >= dupJaccard
}

// recordsDuplicate applies the rule to two records.
func recordsDuplicate(a, b *memory.MemoryRecord) bool {
	va, vb := a.Content.Embedding(), b.Content.Embedding()
	return nearDuplicate(unitVec{len(va), vecindex.Normalize(va)}, unitVec{len(vb), vecindex.Normalize(vb)},
		recordTermSet(a), recordTermSet(b))
}
