package textindex

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

// rankCorpus is the fixed corpus of the ranking tests; document n has id(n)
// and attrs "s<n>".
var rankCorpus = []string{
	1:  "Rotated the API keys for the staging cluster after the credential leak.",
	2:  "Key rotation policy: rotate signing keys every 90 days. Rotation is automatic.",
	3:  "The deployment pipeline failed because the database migration timed out.",
	4:  "Deployments to production now require two approvals from the team.",
	5:  "User prefers dark mode and short answers; the user dislikes long explanations.",
	6:  "Pebble compaction stalls when the disk is nearly full.",
	7:  "東京都庁で会議があった。次回は大阪で開催する予定。",
	8:  "北京大学的图书馆很大，学生很多。",
	9:  "서울에서 회의를 했다. 다음 회의는 부산에서.",
	10: "The cat sat on the mat. The cat was happy and the dog was not.",
	11: "Rotating logs daily keeps the disk from filling up; log rotation uses logrotate.",
	12: "snake_case_name and pkg/store are identifiers in the Go code base of the database layer.",
}

func rankIndex(t *testing.T) *Index {
	t.Helper()
	ix := open(t, newMem(t))
	for n, text := range rankCorpus {
		if text != "" {
			put(t, ix, id(n), fmt.Sprint("s", n), text)
		}
	}
	return ix
}

type refDoc struct {
	tf map[string]int
	dl int
}

type refIndex map[memory.ID]refDoc

func analyse(docs map[memory.ID]string) refIndex {
	out := refIndex{}
	for d, text := range docs {
		a := refDoc{tf: map[string]int{}}
		for _, term := range appendTerms(nil, text, nil) {
			a.tf[term]++
			a.dl++
		}
		if a.dl > 0 {
			out[d] = a
		}
	}
	return out
}

// refSearch is Search done the slow, obvious way from the tokenizer, as an
// independent check of the index: every document is scored against every
// query term, then sorted.
func refSearch(analysed refIndex, q Query) Result {
	total := 0
	for _, a := range analysed {
		total += a.dl
	}
	N := float64(len(analysed))
	avg := float64(total) / N
	terms := Tokenize(q.Text)
	if len(terms) > MaxQueryTerms {
		terms = terms[:MaxQueryTerms]
	}
	df := map[string]float64{}
	for _, term := range terms {
		for _, a := range analysed {
			if a.tf[term] > 0 {
				df[term]++
			}
		}
	}
	var res Result
	for d, a := range analysed {
		score, matched := 0.0, 0
		for _, term := range terms {
			tf := float64(a.tf[term])
			if tf == 0 {
				continue
			}
			idf := math.Log(1 + (N-df[term]+0.5)/(df[term]+0.5))
			score += idf * tf * 2.2 / (tf + 1.2*(0.25+0.75*float64(a.dl)/avg))
			matched++
		}
		if matched == 0 || q.All && matched < len(terms) {
			continue
		}
		if q.Filter != nil && !q.Filter(d, []byte(fmt.Sprint("a", d[15]))) {
			continue
		}
		res.Total++
		res.Hits = append(res.Hits, Hit{Doc: d, Score: score})
	}
	slices.SortFunc(res.Hits, func(a, b Hit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return bytes.Compare(a.Doc[:], b.Doc[:])
	})
	if len(res.Hits) > q.Limit {
		res.Hits = res.Hits[:q.Limit]
	}
	return res
}

func rankDocs() map[memory.ID]string {
	docs := map[memory.ID]string{}
	for n, text := range rankCorpus {
		if text != "" {
			docs[id(n)] = text
		}
	}
	return docs
}

