package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"memsvc.dev/memsvc/pkg/engine/textindex"
)

// TestStemTableTagged: with tagged, only lemmas with a sense in
// WordNet's sense-tagged corpus (tagsense_cnt above 0) are keys of the
// table; their related terms are the same either way.
func TestStemTableTagged(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		// lemma pos synset_cnt p_cnt [ptr...] sense_cnt tagsense_cnt offsets
		"index.noun": "cat n 1 1 @ 1 3 00000001\nkitty n 1 1 @ 1 0 00000002\nfeline n 1 0 1 1 00000003\n",
		// offset lex_filenum ss_type w_cnt word lex_id p_cnt [ptr] | gloss
		"data.noun": "  licence header lines start with a space\n" +
			"00000001 05 n 01 cat 0 001 @ 00000003 n 0000 | a small feline\n" +
			"00000002 05 n 01 kitty 0 001 @ 00000003 n 0000 | a young cat\n" +
			"00000003 05 n 01 feline 0 000 | any felid\n",
		"noun.exc": "", "index.verb": "", "data.verb": "", "verb.exc": "",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	wn, err := loadWordNet(dir)
	if err != nil {
		t.Fatal(err)
	}
	term := func(w string) string { return textindex.Tokenize(w)[0] }
	keys := func(tab map[string][]string) []string {
		var out []string
		for k := range tab {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	all := wn.stemTable(1, 2, false, false, textindex.Tokenize)
	tagged := wn.stemTable(1, 2, false, true, textindex.Tokenize)
	want := []string{term("cat"), term("kitty")}
	slices.Sort(want)
	if got := keys(all); !slices.Equal(got, want) {
		t.Errorf("full table keys %q, want %q", got, want)
	}
	if got := keys(tagged); !slices.Equal(got, []string{term("cat")}) {
		t.Errorf("tagged table keys %q, want only %q", got, term("cat"))
	}
	if got := tagged[term("cat")]; !slices.Equal(got, all[term("cat")]) || !slices.Equal(got, []string{term("feline")}) {
		t.Errorf("cat relates to %q (full table %q), want %q", got, all[term("cat")], term("feline"))
	}
}
