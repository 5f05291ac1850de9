package engine

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/engine/textindex"
	"memsvc.dev/memsvc/pkg/memory"
)

// TestIndexTermsAreRecordTerms: the term sets similarity linking compares,
// read from the namespace's text index (indexTerms), are the sets
// textindex.Tokenize gives for the record's texts (recordTermSet): for
// several blocks, structured data, a summary and meta-memory, texts that
// end or start mid-token, and words stored a second time (then the
// analyzer takes them from its stem cache).
func TestIndexTermsAreRecordTerms(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: -1})
	ctx := context.Background()
	summary := "Summary: rotating deploy-keys"
	intent := "rotate the API key before Friday"
	reqs := []memory.EncodeStoreRequest{
		{Content: memory.TextContent("The deploy pipeline failed; deploying again fixed the deployments.")},
		{Content: memory.TextContent("connection connected connecting connections, running runner runs")},
		{Content: memory.TextContent("中文分词测试 and ümlauts über naïve café")},
		{Content: memory.MemoryContent{Blocks: []memory.ContentBlock{
			memory.TextBlock("the first block ends mid-"),
			memory.TextBlock("word and the second starts: v1.2.3"),
			{Modality: memory.ModalityStructured, Format: "application/json", Data: memory.Bytes(`{"owner":"ops team","ports":[8080,443]}`)},
		}, Summary: &summary}},
		{Content: memory.TextContent("rotated keys expire after 90 days"),
			Meta: &memory.MetaMemory{CaptureStatus: memory.CaptureProvided, Intent: &intent, Tags: []string{"security", "key-rotation"}}},
	}
	gen := textindex.NewCorpusGen(3)
	for range 20 {
		reqs = append(reqs, memory.EncodeStoreRequest{Content: memory.TextContent(gen.Document())})
	}
	ns := h.e.defaultSpace()
	for round := range 2 { // the second round finds the words in the stem cache
		for i := range reqs {
			resp, err := h.e.EncodeStore(ctx, &reqs[i])
			if err != nil {
				t.Fatal(err)
			}
			want := slices.Sorted(maps.Keys(recordTermSet(h.record(resp.RecordID))))
			if got := ns.indexTerms(resp.RecordID); !slices.Equal(got, want) {
				t.Errorf("round %d, record %d: index terms %q, record terms %q", round, i, got, want)
			}
		}
	}
	if got := ns.indexTerms(memory.MustParseID("0196a9e2-5c1d-7f00-8a00-0000000000aa")); got != nil {
		t.Errorf("terms of a record never stored: %q", got)
	}
}

// TestJaccardSorted: jaccardSorted over sorted sets is jaccard over the
// same sets as maps.
func TestJaccardSorted(t *testing.T) {
	sets := [][]string{nil, {"a"}, {"a", "b"}, {"b", "c", "d"}, {"a", "b", "c", "d", "e"}, {"x", "y"}}
	for _, a := range sets {
		for _, b := range sets {
			ma, mb := map[string]bool{}, map[string]bool{}
			for _, t := range a {
				ma[t] = true
			}
			for _, t := range b {
				mb[t] = true
			}
			gj, gn := jaccardSorted(a, b)
			wj, wn := jaccard(ma, mb)
			if gj != wj || gn != wn {
				t.Errorf("jaccardSorted(%q, %q) = %v, %d; jaccard %v, %d", a, b, gj, gn, wj, wn)
			}
		}
	}
}

// TestSimilarityLinksStemsThatStemAgain: the linker searches with index
// terms as they are. Stemming is not idempotent ("releases" is indexed as
// "releas", which stems again to "relea"), so analysing the chosen terms
// again as query text searched for terms no record holds: two records
// that share only such words were never linked. They are now, with the
// Jaccard overlap of their terms (4 shared of 5).
func TestSimilarityLinksStemsThatStemAgain(t *testing.T) {
	h := newHarness(t, Options{})
	words := "releases databases purchases licenses"
	for _, term := range textindex.Tokenize(words) {
		if again := textindex.Tokenize(term); slices.Equal(again, []string{term}) {
			t.Fatalf("term %q stems to itself: the test needs terms that change when analysed again", term)
		}
	}
	a := h.store(words, memory.StoreEpisodic)
	h.store("lunch menu has soup today", memory.StoreEpisodic)
	b := h.store(words+" pending", memory.StoreEpisodic)
	if err := h.e.syncLinks(t.Context()); err != nil {
		t.Fatal(err)
	}
	as := h.record(b).Associations
	if len(as) != 1 || as[0].TargetID != a || as[0].Weight != 0.8 || as[0].Origin != memory.OriginSimilarity {
		t.Fatalf("links of the second record %+v, want one to the first with weight 0.8", as)
	}
}