func TestRanking(t *testing.T) {
	ix := rankIndex(t)
	tests := []struct {
		query string
		all   bool
		want  []byte // exact ranked document numbers
	}{
		// Stemming: rotating/rotation/rotated and keys/key meet.
		{"rotating keys", false, []byte{2, 1, 11}},
		{"rotating keys", true, []byte{2, 1}},
		{"key rotation", false, []byte{2, 1, 11}},
		{"deployment", false, []byte{4, 3}},
		{"database migration", false, []byte{3, 12}},
		{"database migration", true, []byte{3}},
		{"disk full", false, []byte{6, 11}},
		{"user", false, []byte{5}},
		{"cat dog", false, []byte{10}},
		// Identifiers.
		{"pkg/store", false, []byte{12}},
		{"snake_case_name", false, []byte{12}},
		{"name", false, []byte{12}},
		// CJK: a two-character query inside a long run.
		{"都庁", false, []byte{7}},
		{"大阪", false, []byte{7}},
		{"图书馆", false, []byte{8}},
		{"北京大学", true, []byte{8}},
		{"会議", false, []byte{7}},
		{"東京 大阪 会議", true, []byte{7}},
		{"서울에서", false, []byte{9}},
		// Nothing to search for, or nothing found.
		{"the and of", false, nil},
		{"🎉", false, nil},
		{"", false, nil},
		{"kubernetes", false, nil},
		{"disk kubernetes", true, nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/all=%v", tt.query, tt.all), func(t *testing.T) {
			res, err := ix.Search(Query{Text: tt.query, Limit: 20, All: tt.all})
			if err != nil {
				t.Fatal(err)
			}
			var got []byte
			for _, h := range res.Hits {
				got = append(got, h.Doc[15])
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("ranked %v, want %v (hits %+v)", got, tt.want, res.Hits)
			}
			if res.Total != len(tt.want) {
				t.Errorf("Total = %d, want %d", res.Total, len(tt.want))
			}
			ref := map[memory.ID]float64{}
			for _, h := range refSearch(analyse(rankDocs()), Query{Text: tt.query, All: tt.all, Limit: 100}).Hits {
				ref[h.Doc] = h.Score
			}
			if len(ref) != len(res.Hits) {
				t.Errorf("reference finds %d documents, Search %d", len(ref), len(res.Hits))
			}
			for i, h := range res.Hits {
				if h.Score <= 0 || math.IsNaN(h.Score) {
					t.Errorf("hit %d score %v not positive", i, h.Score)
				}
				if i > 0 && h.Score >= res.Hits[i-1].Score {
					t.Errorf("hit %d score %v not below %v", i, h.Score, res.Hits[i-1].Score)
				}
				if want := ref[h.Doc]; math.Abs(h.Score-want) > 1e-9 {
					t.Errorf("d%d score %v, reference %v", h.Doc[15], h.Score, want)
				}
				if want := fmt.Sprint("s", h.Doc[15]); string(h.Attrs) != want {
					t.Errorf("d%d attrs %q, want %q", h.Doc[15], h.Attrs, want)
				}
			}
		})
	}
}

