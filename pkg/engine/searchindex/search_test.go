package searchindex

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

// randCorpus makes random documents over a small Zipf vocabulary, so
// posting lists are long enough to have blocks, with now and then a word
// repeated often enough to overflow the packed term frequencies.
type randCorpus struct {
	r     *rand.Rand
	zipf  *rand.Zipf
	vocab []string
	nf    int
	// uniform documents have one text per field of exactly eight
	// distinct words: many documents tie, and block bounds are exact.
	uniform bool
}

func newRandCorpus(seed uint64, nf, vocab int) *randCorpus {
	r := rand.New(rand.NewPCG(seed, 7))
	g := &randCorpus{r: r, zipf: rand.NewZipf(r, 1.2, 1, uint64(vocab-1)), nf: nf}
	for i := range vocab {
		g.vocab = append(g.vocab, fmt.Sprintf("w%d", i))
	}
	return g
}

func (g *randCorpus) word() string { return g.vocab[g.zipf.Uint64()] }

func (g *randCorpus) text() string {
	n := g.r.IntN(12)
	words := make([]string, 0, n+40)
	for range n {
		words = append(words, g.word())
	}
	if g.r.IntN(25) == 0 {
		w := g.word()
		reps := 20 + g.r.IntN(40)
		if g.r.IntN(5) == 0 {
			reps = 250 + g.r.IntN(60) // past 8 bits
		}
		for range reps {
			words = append(words, w)
		}
	}
	return strings.Join(words, " ")
}

// docs returns n new documents with the ids testID(0) to testID(n-1),
// each also added to ref unless ref is nil.
func (g *randCorpus) docs(n int, ref *refIndex) []*Document {
	docs := make([]*Document, n)
	for i := range docs {
		docs[i] = g.doc(testID(i))
		if ref != nil {
			ref.add(docs[i])
		}
	}
	return docs
}

func (g *randCorpus) doc(id memory.ID) *Document {
	d := &Document{ID: id, Attrs: Attrs{Tag: uint32(g.r.IntN(6)), Time: g.r.Int64N(1000) - 500, Group: g.r.Uint64()}}
	if g.uniform {
		for f := range g.nf {
			perm := g.r.Perm(len(g.vocab))[:8]
			words := make([]string, len(perm))
			for i, w := range perm {
				words[i] = g.vocab[w]
			}
			d.Fields[f] = []string{strings.Join(words, " ")}
		}
		return d
	}
	for f := range g.nf {
		for range g.r.IntN(3) {
			d.Fields[f] = append(d.Fields[f], g.text())
		}
	}
	return d
}

func (g *randCorpus) query(ix *Index) Query {
	var q Query
	for range 1 + g.r.IntN(6) {
		t := g.word()
		if g.r.IntN(15) == 0 {
			t = "unknown"
		}
		w := 1.0
		switch g.r.IntN(6) {
		case 0:
			w = 0
		case 1:
			w = g.r.Float64() * 3
		}
		q.Terms = append(q.Terms, QueryTerm{Term: t, Weight: w})
		if g.r.IntN(5) == 0 { // a duplicate, maybe with another weight
			q.Terms = append(q.Terms, QueryTerm{Term: t, Weight: g.r.Float64()})
		}
	}
	q.Limit = []int{1, 3, 10, 30, 1000}[g.r.IntN(5)]
	q.All = g.r.IntN(4) == 0
	if g.r.IntN(4) == 0 {
		q.FieldWeights = make([]float64, g.nf)
		for f := range q.FieldWeights {
			q.FieldWeights[f] = float64(g.r.IntN(3))
		}
	}
	if g.r.IntN(3) == 0 {
		mod := uint32(2 + g.r.IntN(3))
		q.Filter = func(_ memory.ID, a Attrs) bool { return a.Tag%mod != 0 }
	}
	return q
}

