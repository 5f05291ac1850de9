package textindex

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// variedCorpus returns texts of every kind the tokenizer treats apart
// (English-like prose, compounds, apostrophes, case, full-width forms,
// control characters, unspaced scripts, other scripts, long tokens),
// mixed at random, followed by texts that together hold more distinct
// Latin words than a stem cache keeps, so that caches are emptied and
// refilled along the way.
func variedCorpus(seed uint64) []string {
	snippets := []string{
		"Deployments deployed; rotated, rotating keys — key rotation",
		"running runs ran", "PEBBLE Pebble pebble", "İSTANBUL Istanbul ıspanak",
		"ΣΟΦΟΣ σοφος", "alice@example.com https://github.com/rivo/uniseg pkg/store",
		"snake_case_name camelCase reason:timeout v1.2.3 __init__ _private",
		"it’s the users' guide; don't O'Reilly", "ＨＥＬＬＯ Ｗｏｒｌｄ１２３ ﬁle ①",
		"a\x00b\tc\x7fd\xffe", "co\u00adoperate foo\u200bbar", "北京大学 东 西",
		"東京都庁に行く。", "ラーメン ﾃｽﾄ 葛\U000E0100飾区", "서울에서 회의를 했다", "ภาษา",
		"🎉 ship it 👍🏽 done ✅", "pebbleを使うGo言語 東京2024年 テスト_case",
		strings.Repeat("x", 100), strings.Repeat("é", 40), "λόγος λόγοι",
		"42 3.14 1,000 -7", "Naïve café résumé façade Ærø", "THE and OF it is",
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	texts := Corpus(seed, 300)
	for range 300 {
		var b strings.Builder
		for range 1 + rng.IntN(6) {
			b.WriteString(snippets[rng.IntN(len(snippets))])
			b.WriteByte(' ')
		}
		texts = append(texts, b.String())
	}
	const distinct = maxStemCache + maxStemCache/4
	for i := 0; i < distinct; i += 500 {
		var b strings.Builder
		for j := i; j < min(i+500, distinct); j++ {
			// Letters only, so that every word goes through the cache;
			// some end in suffixes the stemmer removes.
			fmt.Fprintf(&b, "w%s%s ", strings.Map(func(r rune) rune { return 'a' + r - '0' }, fmt.Sprint(j)), [...]string{"", "ing", "ed", "s"}[j%4])
		}
		texts = append(texts, b.String(), texts[rng.IntN(len(texts))])
	}
	return texts
}

// TestAnalyzerMatchesRulesAcrossRefills checks that the stem cache
// changes no term, also while it is emptied and refilled.
func TestAnalyzerMatchesRulesAcrossRefills(t *testing.T) {
	a := NewAnalyzer()
	texts := variedCorpus(3)
	for pass := range 2 { // the second pass hits the cache
		for _, text := range texts {
			want := appendTerms([]string{"x"}, text, nil)
			if got := a.AppendTerms([]string{"x"}, text); !slices.Equal(got, want) {
				t.Fatalf("pass %d: AppendTerms(%.60q) = %.200q, want %.200q", pass, text, got, want)
			}
		}
	}
}

// TestAnalyzerConcurrentUse analyses the varied corpus with one Analyzer
// on several goroutines at once, as the search index's build workers do
// (run it with -race: the stem cache must be safe for concurrent use).
func TestAnalyzerConcurrentUse(t *testing.T) {
	a := NewAnalyzer()
	texts := variedCorpus(5)[:700]
	want := make([][]string, len(texts))
	for i, text := range texts {
		want[i] = appendTerms(nil, text, nil)
	}
	const goroutines = 4
	errs := make(chan error, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for k := range texts {
				i := (k + g*len(texts)/goroutines) % len(texts)
				if got := a.AppendTerms(nil, texts[i]); !slices.Equal(got, want[i]) {
					errs <- fmt.Errorf("AppendTerms(%.60q) = %.200q, want %.200q", texts[i], got, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
