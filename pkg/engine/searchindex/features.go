package searchindex

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"

	"memsvc.dev/memsvc/pkg/memory"
)

// The index keeps each document's terms in order (its term sequence, a
// uvarint term id per term), so second-stage ranking can look at the few
// candidates a search returns: their terms, proximity of the query terms,
// their distinctive terms for query expansion, and the score of documents
// a search did not return (a neighbour in a conversation, say).

// TermsOf returns the terms of the document with id, per field, in order
// and with repeats (gaps between texts are not marked), and whether the
// document is indexed.
func (ix *Index) TermsOf(id memory.ID) (terms [MaxFields][]string, ok bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	c := ix.c
	n, ok := c.ids.find(c.docs, id)
	if !ok {
		return terms, false
	}
	d := &c.docs[n]
	lens := c.lensOf(n)
	for f := range c.nf {
		terms[f] = make([]string, 0, lens[f])
	}
	r := seqReader{b: c.seq(d), lens: lensArray(lens)}
	for {
		t, f, ok := r.next()
		if !ok {
			break
		}
		if t != gapTerm {
			terms[f] = append(terms[f], c.texts[t])
		}
	}
	return terms, true
}

// ScoreDocs returns the score q gives each of ids, exactly as Search
// would (bit for bit), or 0 for a document that is not indexed or does
// not match. q.All, q.Limit, q.Filter and q.Admit are ignored.
func (ix *Index) ScoreDocs(q Query, ids []memory.ID) ([]float64, error) {
	scores, _, err := ix.scoreDocs(q, ids, false)
	return scores, err
}

// ScoreAdded returns the score q would give doc if doc were added to the
// index: the statistics count it as Add would (one more document, its
// field lengths, one more document for each of its terms), the index
// itself is not changed. It scores documents kept elsewhere (a small
// index of volatile documents, say) on this index's scale, so their
// scores compare with those of Search. q.All, q.Limit and q.Filter are
// ignored; a document without terms scores 0.
func (ix *Index) ScoreAdded(q Query, doc *Document) (float64, error) {
	var a analysed
	analyse(ix.cfg.Analyzer, ix.cfg.Fields, doc, &a)
	q.Limit, q.All, q.Filter = 0, false, nil
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	c := ix.c
	p, err := ix.prepare(c, &q)
	if err != nil || a.total == 0 {
		return 0, err
	}
	// The document's frequencies of each query term, per field.
	tfs := make([][MaxFields]uint32, len(p.terms))
	f, left := 0, a.lens[0]
	for _, t := range a.terms {
		if t == "" {
			continue
		}
		for left == 0 && f < MaxFields-1 {
			f++
			left = a.lens[f]
		}
		left--
		for qi := range p.terms {
			if p.terms[qi].text == t {
				tfs[qi][f]++
			}
		}
	}
	n := float64(c.live + 1)
	for f := range c.nf {
		p.nl[f] = 0
		if total := c.lens[f] + int64(a.lens[f]); total > 0 {
			p.nl[f] = c.b[f] / (float64(total) / n)
		}
	}
	score := 0.0
	for qi := range p.terms {
		t := &p.terms[qi]
		if tfs[qi] == ([MaxFields]uint32{}) {
			continue
		}
		df := 1.0
		if t.id != 0 {
			df += float64(c.terms[t.id].df)
		}
		w := t.weight * math.Log(1+(n-df+0.5)/(df+0.5))
		score += p.termScore(w, p.tfNorm(&tfs[qi], a.lens[:]))
	}
	return score, nil
}

// scoreTF scores document n whose frequencies of the query terms are tfs.
func (p *prepared) scoreTF(n uint32, tfs [][MaxFields]uint32) float64 {
	lens := p.c.lensOf(n)
	score := 0.0
	for qi := range p.terms {
		if p.terms[qi].id != 0 {
			score += p.termScore(p.terms[qi].w, p.tfNorm(&tfs[qi], lens))
		}
	}
	return score
}

// Proximity is evidence of how close together a document holds the
// query terms. Positions count the document's terms within one text of
// one field (stop words the analyzer dropped do not count); terms in
// different texts are never near each other.
type Proximity struct {
	// Score is the term-proximity score of BM25TP (Rasolofo and Savoy,
	// "Term proximity scoring for keyword-based retrieval systems",
	// 2003): every pair of occurrences of two different query terms at
	// most ProximityDistance apart adds 1/distance² to both terms'
	// accumulators, and each term contributes
	// min(1, idf)·weight·acc·(k1+1)/(acc + k1·norm), where norm is the
	// BM25 length normalisation of the document's total length with the
	// first field's b. Add it, scaled, to the BM25F score.
	Score float64
	// Matched is the number of distinct query terms (of positive
	// weight) the document contains.
	Matched int
	// Window is the length, in terms, of the shortest stretch of one
	// text that holds all Matched terms (the minimal covering window of
	// Tao and Zhai, "An exploration of proximity measures in information
	// retrieval", 2007); 0 when no single text holds them all.
	Window int
	// Adjacent counts places where two terms that follow each other in
	// the query follow each other in the text, in the same order: phrase
	// evidence.
	Adjacent int
}

