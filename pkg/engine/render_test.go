package engine

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/engine/rank"
	"memsvc.dev/memsvc/pkg/engine/textindex"
	"memsvc.dev/memsvc/pkg/memory"
)

// TestMaskedShareCurve pins the documented curve of human-mode masking.
func TestMaskedShareCurve(t *testing.T) {
	for _, tc := range []struct{ f, want float64 }{
		{1, 0}, {0.95, 0}, {0.9, 0}, {0.72, 0.1}, {0.54, 0.2},
		{math.Pow(8, -0.5), (0.9 - math.Pow(8, -0.5)) / 1.8}, // a week: 0.30
		{0.18, 0.4}, {0.05, 0.85 / 1.8}, {0, 0.5}, {-1, 0.5},
	} {
		if got := maskedShare(tc.f); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("maskedShare(%v) = %v, want %v", tc.f, got, tc.want)
		}
	}
	prev := 0.0
	for i := 1000; i >= 0; i-- {
		f := float64(i) / 1000
		s := maskedShare(f)
		if s < prev || s > 0.5 {
			t.Fatalf("maskedShare(%v) = %v after %v: not monotone or above half", f, s, prev)
		}
		prev = s
	}
}

func testClasser(query string) *wordClasser {
	return newWordClasser(query, rank.NewAnalyzer(textindex.Tokenize))
}

// TestMaskWords: white space is kept, the choice is deterministic and
// the count is floor(share · words).
func TestMaskWords(t *testing.T) {
	seed := make([]byte, 20)
	none := testClasser("").class
	text := "one  two\nthree four five six seven eight nine ten"
	if got := maskWords(text, 0, seed, 0, none); got != text {
		t.Fatalf("share 0 changed text: %q", got)
	}
	got := maskWords(text, 0.5, seed, 0, none)
	if strings.Count(got, "\n") != 1 || strings.Count(got, "...") != 5 || unmask(got, text) != text {
		t.Fatalf("want 5 of 10 words masked and the white space kept: %q", got)
	}
	if got != maskWords(text, 0.5, seed, 0, none) {
		t.Fatal("not deterministic")
	}
	if got == maskWords(text, 0.5, []byte("another seed........"), 0, none) {
		t.Fatal("the seed does not change the choice")
	}
	if n := strings.Count(maskWords(strings.Repeat("w ", 2000), 0.3, seed, 0, none), "..."); n != 600 {
		t.Fatalf("masked %d of 2000 words, want 600", n)
	}
	if got := maskWords("a b c", 0.3, seed, 0, none); got != "a b c" {
		t.Fatalf("share 0.3 of three words masked something: %q", got)
	}
	if n := strings.Count(maskWords("a b c", 0.5, seed, 0, none), "..."); n != 1 {
		t.Fatalf("share 0.5 of three words masked %d, want 1 (at least half stays)", n)
	}
}

// unmask puts the words of original back where masked has "...", so a
// test can tell that only whole words were replaced.
func unmask(masked, original string) string {
	m, o := strings.Fields(masked), strings.Fields(original)
	if len(m) != len(o) {
		return masked
	}
	for i := range m {
		if m[i] == "..." {
			m[i] = o[i]
		}
	}
	out := masked
	for i, w := range strings.Fields(masked) {
		if w == "..." {
			out = strings.Replace(out, "...", m[i], 1)
		}
	}
	return out
}

// TestMaskWordsKeepsTheGist: words without content are masked before
// content words.
func TestMaskWordsKeepsTheGist(t *testing.T) {
	const text = "So what did they say about the ferry to the island at seven?"
	// 13 words, ten of them stop or function words: half of 13 is 6
	// masked, all of them function words, whatever the seed.
	for s := range 50 {
		seed := []byte{byte(s), 7}
		got := maskWords(text, 0.5, seed, 0, testClasser("").class)
		words := strings.Fields(got)
		if strings.Count(got, "...") != 6 || len(words) != 13 {
			t.Fatalf("masked %q, want 6 of 13 words", got)
		}
		for _, w := range []string{"ferry", "island", "seven?"} {
			if !slices.Contains(words, w) {
				t.Fatalf("content word %q masked before function words: %q", w, got)
			}
		}
	}
}