// admitting returns q with its Filter (a test of Tag modulo mod, as
// query makes them) turned into an Admit filter that keeps its verdicts
// in the documents' marks: mod<<2 | 2 (admitted) or | 1 (refused). A
// mark the index did not keep for the document it belongs to (one moved
// to another document, or kept across a replacement) shows as a wrong
// answer; asked counts the documents the filter had to test.
func admitting(q Query, mod uint32, asked *int) Query {
	q.Filter = nil
	q.Admit = func(c Candidate) bool {
		if m := c.Mark(); m>>2 == uint64(mod) {
			return m&3 == 2
		}
		*asked++
		ok := c.Attrs().Tag%mod != 0
		v := uint64(1)
		if ok {
			v = 2
		}
		c.SetMark(uint64(mod)<<2 | v)
		return ok
	}
	return q
}

// checkQuery runs q against ix and checks it against the exhaustive
// scorer (identical hits) and the reference model (same ranking), and
// Count, Match and ScoreDocs against both.
func checkQuery(t *testing.T, ix *Index, ref *refIndex, q Query, what string) {
	t.Helper()
	got, err := ix.Search(q)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	ex := exhaustive(t, ix, q)
	if !slices.Equal(got, ex) {
		t.Fatalf("%s: query %+v\nsearch     %v\nexhaustive %v", what, q.Terms, got, ex)
	}
	rh := ref.search(q)
	checkAgainstRef(t, what, got, rh, q.Limit)
	n, err := ix.Count(q)
	if err != nil || n != len(rh) {
		t.Fatalf("%s: count %d, %v; reference %d", what, n, err, len(rh))
	}
	var matched []memory.ID
	if err := ix.Match(q, func(id memory.ID, _ Attrs) bool { matched = append(matched, id); return true }); err != nil {
		t.Fatal(err)
	}
	want := make([]memory.ID, len(rh))
	for i, h := range rh {
		want[i] = h.id
	}
	cmpID := func(a, b memory.ID) int { return slices.Compare(a[:], b[:]) }
	slices.SortFunc(matched, cmpID)
	slices.SortFunc(want, cmpID)
	if !slices.Equal(matched, want) {
		t.Fatalf("%s: match visits %d documents, reference %d", what, len(matched), len(want))
	}
	if q.Filter != nil {
		// The same filter as an Admit filter that keeps its verdicts in
		// the marks, run twice: the second time it answers from them
		// alone. Its modulus is the smallest that refuses itself.
		mod := uint32(2)
		for q.Filter(memory.ID{}, Attrs{Tag: mod}) {
			mod++
		}
		for pass := range 2 {
			asked := 0
			aq := admitting(q, mod, &asked)
			if hits, err := ix.Search(aq); err != nil || !slices.Equal(hits, got) {
				t.Fatalf("%s: Admit search %v, %v; Filter search %v", what, hits, err, got)
			}
			if n, err := ix.Count(aq); err != nil || n != len(rh) {
				t.Fatalf("%s: Admit count %d, %v; reference %d", what, n, err, len(rh))
			}
			if pass == 1 && asked != 0 {
				t.Fatalf("%s: the second Admit search tested %d documents its marks had answered", what, asked)
			}
		}
	}
	ids := make([]memory.ID, len(got))
	for i, h := range got {
		ids[i] = h.ID
	}
	scores, err := ix.ScoreDocs(q, ids)
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range got {
		if scores[i] != h.Score {
			t.Fatalf("%s: ScoreDocs %v, Search %v", what, scores[i], h.Score)
		}
	}
	// ScoreProximity gives the scores of ScoreDocs with the proximity
	// evidence, for the hits and for documents that may not match or not
	// exist; the evidence does not depend on the field weights.
	for i := range 5 {
		ids = append(ids, testID(i*37))
	}
	if scores, err = ix.ScoreDocs(q, ids); err != nil {
		t.Fatal(err)
	}
	both, prox, err := ix.ScoreProximity(q, ids)
	if err != nil || !slices.Equal(both, scores) {
		t.Fatalf("%s: ScoreProximity %v (%v); ScoreDocs %v", what, both, err, scores)
	}
	unweighted := q
	unweighted.FieldWeights = nil
	if _, want, err := ix.ScoreProximity(unweighted, ids); err != nil || !slices.Equal(prox, want) {
		t.Fatalf("%s: proximity %v with field weights %v, %v (%v) without", what, prox, q.FieldWeights, want, err)
	}
}