// ProximityDistance is the largest distance at which two occurrences
// count in Proximity.Score.
const ProximityDistance = 5

// ScoreProximity returns, for each of ids, the score q gives it, exactly
// as ScoreDocs does, and the proximity evidence of q's terms in it
// (weights as in Search; q.FieldWeights apply to the scores only): the
// two in one pass over each document's terms. A document that is not
// indexed gets 0 and the zero Proximity. q.All, q.Limit, q.Filter and
// q.Admit are ignored.
func (ix *Index) ScoreProximity(q Query, ids []memory.ID) ([]float64, []Proximity, error) {
	return ix.scoreDocs(q, ids, true)
}

// scoreDocs is ScoreDocs, and ScoreProximity when withProximity is set.
func (ix *Index) scoreDocs(q Query, ids []memory.ID, withProximity bool) ([]float64, []Proximity, error) {
	q.Limit = 0
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	p, err := ix.prepare(ix.c, &q)
	if err != nil {
		return nil, nil, err
	}
	scores := make([]float64, len(ids))
	var prox []Proximity
	if withProximity {
		prox = make([]Proximity, len(ids))
	}
	tfs := make([][MaxFields]uint32, len(p.terms))
	var occ []occurrence
	for i, id := range ids {
		n, ok := p.c.ids.find(p.c.docs, id)
		if !ok {
			continue
		}
		clear(tfs)
		occ = p.scan(n, occ, tfs)
		scores[i] = p.scoreTF(n, tfs)
		if withProximity {
			prox[i] = p.proximityOf(n, ix.cfg.Fields[0].B, occ)
		}
	}
	return scores, prox, nil
}

type occurrence struct {
	pos  int // position; texts are far apart
	qi   int
	text int
}

// scan reads document n's term sequence once: it adds to tfs the
// frequencies of the query terms per field, and returns the occurrences
// of the query terms of positive weight, in order, reusing occ. It
// decodes the sequence as seqReader does, inline: this loop is most of
// what the second stage of a text recall costs.
func (p *prepared) scan(n uint32, occ []occurrence, tfs [][MaxFields]uint32) []occurrence {
	c := p.c
	occ = occ[:0]
	b := c.seq(&c.docs[n])
	lens := lensArray(c.lensOf(n))
	// The query's terms, and a mask of their ids' low bits that most
	// other terms fail.
	var ids [MaxQueryTerms]uint32
	var mask uint64
	nq := len(p.terms)
	for qi := range p.terms {
		ids[qi] = p.terms[qi].id
		if ids[qi] != 0 {
			mask |= 1 << (ids[qi] & 63)
		}
	}
	f, left := 0, lens[0] // the field being read and its terms left
	for left == 0 && f < MaxFields-1 {
		f++
		left = lens[f]
	}
	pos, text, field := 0, 0, -1
	for len(b) > 0 {
		var t uint32
		if x := b[0]; x < 0x80 {
			t = uint32(x)
			b = b[1:]
		} else {
			v, k := binary.Uvarint(b)
			if k <= 0 {
				return occ
			}
			t = uint32(v)
			b = b[k:]
		}
		tf := f // the term's field
		if t != gapTerm {
			left--
			for left == 0 && f < MaxFields-1 {
				f++
				left = lens[f]
			}
		}
		if t == gapTerm || tf != field {
			text++
			pos += ProximityDistance + 1
			field = tf
			if t == gapTerm {
				continue
			}
		}
		pos++
		if mask&(1<<(t&63)) == 0 {
			continue
		}
		for qi := range nq {
			if ids[qi] == t {
				tfs[qi][tf]++
				if p.terms[qi].w > 0 {
					occ = append(occ, occurrence{pos: pos, qi: qi, text: text})
				}
			}
		}
	}
	return occ
}

