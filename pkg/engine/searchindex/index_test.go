package searchindex

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"

	"memsvc.dev/memsvc/pkg/memory"
)

func buildFrom(t *testing.T, cfg Config, docs []*Document) *Index {
	t.Helper()
	ix, err := Build(cfg, func(add AddFunc) error {
		for _, d := range docs {
			if err := add(d); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// addAll returns a new index to which docs were added one by one.
func addAll(t *testing.T, cfg Config, docs []*Document) *Index {
	t.Helper()
	ix, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if err := ix.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	return ix
}

func TestBuildIsDeterministicAndMatchesAdd(t *testing.T) {
	g := newRandCorpus(11, 3, 40)
	docs := g.docs(5000, nil) // several chunks per worker, postings laid out in parallel
	cfg := testConfig(3)
	a := buildFrom(t, cfg, docs).Snapshot().AppendTo(nil, nil)
	b := buildFrom(t, cfg, docs).Snapshot().AppendTo(nil, nil)
	c := addAll(t, cfg, docs).Snapshot().AppendTo(nil, nil)
	if !bytes.Equal(a, b) || !bytes.Equal(a, c) {
		t.Fatal("two builds, or a build and additions, of the same documents differ")
	}
}

func TestBuildErrors(t *testing.T) {
	cfg := testConfig(1)
	d := &Document{ID: testID(1), Fields: [MaxFields][]string{{"a"}}}
	_, err := Build(cfg, func(add AddFunc) error {
		for range 2 {
			if err := add(d); err != nil {
				return err
			}
		}
		return nil
	})
	if !errors.Is(err, ErrDuplicate) {
		t.Errorf("duplicate: %v", err)
	}
	boom := errors.New("boom")
	_, err = Build(cfg, func(add AddFunc) error {
		for i := range 1000 {
			if err := add(&Document{ID: testID(i), Fields: [MaxFields][]string{{"a"}}}); err != nil {
				return err
			}
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("fill error: %v", err)
	}
	if _, err := Build(Config{}, func(AddFunc) error { return nil }); !errors.Is(err, ErrConfig) {
		t.Errorf("bad config: %v", err)
	}
}

func TestDocumentsWithoutTerms(t *testing.T) {
	ix, err := New(testConfig(2))
	if err != nil {
		t.Fatal(err)
	}
	id := testID(1)
	if err := ix.Add(&Document{ID: id, Fields: [MaxFields][]string{{"  "}, {""}}}); err != nil {
		t.Fatal(err)
	}
	if ix.Has(id) || ix.Stats().Docs != 0 {
		t.Fatal("a document without terms was indexed")
	}
	if err := ix.Add(&Document{ID: id, Fields: [MaxFields][]string{{"x y"}}}); err != nil {
		t.Fatal(err)
	}
	if !ix.Has(id) {
		t.Fatal("document missing")
	}
	// Replacing it with no terms removes it.
	if err := ix.Add(&Document{ID: id}); err != nil {
		t.Fatal(err)
	}
	if ix.Has(id) || ix.DocFreq("x") != 0 || ix.Stats().FieldLengths[0] != 0 {
		t.Fatalf("document still indexed: %+v", ix.Stats())
	}
	if ix.Delete(id) {
		t.Error("Delete of a missing document reported true")
	}
}

func TestTermsOf(t *testing.T) {
	ix, err := New(testConfig(3))
	if err != nil {
		t.Fatal(err)
	}
	d := &Document{ID: testID(1), Fields: [MaxFields][]string{{"a b", "", "c a"}, nil, {"d"}}}
	if err := ix.Add(d); err != nil {
		t.Fatal(err)
	}
	terms, ok := ix.TermsOf(d.ID)
	want := [MaxFields][]string{{"a", "b", "c", "a"}, {}, {"d"}}
	if !ok || fmt.Sprint(terms) != fmt.Sprint(want) {
		t.Errorf("TermsOf = %q, %v; want %q", terms, ok, want)
	}
	if _, ok := ix.TermsOf(testID(2)); ok {
		t.Error("TermsOf a missing document")
	}
	if st := ix.Stats(); st.FieldLengths != [MaxFields]int64{4, 0, 1} || st.Terms != 4 {
		t.Errorf("stats %+v", st)
	}
}

func TestProximity(t *testing.T) {
	ix, err := New(testConfig(2))
	if err != nil {
		t.Fatal(err)
	}
	docs := []*Document{
		{ID: testID(1), Fields: [MaxFields][]string{{"red apple pie on the table"}}},
		{ID: testID(2), Fields: [MaxFields][]string{{"red car and a green apple far far far away pie"}}},
		{ID: testID(3), Fields: [MaxFields][]string{{"red", "apple pie"}}},
		{ID: testID(4), Fields: [MaxFields][]string{{"red"}, {"apple pie"}}},
		{ID: testID(5), Fields: [MaxFields][]string{{"pie apple red on the table"}}},
		{ID: testID(6), Fields: [MaxFields][]string{{"nothing here"}}},
	}
	for _, d := range docs {
		if err := ix.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	q := Query{Terms: ix.QueryTerms("red apple pie")}
	ids := []memory.ID{testID(1), testID(2), testID(3), testID(4), testID(5), testID(6), testID(7)}
	_, px, err := ix.ScoreProximity(q, ids)
	if err != nil {
		t.Fatal(err)
	}
	type got struct{ matched, window, adjacent int }
	want := []got{
		{3, 3, 2}, // red apple pie: the phrase
		{3, 11, 0},
		{3, 0, 1}, // red | apple pie: no single text has all three
		{3, 0, 1}, // fields are apart too
		{3, 3, 0}, // reversed: close, but not in query order
		{0, 0, 0},
		{0, 0, 0}, // not indexed
	}
	for i, w := range want {
		g := got{px[i].Matched, px[i].Window, px[i].Adjacent}
		if g != w {
			t.Errorf("doc %d: %+v, want %+v", i+1, g, w)
		}
	}
	// BM25TP: closer pairs score more; a scattered or split document
	// scores less than the phrase.
	if !(px[0].Score > px[1].Score && px[0].Score > px[2].Score && px[4].Score == px[0].Score && px[5].Score == 0) {
		t.Errorf("scores %v", px)
	}
	if px[3].Score >= px[2].Score && px[2].Score != px[3].Score {
		t.Errorf("split over fields %v, over texts %v", px[3].Score, px[2].Score)
	}
	// By hand for document 1: pairs at distance 1 (red-apple,
	// apple-pie) and 2 (red-pie): acc(red) = 1 + 1/4, acc(apple) = 2,
	// acc(pie) = 1 + 1/4.
	ix.mu.RLock()
	c := ix.c
	p, _ := ix.prepare(c, &q)
	avg := float64(c.lens[0]+c.lens[1]) / float64(c.live)
	k := DefaultK1 * (1 - 0.75 + 0.75*6/avg)
	want0 := 0.0
	for qi, acc := range []float64{1.25, 2, 1.25} {
		want0 += min(1, p.terms[qi].idf) * acc * (DefaultK1 + 1) / (acc + k)
	}
	ix.mu.RUnlock()
	if !near(px[0].Score, want0) {
		t.Errorf("document 1: proximity score %v, want %v", px[0].Score, want0)
	}
}

func TestDistinctiveTermsAndScoreDocs(t *testing.T) {
	ix, err := New(testConfig(1))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		text := "common words everywhere"
		if i == 3 {
			text += " rare rare rare unusual"
		}
		if err := ix.Add(&Document{ID: testID(i), Fields: [MaxFields][]string{{text}}}); err != nil {
			t.Fatal(err)
		}
	}
	got := ix.DistinctiveTerms(testID(3), 2)
	if len(got) != 2 || got[0].Term != "rare" || got[1].Term != "unusual" || !(got[0].Weight > got[1].Weight) {
		t.Errorf("DistinctiveTerms = %v", got)
	}
	if ix.DistinctiveTerms(testID(99), 3) != nil {
		t.Error("DistinctiveTerms of a missing document")
	}
	q := Query{Terms: ix.QueryTerms("rare common"), Limit: 5}
	scores, err := ix.ScoreDocs(q, []memory.ID{testID(3), testID(4), testID(99)})
	if err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Search(q)
	if err != nil {
		t.Fatal(err)
	}
	if hits[0].ID != testID(3) || scores[0] != hits[0].Score || scores[1] == 0 || scores[2] != 0 {
		t.Errorf("ScoreDocs %v, hits %v", scores, hits)
	}
	if n := ix.DocFreq("common"); n != 20 {
		t.Errorf("DocFreq = %d", n)
	}
}

// TestZeroWeights pins the meaning of zero weights: a term of weight 0
// neither ranks nor matches on its own, but is required with All; a
// field of weight 0 is ignored.
func TestZeroWeights(t *testing.T) {
	ix, err := New(testConfig(2))
	if err != nil {
		t.Fatal(err)
	}
	docs := map[int][2]string{1: {"what apple", ""}, 2: {"what", "apple"}, 3: {"what", ""}}
	for i, f := range docs {
		if err := ix.Add(&Document{ID: testID(i), Fields: [MaxFields][]string{{f[0]}, {f[1]}}}); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(hits []Hit) (out []memory.ID) {
		for _, h := range hits {
			out = append(out, h.ID)
		}
		return out
	}
	what0 := []QueryTerm{{Term: "what", Weight: 0}, {Term: "apple", Weight: 1}}
	hits, _ := ix.Search(Query{Terms: what0, Limit: 10})
	if len(hits) != 2 {
		t.Errorf("any: %v", hits)
	}
	hits, _ = ix.Search(Query{Terms: []QueryTerm{{Term: "what", Weight: 0}}, Limit: 10})
	if len(hits) != 0 {
		t.Errorf("only a zero-weight term: %v", hits)
	}
	hits, _ = ix.Search(Query{Terms: what0, Limit: 10, All: true, FieldWeights: []float64{1, 0}})
	if got := ids(hits); !slices.Equal(got, []memory.ID{testID(1)}) {
		t.Errorf("all, second field ignored: %v", got)
	}
	n, _ := ix.Count(Query{Terms: []QueryTerm{{Term: "what", Weight: 0}}, All: true})
	if n != 3 {
		t.Errorf("count of a zero-weight term with All: %d", n)
	}
}

// TestStaleBounds grows the average length far past the one the
// postings were laid out for: searches fall back to looser bounds and
// stay exact, and a background rebuild restores the block bounds.
func TestStaleBounds(t *testing.T) {
	g := newRandCorpus(21, 2, 25)
	cfg := testConfig(2)
	ref := newRef(cfg)
	ix := buildFrom(t, cfg, g.docs(500, ref))
	ix.SetAutoCompact(false)
	long := func(i int) *Document {
		d := g.doc(testID(1000 + i))
		for range 8 {
			d.Fields[0] = append(d.Fields[0], g.text(), g.text())
		}
		return d
	}
	for i := range 300 {
		d := long(i)
		if err := ix.Add(d); err != nil {
			t.Fatal(err)
		}
		ref.add(d)
	}
	ix.mu.RLock()
	fresh := ix.c.boundsFresh(ptr(ix.c.nl()))
	ix.mu.RUnlock()
	if fresh {
		t.Fatal("bounds still fresh after the averages grew")
	}
	for range 100 {
		checkQuery(t, ix, ref, g.query(ix), "stale")
	}
	ix.SetAutoCompact(true)
	if err := ix.Add(long(300)); err != nil { // starts the rebuild
		t.Fatal(err)
	}
	ref.add(long(300))
	deadline := time.Now().Add(10 * time.Second)
	for {
		ix.mu.RLock()
		fresh = ix.c.boundsFresh(ptr(ix.c.nl()))
		ix.mu.RUnlock()
		if fresh {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no background rebuild within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestAutoCompaction(t *testing.T) {
	g := newRandCorpus(22, 1, 25)
	cfg := testConfig(1)
	ref := newRef(cfg)
	ix, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		d := g.doc(testID(i))
		if err := ix.Add(d); err != nil {
			t.Fatal(err)
		}
		ref.add(d)
	}
	for i := range 1000 {
		ix.Delete(testID(i))
		ref.del(testID(i))
	}
	deadline := time.Now().Add(10 * time.Second)
	for st := ix.Stats(); st.Deleted >= compactMinDead && st.Deleted*compactRatio >= st.Docs; st = ix.Stats() {
		if time.Now().After(deadline) {
			t.Fatalf("deleted documents not reclaimed within 10 s: %+v", ix.Stats())
		}
		time.Sleep(time.Millisecond)
	}
	for range 50 {
		checkQuery(t, ix, ref, g.query(ix), "after compaction")
	}
}

func TestDocumentNumbersRunOut(t *testing.T) {
	ix, err := New(testConfig(1))
	if err != nil {
		t.Fatal(err)
	}
	ix.SetAutoCompact(false)
	ix.c.maxDocs = 10
	add := func(i int) error {
		return ix.Add(&Document{ID: testID(i), Fields: [MaxFields][]string{{fmt.Sprintf("t%d shared", i)}}})
	}
	for i := range 10 {
		if err := add(i); err != nil {
			t.Fatal(err)
		}
	}
	if err := add(10); !errors.Is(err, ErrFull) {
		t.Fatalf("eleventh document: %v, want ErrFull", err)
	}
	ix.Delete(testID(3))
	if err := add(10); err != nil { // compacts in place
		t.Fatal(err)
	}
	if st := ix.Stats(); st.Docs != 10 || st.Deleted != 0 {
		t.Errorf("stats %+v", st)
	}
	if n, _ := ix.Count(Query{Terms: ix.QueryTerms("shared")}); n != 10 {
		t.Errorf("count %d", n)
	}
}

// TestConcurrentUse runs searchers, a writer and compactions together
// (under -race this checks the locking and the lock-free reads of
// compaction and snapshots), then compares the final index with the
// reference.
func TestConcurrentUse(t *testing.T) {
	g := newRandCorpus(23, 2, 30)
	cfg := testConfig(2)
	ref := newRef(cfg)
	ix := buildFrom(t, cfg, g.docs(800, ref))
	queries := make([]Query, 64)
	for i := range queries {
		queries[i] = g.query(ix)
		queries[i].Filter = nil // the reference's filters are not safe to share
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 16)
	for s := range 8 {
		wg.Go(func() {
			for i := s; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				q := queries[i%len(queries)]
				hits, err := ix.Search(q)
				if err == nil && !slices.IsSortedFunc(hits, func(a, b Hit) int {
					if a.Score > b.Score {
						return -1
					}
					return 1
				}) {
					err = fmt.Errorf("hits out of order: %v", hits)
				}
				if err == nil && len(hits) > q.Limit {
					err = fmt.Errorf("%d hits for limit %d", len(hits), q.Limit)
				}
				if err != nil {
					errs <- err
					return
				}
				if i%16 == 0 {
					ix.Snapshot().AppendTo(nil, nil)
				}
			}
		})
	}
	writes := make([]*Document, 0, 1500)
	for i := range 1500 {
		var d *Document
		switch i % 3 {
		case 0:
			d = g.doc(testID(1000 + i))
		case 1:
			d = g.doc(testID(i % 800))
		default:
			d = &Document{ID: testID(i % 900)} // deletes
		}
		writes = append(writes, d)
	}
	for i, d := range writes {
		if err := ix.Add(d); err != nil {
			t.Fatal(err)
		}
		ref.add(d)
		if i%500 == 0 {
			ix.Compact()
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, q := range queries {
		checkQuery(t, ix, ref, q, "after concurrent use")
	}
}

func TestImpactLevels(t *testing.T) {
	for _, x := range []float64{0, 1e-9, 0.003, 0.5, 1, 1.0000001, 3.7, 200, 240, 1e6, math.MaxFloat64} {
		q := impactLevel(x)
		if impactBound[q] < x || q > 1 && impactBound[q-1] >= x {
			t.Errorf("impactLevel(%v) = %d (bounds %v, %v)", x, q, impactBound[q-1], impactBound[q])
		}
	}
}

func TestIDTable(t *testing.T) {
	var tab idTable
	var docs []docEntry
	live := map[memory.ID]uint32{}
	for i := range 5000 {
		docs = append(docs, docEntry{id: testID(i)})
		tab.insert(docs, uint32(i))
		live[testID(i)] = uint32(i)
		if i%3 == 0 {
			id := testID(i / 2)
			n, ok := tab.remove(docs, id)
			if _, want := live[id]; ok != want || ok && n != live[id] {
				t.Fatalf("remove %d: %d, %v", i/2, n, ok)
			}
			delete(live, id)
		}
	}
	for i := range 5001 {
		n, ok := tab.find(docs, testID(i))
		if want, wantOK := live[testID(i)]; ok != wantOK || n != want {
			t.Fatalf("find %d: %d, %v; want %d, %v", i, n, ok, want, wantOK)
		}
	}
	if tab.live != len(live) || tab.used*4 > len(tab.slots)*3 {
		t.Errorf("live %d (want %d), used %d of %d slots", tab.live, len(live), tab.used, len(tab.slots))
	}
}

// TestTermsDoNotPinTexts checks that the vocabulary holds copies of its
// terms, not parts of the documents' texts.
func TestTermsDoNotPinTexts(t *testing.T) {
	ix, err := New(testConfig(1))
	if err != nil {
		t.Fatal(err)
	}
	ix.SetAutoCompact(false)
	text := "alpha beta"
	if err := ix.Add(&Document{ID: testID(1), Fields: [MaxFields][]string{{text}}}); err != nil {
		t.Fatal(err)
	}
	for _, term := range ix.c.texts[1:] {
		if unsafe.StringData(term) == unsafe.StringData(text) || unsafe.StringData(term) == unsafe.StringData(text[6:]) {
			t.Errorf("term %q shares the document's text", term)
		}
	}
}

// TestSearchDoesNotHoldTheLock has a filter and a Match callback wait
// for a writer: they would wait forever if searches held the lock.
func TestSearchDoesNotHoldTheLock(t *testing.T) {
	ix, err := New(testConfig(1))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := ix.Add(&Document{ID: testID(i), Fields: [MaxFields][]string{{"shared words"}}}); err != nil {
			t.Fatal(err)
		}
	}
	next := 100
	write := func() bool {
		done := make(chan error, 1)
		go func() {
			next++
			done <- ix.Add(&Document{ID: testID(next), Fields: [MaxFields][]string{{"shared later"}}})
		}()
		select {
		case err := <-done:
			return err == nil
		case <-time.After(10 * time.Second):
			return false
		}
	}
	q := Query{Terms: ix.QueryTerms("shared"), Limit: 5}
	q.Filter = func(memory.ID, Attrs) bool { return write() }
	hits, err := ix.Search(q)
	if err != nil || len(hits) != 5 {
		t.Fatalf("search: %v, %v", hits, err)
	}
	q.Filter = nil
	seen := 0
	err = ix.Match(q, func(memory.ID, Attrs) bool {
		seen++
		if !write() {
			t.Error("a writer waited for Match")
			return false
		}
		return seen < 3
	})
	if err != nil || seen != 3 {
		t.Fatalf("match: %d, %v", seen, err)
	}
	// The search ran on the index as it was: the documents added meanwhile
	// count from the next search on.
	if n, _ := ix.Count(q); n != 10+next-100 {
		t.Errorf("count %d, want %d", n, 10+next-100)
	}
}

// TestVerbatimField checks that a verbatim field takes its texts as terms
// (not analysed, empty ones dropped), that its terms meet query terms only
// by equality, and that snapshots record the field's kind.
func TestVerbatimField(t *testing.T) {
	cfg := testConfig(2)
	cfg.Fields[1].Verbatim = true
	ix, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	docs := []*Document{
		{ID: testID(1), Fields: [MaxFields][]string{{"may we meet"}, {"#may 2023", "", "#sunday"}}},
		{ID: testID(2), Fields: [MaxFields][]string{{"in may"}, {"#june 2023"}}},
	}
	for _, d := range docs {
		if err := ix.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	terms, _ := ix.TermsOf(testID(1))
	if !slices.Equal(terms[1], []string{"#may 2023", "#sunday"}) {
		t.Errorf("verbatim terms %q", terms[1])
	}
	hits, err := ix.Search(Query{Terms: []QueryTerm{{Term: "#may 2023", Weight: 1}}, Limit: 5})
	if err != nil || len(hits) != 1 || hits[0].ID != testID(1) {
		t.Errorf("verbatim term search: %v, %v", hits, err)
	}
	hits, err = ix.Search(Query{Terms: ix.QueryTerms("may"), Limit: 5})
	if err != nil || len(hits) != 2 {
		t.Errorf("analysed term search: %v, %v", hits, err)
	}
	data := ix.Snapshot().AppendTo(nil, nil)
	if _, _, err := LoadSnapshot(testConfig(2), data); !errors.Is(err, ErrStale) {
		t.Errorf("a verbatim field loaded as an analysed one: %v", err)
	}
	again, _, err := LoadSnapshot(cfg, data)
	if err != nil {
		t.Fatal(err)
	}
	if terms, _ := again.TermsOf(testID(1)); !slices.Equal(terms[1], []string{"#may 2023", "#sunday"}) {
		t.Errorf("verbatim terms after loading %q", terms[1])
	}
}

// TestScoreAdded checks that a document scored without being added gets
// exactly the score Search gives it once it is added.
func TestScoreAdded(t *testing.T) {
	for nf := 1; nf <= 3; nf++ {
		g := newRandCorpus(uint64(20+nf), nf, 60)
		ix, err := New(testConfig(nf))
		if err != nil {
			t.Fatal(err)
		}
		for i := range 300 {
			if err := ix.Add(g.doc(testID(i))); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 40 {
			d := g.doc(testID(1000 + i))
			q := g.query(ix)
			if i%2 == 0 {
				q.FieldWeights = nil // the document's term counts in field 0 then
			}
			q.Terms = append(q.Terms, QueryTerm{Term: "unseen-" + fmt.Sprint(i), Weight: 1})
			d.Fields[0] = append(d.Fields[0], "unseen-"+fmt.Sprint(i))
			want, err := ix.ScoreAdded(q, d)
			if err != nil {
				t.Fatal(err)
			}
			if err := ix.Add(d); err != nil {
				t.Fatal(err)
			}
			got, err := ix.ScoreDocs(q, []memory.ID{d.ID})
			if err != nil {
				t.Fatal(err)
			}
			if got[0] != want || want == 0 && q.FieldWeights == nil {
				t.Fatalf("%d fields, document %d: ScoreAdded %v, after Add %v", nf, i, want, got[0])
			}
			ix.Delete(d.ID)
		}
	}
}

// TestClear: a cleared index holds nothing, scores as an empty one, and
// takes documents again, also while a compaction has work to do.
func TestClear(t *testing.T) {
	g := newRandCorpus(31, 1, 40)
	ix, err := New(testConfig(1))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 600 {
		if err := ix.Add(g.doc(testID(i))); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 400 {
		ix.Delete(testID(i)) // enough deletions to start a compaction
	}
	ix.Clear()
	if s := ix.Stats(); s.Docs != 0 || s.FieldLengths[0] != 0 || ix.Has(testID(500)) {
		t.Fatalf("after Clear: %+v", s)
	}
	q := g.query(ix)
	if hits, err := ix.Search(q); err != nil || len(hits) != 0 {
		t.Fatalf("search after Clear: %d hits, %v", len(hits), err)
	}
	fresh, err := New(testConfig(1))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1000; i < 1100; i++ {
		d := g.doc(testID(i))
		if err := ix.Add(d); err != nil {
			t.Fatal(err)
		}
		if err := fresh.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	for range 20 {
		q := g.query(ix)
		q.Limit = 10
		a, err1 := ix.Search(q)
		b, err2 := fresh.Search(q)
		if err1 != nil || err2 != nil || !slices.Equal(a, b) {
			t.Fatalf("cleared index and fresh one differ: %v %v (%v %v)", a, b, err1, err2)
		}
	}
}

// TestDocuments: Documents lists the live documents with their
// attributes, in the order they were added, and stops when asked to.
func TestDocuments(t *testing.T) {
	ix, err := New(testConfig(1))
	if err != nil {
		t.Fatal(err)
	}
	var want []memory.ID
	for i := range 200 {
		d := &Document{ID: testID(i), Attrs: Attrs{Time: int64(i), Tag: uint32(i % 3)}}
		d.Fields[0] = []string{fmt.Sprintf("common word%d", i)}
		if err := ix.Add(d); err != nil {
			t.Fatal(err)
		}
		if i%5 != 0 {
			want = append(want, testID(i))
		}
	}
	for i := 0; i < 200; i += 5 {
		ix.Delete(testID(i))
	}
	var got []memory.ID
	ix.Documents(func(id memory.ID, a Attrs) bool {
		if a.Tag != uint32(a.Time%3) || testID(int(a.Time)) != id {
			t.Fatalf("document %s has attributes %+v", id, a)
		}
		got = append(got, id)
		return true
	})
	if !slices.Equal(got, want) {
		t.Fatalf("Documents listed %d ids, want %d", len(got), len(want))
	}
	n := 0
	ix.Documents(func(memory.ID, Attrs) bool { n++; return n < 7 })
	if n != 7 {
		t.Fatalf("Documents went on after false: %d calls", n)
	}
}

// TestMarks: a document's mark starts at 0, is what SetMark or an Admit
// filter last set, belongs to the document it was set on (a replacement
// starts at 0 again), survives compaction, in the background or in
// place when document numbers run out, and is not kept in snapshots.
func TestMarks(t *testing.T) {
	ix, err := New(testConfig(1))
	if err != nil {
		t.Fatal(err)
	}
	ix.SetAutoCompact(false)
	doc := func(i int, text string) *Document {
		return &Document{ID: testID(i), Fields: [MaxFields][]string{{text}}}
	}
	const n = 1500 // three mark blocks
	for i := range n {
		if err := ix.Add(doc(i, fmt.Sprintf("t%d shared", i))); err != nil {
			t.Fatal(err)
		}
	}
	want := map[memory.ID]uint64{}
	check := func(what string) {
		t.Helper()
		for i := range n {
			id := testID(i)
			m, ok := ix.Mark(id)
			w := want[id] // 0 for the deleted ones, which have no mark
			if ok != ix.Has(id) || m != w {
				t.Fatalf("%s: document %d: mark %d, %v; want %d", what, i, m, ok, w)
			}
		}
	}
	check("new documents")
	for i := range n {
		if i%3 != 0 {
			if !ix.SetMark(testID(i), uint64(i)+1) {
				t.Fatalf("SetMark(%d) found no document", i)
			}
			want[testID(i)] = uint64(i) + 1
		}
	}
	check("after SetMark")
	// An Admit filter sets marks through the candidates it is asked about.
	hits, err := ix.Search(Query{Terms: ix.QueryTerms("t3 t6"), Limit: 10, Admit: func(c Candidate) bool {
		c.SetMark(c.Mark() + 1000)
		return true
	}})
	if err != nil || len(hits) != 2 {
		t.Fatalf("Admit search: %v, %v", hits, err)
	}
	for _, i := range []int{3, 6} {
		want[testID(i)] += 1000
	}
	check("after an Admit search")
	if err := ix.Add(doc(7, "replaced")); err != nil {
		t.Fatal(err)
	}
	want[testID(7)] = 0
	for i := 0; i < n; i += 4 {
		ix.Delete(testID(i))
		delete(want, testID(i))
	}
	if ix.SetMark(testID(0), 5) {
		t.Fatal("SetMark of a deleted document found one")
	}
	check("after replacing and deleting")
	ix.Compact()
	if st := ix.Stats(); st.Deleted != 0 {
		t.Fatalf("compaction left %d deleted documents", st.Deleted)
	}
	check("after compaction")
	// Compaction in place, when document numbers run out.
	ix.c.maxDocs = uint64(len(ix.c.docs))
	ix.Delete(testID(1))
	delete(want, testID(1))
	if err := ix.Add(doc(n+1, "one more")); err != nil {
		t.Fatal(err)
	}
	if st := ix.Stats(); st.Deleted != 0 {
		t.Fatalf("adding past the document numbers did not compact: %+v", st)
	}
	check("after compaction in place")
	loaded, _, err := LoadSnapshot(ix.Config(), ix.Snapshot().AppendTo(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	ix = loaded
	for id := range want {
		want[id] = 0
	}
	check("after loading a snapshot")
}

// TestMarksDuringCompaction: documents added, replaced and deleted while
// a background compaction runs keep their own marks when it switches
// over (compact applies what changed meanwhile, marks included).
func TestMarksDuringCompaction(t *testing.T) {
	const n = 20_000
	docs := make([]*Document, n)
	for i := range docs {
		docs[i] = &Document{ID: testID(i), Fields: [MaxFields][]string{{fmt.Sprintf("t%d shared", i)}}}
	}
	ix := buildFrom(t, testConfig(1), docs)
	want := map[memory.ID]uint64{}
	for i := range n {
		ix.SetMark(testID(i), uint64(i)+1)
		want[testID(i)] = uint64(i) + 1
	}
	// A third deleted starts a background compaction; the writes below
	// go on beside it until it has finished (or a bounded number).
	for i := 0; i < n; i += 3 {
		ix.Delete(testID(i))
		delete(want, testID(i))
	}
	if !ix.compacting.Load() {
		t.Fatal("deleting a third of the documents started no compaction")
	}
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; i < 5000 && ix.compacting.Load(); i++ {
		id := testID(n + i)
		switch i % 3 {
		case 1:
			id = testID(3*i + 1) // replaces a document that has a mark
		case 2:
			ix.Delete(testID(3*i + 2))
			delete(want, testID(3*i+2))
			continue
		}
		if err := ix.Add(&Document{ID: id, Fields: [MaxFields][]string{{"added meanwhile"}}}); err != nil {
			t.Fatal(err)
		}
		if m, _ := ix.Mark(id); m != 0 {
			t.Fatalf("document %d added meanwhile has mark %d", i, m)
		}
		ix.SetMark(id, uint64(1e9+i))
		want[id] = uint64(1e9 + i)
	}
	for ix.compacting.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the background compaction did not finish within 20 s")
		}
		time.Sleep(time.Millisecond)
	}
	for i := range n + 5000 {
		id := testID(i)
		m, ok := ix.Mark(id)
		if _, live := want[id]; ok != live || m != want[id] {
			t.Fatalf("document %d: mark %d, indexed %v; want %d, indexed %v", i, m, ok, want[id], live)
		}
	}
}