// TestSimilarityFindsNearDuplicates: the linker searches with a record's
// similarQueryTerms rarest terms and compares the best matches only, so
// it may miss a record whose overlap is made of common words. On a store
// of generated documents where a third are in clusters of three (a
// document and two copies with about a third of their words replaced)
// it links a record to what an exhaustive comparison with every other
// record links it to, less at most one link in a hundred: each record's
// best similarLinks partners with Jaccard overlap at least similarJaccard.
// With 12 or 8 query terms it finds all 726 such links here, with 6
// 723, with 4 704.
func TestSimilarityFindsNearDuplicates(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: -1})
	h.e.opts.SimilarLinks = 3 // linked by hand below, not in the background
	ctx := context.Background()
	gen := textindex.NewCorpusGen(11)
	r := rand.New(rand.NewPCG(1, 2))
	var texts []string
	for range 150 {
		base := strings.Fields(gen.Document())
		texts = append(texts, strings.Join(base, " "))
		for range 2 {
			v := slices.Clone(base)
			for i := range v {
				if r.Float64() < 0.35 {
					v[i] = strings.Fields(gen.Document())[0]
				}
			}
			texts = append(texts, strings.Join(v, " "))
		}
	}
	for range 450 {
		texts = append(texts, gen.Document())
	}
	r.Shuffle(len(texts), func(i, j int) { texts[i], texts[j] = texts[j], texts[i] })
	reqs := make([]memory.EncodeStoreRequest, len(texts))
	for i, s := range texts {
		reqs[i] = memory.EncodeStoreRequest{Content: memory.TextContent(s)}
	}
	resp, err := h.e.EncodeBatch(ctx, &memory.EncodeBatchRequest{Records: reqs})
	if err != nil {
		t.Fatal(err)
	}
	ns := h.e.defaultSpace()
	ids := make([]memory.ID, len(resp.Results))
	terms := make([][]string, len(ids))
	for i, res := range resp.Results {
		ids[i], terms[i] = res.RecordID, ns.indexTerms(res.RecordID)
	}
	want, found := 0, 0
	for i, id := range ids {
		type pair struct {
			id memory.ID
			j  float64
		}
		var all []pair // every record this one qualifies to link with
		for k, other := range ids {
			if k == i {
				continue
			}
			if j, shared := jaccardSorted(terms[i], terms[k]); j >= similarJaccard && shared >= similarShared {
				all = append(all, pair{other, j})
			}
		}
		slices.SortFunc(all, func(a, b pair) int { return cmp.Compare(b.j, a.j) })
		best := all[:min(len(all), h.e.opts.SimilarLinks)]
		want += len(best)
		rec, err := h.e.get(ns, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range h.e.similar(ns, rec) {
			k := slices.IndexFunc(all, func(p pair) bool { return p.id == l.target })
			if k < 0 || all[k].j != l.weight {
				t.Fatalf("record %d linked to %v with weight %v: not a qualifying pair", i, l.target, l.weight)
			}
			if slices.ContainsFunc(best, func(p pair) bool { return p.j <= l.weight }) {
				found++
			}
		}
	}
	t.Logf("found %d of %d links", found, want)
	if want < 300 || found*100 < want*99 {
		t.Fatalf("linked %d of the %d best pairs an exhaustive comparison finds; want at least 99%%", found, want)
	}
}

// TestTermOverlapNeverRefusesALink: canLink, the linker's cheap first
// check, refuses only pairs the exact thresholds refuse too (random sets
// over a small vocabulary, with repeats and in any order, and the pair
// exactly at the Jaccard threshold); it refuses most unrelated pairs,
// which is what makes it worth having.
func TestTermOverlapNeverRefusesALink(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	vocab := make([]string, 40)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("t%02d", i)
	}
	draw := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = vocab[r.IntN(len(vocab))]
		}
		return out
	}
	refused := 0
	for range 20000 {
		mine := sortedSet(draw(1 + r.IntN(30)))
		other := draw(1 + r.IntN(40))
		ok := newTermOverlap(mine).canLink(other)
		j, shared := jaccardSorted(mine, sortedSet(slices.Clone(other)))
		if pass := j >= similarJaccard && shared >= similarShared; pass && !ok {
			t.Fatalf("canLink refused %q for %q: Jaccard %v, %d shared", other, mine, j, shared)
		}
		if !ok {
			refused++
		}
	}
	// At the threshold: 3 of 10 terms shared, nothing else (Jaccard 0.3).
	mine := sortedSet(slices.Clone(vocab[:10]))
	if !newTermOverlap(mine).canLink([]string{"t02", "t05", "t02", "t09"}) {
		t.Fatal("canLink refused a pair at the Jaccard threshold")
	}
	if refused < 5000 {
		t.Fatalf("canLink refused %d of 20,000 random pairs; it should refuse most unrelated ones", refused)
	}
}