// TestSearchEqualsExhaustive is the property test of the top-k search:
// on random corpora changed by random additions, replacements and
// deletions, compacted and reloaded from snapshots now and then, every
// random query gives exactly the hits of scoring every document, and
// the ranking of a reference BM25F computed from scratch over the live
// documents.
func TestSearchEqualsExhaustive(t *testing.T) {
	rounds := 16
	if testing.Short() || raceEnabled {
		rounds = 6
	}
	for seed := range uint64(rounds) {
		nf := 1 + int(seed%3)
		g := newRandCorpus(seed, nf, 20+int(seed%5)*15)
		if seed%4 == 3 {
			g = newRandCorpus(seed, nf, 12)
			g.uniform = true
		}
		cfg := testConfig(nf)
		ref := newRef(cfg)
		ndocs := 100 + g.r.IntN(500)
		ix := buildFrom(t, cfg, g.docs(ndocs, ref))
		ix.SetAutoCompact(seed%2 == 0)
		next := ndocs
		for step := range 10 {
			what := fmt.Sprintf("seed %d step %d", seed, step)
			for range g.r.IntN(60) {
				switch op := g.r.IntN(10); {
				case op < 4: // new document
					d := g.doc(testID(next))
					next++
					if err := ix.Add(d); err != nil {
						t.Fatal(err)
					}
					ref.add(d)
				case op < 7: // replace
					d := g.doc(testID(g.r.IntN(next)))
					if err := ix.Add(d); err != nil {
						t.Fatal(err)
					}
					ref.add(d)
				default: // delete
					id := testID(g.r.IntN(next))
					_, had := ref.docs[id]
					if ix.Delete(id) != had {
						t.Fatalf("%s: Delete(%s) disagrees with the reference (%v)", what, id, had)
					}
					ref.del(id)
				}
			}
			switch g.r.IntN(5) {
			case 0:
				ix.Compact()
			case 1:
				data := ix.Snapshot().AppendTo(nil, []byte(what))
				loaded, label, err := LoadSnapshot(cfg, data)
				if err != nil || string(label) != what {
					t.Fatalf("%s: load snapshot: %v, label %q", what, err, label)
				}
				ix = loaded
			}
			st := ix.Stats()
			if st.Docs != len(ref.docs) {
				t.Fatalf("%s: %d documents, reference %d", what, st.Docs, len(ref.docs))
			}
			for range 15 {
				checkQuery(t, ix, ref, g.query(ix), what)
			}
		}
	}
}

func TestSearchErrors(t *testing.T) {
	ix, err := New(testConfig(2))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []Query{
		{Limit: -1},
		{Limit: 1, Terms: []QueryTerm{{Term: "a", Weight: -1}}},
		{Limit: 1, FieldWeights: []float64{1}},
		{Limit: 1, FieldWeights: []float64{1, -2}},
	} {
		if _, err := ix.Search(q); err == nil {
			t.Errorf("Search(%+v) succeeded", q)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []Config{
		{Analyzer: wordsAnalyzer{}},
		{Analyzer: wordsAnalyzer{}, Fields: []Field{{Name: "a", Weight: 0, B: 0.5}}},
		{Analyzer: wordsAnalyzer{}, Fields: []Field{{Name: "a", Weight: 1, B: 2}}},
		{Analyzer: wordsAnalyzer{}, Fields: []Field{{Name: "a", Weight: 1}, {Name: "a", Weight: 1}}},
		{Fields: []Field{{Name: "a", Weight: 1}}},
		{Analyzer: wordsAnalyzer{}, Fields: []Field{{Name: "a", Weight: 1}}, K1: -1},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}
