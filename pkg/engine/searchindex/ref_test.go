package searchindex

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

// wordsAnalyzer splits on white space: enough for tests, and simple
// enough for the reference model to share.
type wordsAnalyzer struct{}

func (wordsAnalyzer) AppendTerms(dst []string, text string) []string {
	return append(dst, strings.Fields(text)...)
}

func testConfig(nf int) Config {
	cfg := Config{Analyzer: wordsAnalyzer{}, AnalyzerVersion: "words/1"}
	weights := []float64{1, 0.5, 2, 0.25}
	bs := []float64{0.75, 1, 0, 0.5}
	for f := range nf {
		cfg.Fields = append(cfg.Fields, Field{Name: string(rune('a' + f)), Weight: weights[f], B: bs[f]})
	}
	return cfg
}

func testID(i int) memory.ID {
	var id memory.ID
	// Ids are not in insertion order, so order by id and by document
	// number differ.
	binary.BigEndian.PutUint64(id[:8], uint64(i)*0x9e3779b97f4a7c15)
	binary.BigEndian.PutUint64(id[8:], uint64(i))
	return id
}

// refIndex is the reference model: the live documents, and BM25F
// computed from scratch over them for every query.
type refIndex struct {
	cfg  Config
	docs map[memory.ID]*Document

	// Derived from docs, rebuilt when stale is set.
	stale bool
	terms map[memory.ID][][]string
	tf    map[memory.ID]map[string][]int // per field
	df    map[string]int
	total []float64
}

func (r *refIndex) derive() {
	if !r.stale && r.terms != nil {
		return
	}
	r.stale = false
	r.terms = map[memory.ID][][]string{}
	r.tf = map[memory.ID]map[string][]int{}
	r.df = map[string]int{}
	r.total = make([]float64, len(r.cfg.Fields))
	for id, d := range r.docs {
		ft := r.fieldTerms(d)
		r.terms[id] = ft
		tf := map[string][]int{}
		r.tf[id] = tf
		seen := map[string]bool{}
		for f, ts := range ft {
			r.total[f] += float64(len(ts))
			for _, t := range ts {
				if tf[t] == nil {
					tf[t] = make([]int, len(ft))
				}
				tf[t][f]++
				if !seen[t] {
					seen[t] = true
					r.df[t]++
				}
			}
		}
	}
}

func newRef(cfg Config) *refIndex {
	if cfg.K1 == 0 {
		cfg.K1 = DefaultK1
	}
	return &refIndex{cfg: cfg, docs: map[memory.ID]*Document{}}
}

func (r *refIndex) fieldTerms(d *Document) [][]string {
	out := make([][]string, len(r.cfg.Fields))
	for f := range r.cfg.Fields {
		for _, t := range d.Fields[f] {
			out[f] = append(out[f], strings.Fields(t)...)
		}
	}
	return out
}

func (r *refIndex) del(id memory.ID) {
	r.stale = true
	delete(r.docs, id)
}

func (r *refIndex) add(d *Document) {
	r.stale = true
	n := 0
	for _, ts := range r.fieldTerms(d) {
		n += len(ts)
	}
	if n == 0 {
		delete(r.docs, d.ID)
		return
	}
	c := *d
	r.docs[d.ID] = &c
}

type refHit struct {
	id    memory.ID
	score float64
	attrs Attrs
}