// TestMaskWordsProperties checks the two promises of human mode over many
// generated texts, queries and fidelities: a word that matched the query
// is never masked, and at least half of a memory's words stay.
func TestMaskWordsProperties(t *testing.T) {
	vocab := strings.Fields(`bike biking bikes bicycle ride riding rode cat cats Bailey
		pet pets stress relief destress Portland May 2023 garden gardening
		what did when the a of to and is was she he they we it in on at
		happy happiness happily run running ran "quoted" (paren) end. comma,
		émigré naïve straße 東京 東京都 Ωmega`)
	r := rand.New(rand.NewPCG(1, 2))
	seed := make([]byte, 20)
	for trial := range 500 {
		n := 1 + r.IntN(40)
		words := make([]string, n)
		for i := range words {
			words[i] = vocab[r.IntN(len(vocab))]
		}
		text := strings.Join(words, " ")
		query := vocab[r.IntN(len(vocab))] + " " + vocab[r.IntN(len(vocab))]
		c := testClasser(query)
		qterms := textindex.Tokenize(query)
		f := []float64{0, 0.01, 0.05, 0.2, 0.35, 0.5, 0.71, 0.89, 0.9, 1}[trial%10]
		for i := range seed {
			seed[i] = byte(r.Uint32())
		}
		got := maskWords(text, maskedShare(f), seed, trial%3, c.class)
		out := strings.Fields(got)
		if len(out) != n || unmask(got, text) != text {
			t.Fatalf("trial %d: %q masked as %q: words not kept in place", trial, text, got)
		}
		masked := 0
		for i, w := range out {
			if w != "..." {
				continue
			}
			masked++
			for _, term := range textindex.Tokenize(words[i]) {
				if slices.Contains(qterms, term) {
					t.Fatalf("trial %d: word %q matched query %q (term %q) and was masked: %q", trial, words[i], query, term, got)
				}
			}
		}
		if 2*masked > n {
			t.Fatalf("trial %d: %d of %d words masked at fidelity %v: %q", trial, masked, n, f, got)
		}
		if want := int(math.Floor(maskedShare(f)*float64(n) + 1e-9)); masked > want {
			t.Fatalf("trial %d: %d masked, the curve allows %d", trial, masked, want)
		}
		if got != maskWords(text, maskedShare(f), seed, trial%3, c.class) {
			t.Fatalf("trial %d: not deterministic", trial)
		}
	}
}

// TestMaskWordsStemmedMatch: the query's words are matched through the
// tokenizer, so other forms of a query word stay visible.
func TestMaskWordsStemmedMatch(t *testing.T) {
	c := testClasser("Biking in Portland")
	text := "biking bikes BIKE, Portland's portland weather rain cold wind grey fog"
	for s := range 50 {
		seed := []byte{byte(s), 1, 2, 3}
		got := strings.Fields(maskWords(text, 0.5, seed, 0, c.class))
		for i, w := range []string{"biking", "bikes", "BIKE,", "Portland's", "portland"} {
			if got[i] != w {
				t.Fatalf("query word %q masked: %v", w, got)
			}
		}
		if n := strings.Count(strings.Join(got, " "), "..."); n != 5 {
			t.Fatalf("masked %d of 11 words, want 5 of the six other words: %v", n, got)
		}
	}
}

// TestHumanRecallKeepsTheGist: through the engine, a recall in human mode
// of a memory faded to nothing shows every word that matched the query
// and at least half of its words, the same way every time.
func TestHumanRecallKeepsTheGist(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: -1})
	ctx := context.Background()
	const text = "The old lighthouse keeper kept a logbook of fog, storms and passing ships"
	id := h.store(text, memory.StoreEpisodic)
	tick(t, h, 3000*day) // score (1 + 3000)^-0.5 = 0.018: dormant, found with include_decayed
	recall := func() string {
		t.Helper()
		req := memory.DefaultRecallQueryRequest()
		req.Cue.Text = ptr("what did the lighthouse keepers log?")
		req.RecallMode = ptr(memory.ModeHuman)
		req.IncludeDecayed = true
		req.Reconsolidate = false
		resp, err := h.e.RecallQuery(ctx, &req)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Memories) != 1 || resp.Memories[0].Record.ID != id {
			t.Fatalf("recall: %+v", resp.Memories)
		}
		got, _ := resp.Memories[0].RenderedContent.Text()
		return got
	}
	got := recall()
	words := strings.Fields(got)
	// 13 words, masked share (0.9 - 0.018) / 1.8 = 0.49: 6 masked.
	if masked := strings.Count(got, "..."); masked != 6 || len(words) != 13 {
		t.Fatalf("rendered %q, want 6 of 13 words masked", got)
	}
	for _, w := range []string{"lighthouse", "keeper"} {
		if !slices.Contains(words, w) {
			t.Fatalf("query word %q masked: %q", w, got)
		}
	}
	if again := recall(); again != got {
		t.Fatalf("rendering changed between recalls: %q, then %q", got, again)
	}
}