// proximityOf returns the proximity evidence of document n whose
// occurrences of the query terms are occ (scan).
func (p *prepared) proximityOf(n uint32, b float64, occ []occurrence) Proximity {
	c := p.c
	lens := c.lensOf(n)
	var px Proximity
	nq := len(p.terms)
	var seenA [MaxQueryTerms]bool // a query has at most MaxQueryTerms terms
	seen := seenA[:nq]
	for _, o := range occ {
		if !seen[o.qi] {
			seen[o.qi] = true
			px.Matched++
		}
	}
	if px.Matched == 0 {
		return px
	}
	// BM25TP accumulators and adjacency.
	var accA [MaxQueryTerms]float64
	acc := accA[:nq]
	for i, a := range occ {
		for _, o := range occ[i+1:] {
			dist := o.pos - a.pos
			if dist > ProximityDistance {
				break
			}
			if o.qi == a.qi || dist == 0 {
				continue
			}
			w := 1 / float64(dist*dist)
			acc[a.qi] += w
			acc[o.qi] += w
			if dist == 1 && p.follows(a.qi, o.qi) {
				px.Adjacent++
			}
		}
	}
	var total int64
	var avg float64
	for f := range c.nf {
		total += c.lens[f]
	}
	if c.live > 0 {
		avg = float64(total) / float64(c.live)
	}
	dl := 0.0
	for f := range c.nf {
		dl += float64(lens[f])
	}
	norm := 1 - b
	if avg > 0 {
		norm += b * dl / avg
	}
	k := p.k1 * norm
	for qi, a := range acc {
		if a > 0 {
			t := &p.terms[qi]
			px.Score += min(1, t.idf) * t.weight * a * (p.k1 + 1) / (a + k)
		}
	}
	px.Window = minWindow(occ, nq, px.Matched)
	return px
}

// follows reports whether query term b comes right after query term a
// among the query terms of positive weight.
func (p *prepared) follows(a, b int) bool {
	for i := a + 1; i < len(p.terms); i++ {
		if p.terms[i].w > 0 {
			return i == b
		}
	}
	return false
}

// minWindow returns the length of the shortest stretch of one text that
// holds `want` distinct query terms, or 0.
func minWindow(occ []occurrence, nq, want int) int {
	best := 0
	var countA [MaxQueryTerms]int // nq is at most MaxQueryTerms
	count := countA[:nq]
	for start := 0; start < len(occ); {
		end := start
		for end < len(occ) && occ[end].text == occ[start].text {
			end++
		}
		seg := occ[start:end]
		clear(count)
		have, lo := 0, 0
		for hi := range seg {
			if count[seg[hi].qi] == 0 {
				have++
			}
			count[seg[hi].qi]++
			for have == want {
				if w := seg[hi].pos - seg[lo].pos + 1; best == 0 || w < best {
					best = w
				}
				count[seg[lo].qi]--
				if count[seg[lo].qi] == 0 {
					have--
				}
				lo++
			}
		}
		start = end
	}
	return best
}

// WeightedTerm is a term with a weight.
type WeightedTerm struct {
	Term   string
	Weight float64
}

// DistinctiveTerms returns up to n terms of the document with id that
// best tell what it is about, for pseudo-relevance feedback: each term
// weighted by the score it alone would give the document as a query of
// weight 1 (idf times saturated BM25F frequency), highest first, ties by
// term. It returns nil for a document that is not indexed.
func (ix *Index) DistinctiveTerms(id memory.ID, n int) []WeightedTerm {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	c := ix.c
	doc, ok := c.ids.find(c.docs, id)
	if !ok || n <= 0 {
		return nil
	}
	slots := c.distinct(doc)
	lens := c.lensOf(doc)
	p := ix.prepareFields(c)
	n0 := float64(c.live)
	out := make([]WeightedTerm, len(slots))
	for i := range slots {
		s := &slots[i]
		df := float64(c.terms[s.term].df)
		idf := math.Log(1 + (n0-df+0.5)/(df+0.5))
		out[i] = WeightedTerm{Term: c.texts[s.term], Weight: p.termScore(idf, p.tfNorm(&s.tf, lens))}
	}
	slices.SortFunc(out, func(a, b WeightedTerm) int {
		return cmp.Or(cmp.Compare(b.Weight, a.Weight), cmp.Compare(a.Term, b.Term))
	})
	return out[:min(n, len(out))]
}

// distinct returns the distinct terms of d with their frequencies per
// field, in order of first occurrence. Unlike collect it uses no scratch
// space of the writer, so readers may call it.
func (c *core) distinct(n uint32) []tfSlot {
	var slots []tfSlot
	d := &c.docs[n]
	at := make(map[uint32]int, d.seqN)
	r := seqReader{b: c.seq(d), lens: lensArray(c.lensOf(n))}
	for {
		t, f, ok := r.next()
		if !ok {
			return slots
		}
		if t == gapTerm {
			continue
		}
		i, seen := at[t]
		if !seen {
			i = len(slots)
			at[t] = i
			slots = append(slots, tfSlot{term: t})
		}
		slots[i].tf[f]++
	}
}