// search scores every live document; it returns every match, best first,
// and applies the filter to all of them.
func (r *refIndex) search(q Query) []refHit {
	nf := len(r.cfg.Fields)
	fw := make([]float64, nf)
	for f := range fw {
		fw[f] = r.cfg.Fields[f].Weight
	}
	if q.FieldWeights != nil {
		copy(fw, q.FieldWeights)
	}
	// Distinct terms, largest weight, first MaxQueryTerms.
	var terms []string
	weights := map[string]float64{}
	for _, qt := range q.Terms {
		if w, ok := weights[qt.Term]; ok {
			weights[qt.Term] = max(w, qt.Weight)
			continue
		}
		if len(terms) == MaxQueryTerms {
			continue
		}
		terms = append(terms, qt.Term)
		weights[qt.Term] = qt.Weight
	}
	r.derive()
	n := len(r.docs)
	total, df, all := r.total, r.df, r.terms
	var hits []refHit
	for id, ft := range all {
		score := 0.0
		present := 0
		anyPositive := false
		for _, t := range terms {
			if df[t] == 0 {
				continue
			}
			x := 0.0
			for f, ts := range ft {
				tf := 0
				if c := r.tf[id][t]; c != nil {
					tf = c[f]
				}
				if tf == 0 || fw[f] == 0 {
					continue
				}
				b := r.cfg.Fields[f].B
				avg := total[f] / float64(n)
				x += fw[f] * float64(tf) / ((1 - b) + b*float64(len(ts))/avg)
			}
			if x == 0 {
				continue
			}
			present++
			idf := math.Log(1 + (float64(n)-float64(df[t])+0.5)/(float64(df[t])+0.5))
			s := weights[t] * idf * x * (r.cfg.K1 + 1) / (r.cfg.K1 + x)
			score += s
			if weights[t] > 0 {
				anyPositive = true
			}
		}
		if q.All {
			if len(terms) == 0 || present < len(terms) {
				continue
			}
		} else if !anyPositive {
			continue
		}
		d := r.docs[id]
		if q.Filter != nil && !q.Filter(id, d.Attrs) {
			continue
		}
		hits = append(hits, refHit{id: id, score: score, attrs: d.Attrs})
	}
	slices.SortFunc(hits, func(a, b refHit) int {
		return cmp.Or(cmp.Compare(b.score, a.score), slices.Compare(a.id[:], b.id[:]))
	})
	return hits
}

func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b))
}

// checkAgainstRef compares hits with the reference ranking: same length,
// and at each rank a document whose reference score is that rank's
// score (documents whose scores tie within rounding may swap).
func checkAgainstRef(t *testing.T, what string, got []Hit, ref []refHit, limit int) {
	t.Helper()
	want := ref[:min(limit, len(ref))]
	if len(got) != len(want) {
		t.Fatalf("%s: %d hits, reference has %d", what, len(got), len(want))
	}
	byID := map[memory.ID]refHit{}
	for _, h := range ref {
		byID[h.id] = h
	}
	seen := map[memory.ID]bool{}
	for i, h := range got {
		r, ok := byID[h.ID]
		if !ok || seen[h.ID] {
			t.Fatalf("%s: hit %d %s is not a reference match or repeats", what, i, h.ID)
		}
		seen[h.ID] = true
		if !near(h.Score, r.score) || !near(h.Score, want[i].score) || h.Attrs != r.attrs {
			t.Fatalf("%s: hit %d %s score %v attrs %v; reference score %v attrs %v, rank %d score %v",
				what, i, h.ID, h.Score, h.Attrs, r.score, r.attrs, i, want[i].score)
		}
		if h.ID != want[i].id && !(i > 0 && near(want[i-1].score, want[i].score)) &&
			!(i+1 < len(ref) && near(ref[i+1].score, want[i].score)) {
			t.Fatalf("%s: hit %d is %s, reference %s (scores %v, %v)", what, i, h.ID, want[i].id, h.Score, want[i].score)
		}
	}
}

// exhaustive scores every live document of ix from its term sequence
// with the index's own scoring, the way Search must rank them: best q.Limit,
// score descending, id ascending.
func exhaustive(t *testing.T, ix *Index, q Query) []Hit {
	t.Helper()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	p, err := ix.prepare(ix.c, &q)
	if err != nil {
		t.Fatal(err)
	}
	c := p.c
	var out []Hit
	for n := range c.docs {
		doc := uint32(n)
		if c.isDead(doc) {
			continue
		}
		d := &c.docs[n]
		tfs := p.docTF(doc)
		present := 0
		positive := false
		for qi, pt := range p.terms {
			if pt.id != 0 && p.present(&tfs[qi]) {
				present++
				positive = positive || pt.w > 0
			}
		}
		if q.All && (len(p.terms) == 0 || present < len(p.terms)) || !q.All && !positive {
			continue
		}
		if q.Filter != nil && !q.Filter(d.id, d.attrs()) {
			continue
		}
		out = append(out, Hit{ID: d.id, Score: p.scoreTF(doc, tfs), Attrs: d.attrs()})
	}
	slices.SortFunc(out, func(a, b Hit) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), slices.Compare(a.ID[:], b.ID[:]))
	})
	return out[:min(q.Limit, len(out))]
}

// docTF returns the frequencies of the query terms in document n, per
// field, counted from its term sequence.
func (p *prepared) docTF(n uint32) [][MaxFields]uint32 {
	tfs := make([][MaxFields]uint32, len(p.terms))
	p.scan(n, nil, tfs)
	return tfs
}
