package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"memsvc.dev/memsvc/pkg/engine/textindex"
)

// wordNet is the part of a WordNet database (the Princeton WordNet 3.0
// files, as Debian's wordnet-base installs them in /usr/share/wordnet)
// that rankeval uses to try lexical expansion: for nouns and verbs, each
// lemma's synsets in order of frequency, each synset's words and its
// hypernyms.
type wordNet struct {
	tables  map[rankIndexOptions]map[string][]string // stemTable by settings
	senses  [2]map[string][]int                      // pos -> lemma -> synset offsets, most frequent first
	synsets [2]map[int]*synset
	exc     [2]map[string]string // irregular form -> lemma
	tagged  [2]map[string]bool   // lemmas with a sense in the sense-tagged corpus
}

type synset struct {
	words []string // lemmas, "_" between the words of a compound
	hyper []int    // hypernym and instance-hypernym synsets
}

const (
	wnNoun = iota
	wnVerb
)

// loadWordNet reads the noun and verb files under dir.
func loadWordNet(dir string) (*wordNet, error) {
	wn := &wordNet{}
	for pos, name := range []string{"noun", "verb"} {
		wn.senses[pos] = map[string][]int{}
		wn.synsets[pos] = map[int]*synset{}
		wn.exc[pos] = map[string]string{}
		wn.tagged[pos] = map[string]bool{}
		if err := eachLine(filepath.Join(dir, "index."+name), func(f []string) error {
			// lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt synset_offset...
			if len(f) < 4 {
				return nil
			}
			n, err := strconv.Atoi(f[2])
			if err != nil || len(f) < n+2 {
				return fmt.Errorf("bad index line %q", strings.Join(f, " "))
			}
			if tc, err := strconv.Atoi(f[len(f)-n-1]); err == nil && tc > 0 {
				wn.tagged[pos][f[0]] = true
			}
			for _, off := range f[len(f)-n:] {
				o, err := strconv.Atoi(off)
				if err != nil {
					return err
				}
				wn.senses[pos][f[0]] = append(wn.senses[pos][f[0]], o)
			}
			return nil
		}); err != nil {
			return nil, err
		}
		if err := eachLine(filepath.Join(dir, "data."+name), func(f []string) error {
			// offset lex_filenum ss_type w_cnt(hex) word lex_id ... p_cnt ptr... | gloss
			if len(f) < 4 {
				return nil
			}
			off, err := strconv.Atoi(f[0])
			if err != nil {
				return err
			}
			wc, err := strconv.ParseInt(f[3], 16, 32)
			if err != nil {
				return err
			}
			s := &synset{}
			i := 4
			for k := 0; k < int(wc); k++ {
				s.words = append(s.words, strings.ToLower(f[i]))
				i += 2
			}
			pc, err := strconv.Atoi(f[i])
			if err != nil {
				return err
			}
			i++
			for k := 0; k < pc; k++ {
				sym, target := f[i], f[i+1]
				if sym == "@" || sym == "@i" {
					t, err := strconv.Atoi(target)
					if err != nil {
						return err
					}
					s.hyper = append(s.hyper, t)
				}
				i += 4
			}
			wn.synsets[pos][off] = s
			return nil
		}); err != nil {
			return nil, err
		}
		if err := eachLine(filepath.Join(dir, name+".exc"), func(f []string) error {
			if len(f) >= 2 {
				wn.exc[pos][f[0]] = f[1]
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return wn, nil
}

// eachLine calls fn with the fields of every line of path that does not
// start with a space (the licence header of the data files does).
func eachLine(path string, fn func([]string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if l == "" || l[0] == ' ' {
			continue
		}
		if err := fn(strings.Fields(l)); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return sc.Err()
}

// lemmas returns the WordNet base forms of the lower-case word w as part
// of speech pos (WordNet's "morphy": exceptions, then detachment rules).
func (wn *wordNet) lemmas(w string, pos int) []string {
	var out []string
	try := func(l string) {
		if _, ok := wn.senses[pos][l]; ok && !containsStr(out, l) {
			out = append(out, l)
		}
	}
	try(w)
	if l, ok := wn.exc[pos][w]; ok {
		try(l)
	}
	rules := [][2]string{{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"}}
	if pos == wnVerb {
		rules = [][2]string{{"s", ""}, {"ies", "y"}, {"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""}}
	}
	for _, r := range rules {
		if base, ok := strings.CutSuffix(w, r[0]); ok && base != "" {
			try(base + r[1])
		}
	}
	return out
}

func containsStr(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// related returns the words of the first senses synsets of w (as noun
// and verb) and of their hypernyms up to depth levels up, with "_"
// replaced by spaces, without w itself.
func (wn *wordNet) related(w string, senses, depth int, verbs bool) []string {
	var out []string
	seen := map[int]bool{}
	var walk func(pos, off, d int)
	walk = func(pos, off, d int) {
		key := off*2 + pos
		if seen[key] {
			return
		}
		seen[key] = true
		s := wn.synsets[pos][off]
		if s == nil {
			return
		}
		for _, word := range s.words {
			word = strings.ReplaceAll(word, "_", " ")
			if word != w && !containsStr(out, word) {
				out = append(out, word)
			}
		}
		if d < depth {
			for _, h := range s.hyper {
				walk(pos, h, d+1)
			}
		}
	}
	for pos := range 2 {
		if pos == wnVerb && !verbs {
			continue
		}
		for _, l := range wn.lemmas(w, pos) {
			offs := wn.senses[pos][l]
			for _, off := range offs[:min(senses, len(offs))] {
				walk(pos, off, 0)
			}
		}
	}
	return out
}

// stemTable maps index terms to the terms of related words: for every
// one-word lemma, the terms of related(lemma) filed under the lemma's own
// term. It is the form an embedded table would take: the engine would
// look up each term of a record, with no morphology of its own (the
// stemmer already folds word forms).
// With tagged, only lemmas of WordNet's sense-tagged corpus (a
// tagsense_cnt above 0 in the index files) are keys.
func (wn *wordNet) stemTable(senses, depth int, verbs, tagged bool, tokenize func(string) []string) map[string][]string {
	out := map[string][]string{}
	for pos := range 2 {
		if pos == wnVerb && !verbs {
			continue
		}
		for lemma := range wn.senses[pos] {
			if strings.Contains(lemma, "_") || tagged && !wn.tagged[pos][lemma] {
				continue
			}
			keys := tokenize(lemma)
			if len(keys) != 1 {
				continue
			}
			for _, r := range wn.related(lemma, senses, depth, verbs) {
				for _, t := range tokenize(r) {
					if t != keys[0] && !containsStr(out[keys[0]], t) {
						out[keys[0]] = append(out[keys[0]], t)
					}
				}
			}
		}
	}
	for k := range out {
		slices.Sort(out[k])
	}
	return out
}

// table is the stemTable of the lexical settings of opt, built once.
func (wn *wordNet) table(opt rankIndexOptions) map[string][]string {
	key := rankIndexOptions{lexSenses: opt.lexSenses, lexDepth: opt.lexDepth, lexVerbs: opt.lexVerbs, lexTagged: opt.lexTagged}
	if t, ok := wn.tables[key]; ok {
		return t
	}
	if wn.tables == nil {
		wn.tables = map[rankIndexOptions]map[string][]string{}
	}
	t := wn.stemTable(opt.lexSenses, opt.lexDepth, opt.lexVerbs, opt.lexTagged, textindex.Tokenize)
	wn.tables[key] = t
	return t
}