func TestSearchTiesByID(t *testing.T) {
	ix := open(t, newMem(t))
	for _, n := range []int{9, 3, 7, 1} {
		put(t, ix, id(n), "", "identical text")
	}
	res, err := ix.Search(Query{Text: "identical", Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	for _, h := range res.Hits {
		got = append(got, h.Doc[15])
	}
	if !slices.Equal(got, []byte{1, 3, 7}) || res.Total != 4 {
		t.Errorf("hits %v total %d, want [1 3 7] total 4", got, res.Total)
	}
	if res.Hits[0].Score != res.Hits[2].Score {
		t.Errorf("equal documents scored %v and %v", res.Hits[0].Score, res.Hits[2].Score)
	}
}

func TestSearchLimitFilterTotal(t *testing.T) {
	ix := rankIndex(t)
	odd := func(doc memory.ID, attrs []byte) bool {
		if want := fmt.Sprint("s", doc[15]); string(attrs) != want {
			panic(fmt.Sprintf("filter got attrs %q for d%d", attrs, doc[15]))
		}
		return doc[15]%2 == 1
	}
	tests := []struct {
		name   string
		q      Query
		hits   []byte
		total  int
		filter bool
	}{
		{"limit cuts hits, not total", Query{Text: "rotating keys disk", Limit: 2}, []byte{2, 11}, 4, false},
		{"limit 0 counts", Query{Text: "rotating keys disk", Limit: 0}, nil, 4, false},
		{"filter before ranking", Query{Text: "rotating keys disk deployment", Limit: 10}, []byte{11, 1, 3}, 3, true},
		// d4 and d6 score the same; the lower id wins the last place.
		{"ties at the cut", Query{Text: "rotating keys disk deployment", Limit: 4}, []byte{2, 11, 1, 4}, 6, false},
		{"filter with limit 0", Query{Text: "rotating keys disk deployment", Limit: 0}, nil, 3, true},
		{"filter with all", Query{Text: "rotation keys", All: true, Limit: 10}, []byte{1}, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.filter {
				tt.q.Filter = odd
			}
			res, err := ix.Search(tt.q)
			if err != nil {
				t.Fatal(err)
			}
			var got []byte
			for _, h := range res.Hits {
				got = append(got, h.Doc[15])
			}
			if !slices.Equal(got, tt.hits) || res.Total != tt.total {
				t.Errorf("hits %v total %d, want %v total %d", got, res.Total, tt.hits, tt.total)
			}
		})
	}
	if _, err := ix.Search(Query{Text: "disk", Limit: -1}); err == nil {
		t.Error("negative limit accepted")
	}
}

func TestSearchAttrsAreCopies(t *testing.T) {
	ix := open(t, newMem(t))
	put(t, ix, id(1), "\x00\x01binary\xff", "alpha beta")
	put(t, ix, id(2), "", "alpha")
	res, err := ix.Search(Query{Text: "alpha beta", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 2 || string(res.Hits[0].Attrs) != "\x00\x01binary\xff" || len(res.Hits[1].Attrs) != 0 {
		t.Fatalf("hits %+v", res.Hits)
	}
	// Appending to one hit's attrs must not touch another's.
	_ = append(res.Hits[1].Attrs, 'x')
	res.Hits[0].Attrs[0] = 'z'
	again, err := ix.Search(Query{Text: "alpha beta", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if string(again.Hits[0].Attrs) != "\x00\x01binary\xff" {
		t.Errorf("attrs changed by the caller of an earlier search: %q", again.Hits[0].Attrs)
	}
}

func TestSearchManyTerms(t *testing.T) {
	ix := open(t, newMem(t))
	var words []string
	for i := range MaxQueryTerms + 10 {
		words = append(words, fmt.Sprintf("w%03d", i))
	}
	put(t, ix, id(1), "", strings.Join(words[:MaxQueryTerms], " "))
	put(t, ix, id(2), "", words[MaxQueryTerms+5])
	res, err := ix.Search(Query{Text: strings.Join(words, " "), Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 1 || res.Hits[0].Doc != id(1) {
		t.Errorf("terms beyond MaxQueryTerms were searched: %+v", res)
	}
	res, err = ix.Search(Query{Text: strings.Join(words, " "), Limit: 5, All: true})
	if err != nil || res.Total != 1 {
		t.Errorf("all-terms search of the first %d terms = %+v, %v", MaxQueryTerms, res, err)
	}
}

func TestSearchUpdatesAndDeletes(t *testing.T) {
	ix := rankIndex(t)
	put(t, ix, id(6), "s6", "Pebble compaction is fine now.")
	del(t, ix, id(11))
	res, err := ix.Search(Query{Text: "disk", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 0 {
		t.Errorf("stale postings found: %+v", res)
	}
	res, err = ix.Search(Query{Text: "compaction", Limit: 10})
	if err != nil || res.Total != 1 || res.Hits[0].Doc != id(6) {
		t.Errorf("updated document: %+v, %v", res, err)
	}
}

func TestSearchConcurrentWithWrites(t *testing.T) {
	ix := open(t, newMem(t))
	g := NewCorpusGen(7)
	docs := make([]string, 200)
	for i := range docs {
		docs[i] = g.Document()
	}
	queries := []string{g.Query(1), g.Query(2), g.Query(4)}
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := w; i < len(docs); i += 2 {
				put(t, ix, benchID(i), "", docs[i])
				if i%10 == 0 {
					del(t, ix, benchID(i))
				}
			}
		})
	}
	for r := range 2 {
		wg.Go(func() {
			for i := range 100 {
				res, err := ix.Search(Query{Text: queries[(r+i)%len(queries)], Limit: 5, All: i%2 == 0})
				if err != nil {
					t.Error(err)
					return
				}
				for j, h := range res.Hits {
					if h.Score <= 0 || j > 0 && h.Score > res.Hits[j-1].Score {
						t.Errorf("bad ranking %+v", res.Hits)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	want := open(t, ix.db).Stats()
	if got := ix.Stats(); got != want || got.Docs != 180 {
		t.Errorf("stats %+v, recomputed %+v, want 180 docs", got, want)
	}
}

// TestSearchMatchesReference compares Search with refSearch on a generated
// corpus for many queries, limits, filters and both modes, including after
// updates and deletes.
func TestSearchMatchesReference(t *testing.T) {
	ix := open(t, newMem(t))
	g := NewCorpusGen(11)
	docs := map[memory.ID]string{}
	for i := range 300 {
		d := id(i)
		docs[d] = g.Document()
		put(t, ix, d, fmt.Sprint("a", d[15]), docs[d])
	}
	// Replace some documents and delete others.
	n := 0
	for d := range docs {
		switch n++; {
		case n%7 == 0:
			docs[d] = g.Document()
			put(t, ix, d, fmt.Sprint("a", d[15]), docs[d])
		case n%11 == 0:
			delete(docs, d)
			del(t, ix, d)
		}
	}
	ref := analyse(docs)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 300 {
		q := Query{Text: g.Query(1 + r.IntN(5)), Limit: r.IntN(12), All: r.IntN(2) == 0}
		if i%3 == 0 {
			mod := 2 + r.IntN(3)
			q.Filter = func(d memory.ID, attrs []byte) bool {
				if string(attrs) != fmt.Sprint("a", d[15]) {
					t.Errorf("filter attrs %q for %v", attrs, d)
				}
				return int(d[15])%mod == 0
			}
		}
		got, err := ix.Search(q)
		if err != nil {
			t.Fatal(err)
		}
		want := refSearch(ref, q)
		if got.Total != want.Total || len(got.Hits) != len(want.Hits) {
			t.Fatalf("%+v: total %d hits %d, want %d and %d", q, got.Total, len(got.Hits), want.Total, len(want.Hits))
		}
		for j := range got.Hits {
			if got.Hits[j].Doc != want.Hits[j].Doc || math.Abs(got.Hits[j].Score-want.Hits[j].Score) > 1e-9 {
				t.Fatalf("%+v: hit %d = %v %v, want %v %v", q, j, got.Hits[j].Doc, got.Hits[j].Score, want.Hits[j].Doc, want.Hits[j].Score)
			}
		}
	}
}

func TestSearchLongTokens(t *testing.T) {
	ix := open(t, newMem(t))
	long := "sha256_" + strings.Repeat("0123456789abcdef", 6)
	kanji := strings.Repeat("漢字仮名交じり文", 30) + "東京"
	put(t, ix, id(1), "", "digest "+long+" computed")
	put(t, ix, id(2), "", kanji)
	for _, tc := range []struct {
		q    string
		want memory.ID
	}{
		{long, id(1)},
		{"東京", id(2)},
		{"り文", id(2)},
	} {
		res, err := ix.Search(Query{Text: tc.q, Limit: 5, All: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Total != 1 || res.Hits[0].Doc != tc.want {
			t.Errorf("%q: %+v, want only %v", tc.q, res, tc.want)
		}
	}
}
