package engine

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"memsvc.dev/memsvc/pkg/engine/rank"
	"memsvc.dev/memsvc/pkg/engine/textindex"
	"memsvc.dev/memsvc/pkg/memory"
)

// Human-mode rendering (DESIGN §10; docs/design.md, "Living memory").
//
// A memory recalled in human mode comes back with some of its words
// replaced by "...", the more the fainter it was when recalled. With f
// its fidelity at recall, the share of its words masked is
//
//	masked(f) = min(max((0.9 − f) / 1.8, 0), 0.5)
//
// nothing at 0.9 and above, a tenth at 0.72 (an episodic memory a day
// old), 0.30 at 0.35 (a week), 0.40 at 0.18 (a month), and never more
// than half: a memory recalled at all shows at least half of its words.
// Of a text of n words, floor(masked(f) · n) are masked.
//
// Which words go follows how people forget: the wording of an experience
// fades before its gist. Words that carry no content (the tokenizer's
// stop words, punctuation, the question and function words of
// rank.FunctionWords) go first, content words after them; within each
// kind the order is a hash of the record's id and version, the block and
// the word's position, so a record renders the same way for the same
// query until it changes. Words that matched the query (a term of the
// word is a term of the query, after the tokenizer's folding and
// stemming) are never masked: the part of a memory that made it come
// back stays readable.
const (
	maskBelow = 0.9 // fidelity from which nothing is masked
	maskSlope = 1.8 // masked share per unit of fidelity below maskBelow
	maxMask   = 0.5 // largest share of a memory's words masked
)

// maskedShare is the share of a memory's words masked at fidelity f.
func maskedShare(f float64) float64 {
	return min(max((maskBelow-f)/maskSlope, 0), maxMask)
}

// wordClasser tells, for a word of a record, whether it matched the
// query and whether it carries content. It tokenizes each word as the
// index does, so "Biking," matches a query that says "bikes".
type wordClasser struct {
	query    map[string]struct{} // the query's terms
	function *rank.Analyzer      // function terms
}

// newWordClasser returns the classer of a recall with query text q
// (empty: no recall words to keep).
func newWordClasser(q string, function *rank.Analyzer) *wordClasser {
	c := &wordClasser{query: map[string]struct{}{}, function: function}
	for _, t := range textindex.Tokenize(q) {
		c.query[t] = struct{}{}
	}
	return c
}

// Word classes, in the order their words are masked.
const (
	wordFunction = iota // no content: masked first
	wordContent         // content words
	wordQuery           // matched the query: never masked
)

// class returns the class of word w.
func (c *wordClasser) class(w string) int {
	class := wordFunction
	for _, t := range textindex.Tokenize(w) {
		if _, ok := c.query[t]; ok {
			return wordQuery
		}
		if !c.function.IsFunction(t) {
			class = wordContent
		}
	}
	return class
}

// renderHuman is the content of rec as human mode renders it at the
// fidelity it had when recalled (see the comment above maskBelow). Text
// blocks are masked; other blocks and the summary are left as they are.
func renderHuman(rec *memory.MemoryRecord, words *wordClasser) memory.MemoryContent {
	share := maskedShare(rec.Fidelity.Score)
	if share == 0 {
		return rec.Content
	}
	out := rec.Content
	out.Blocks = slices.Clone(rec.Content.Blocks)
	var seed [20]byte
	copy(seed[:], rec.ID[:])
	seed[16], seed[17], seed[18], seed[19] = byte(rec.Version>>24), byte(rec.Version>>16), byte(rec.Version>>8), byte(rec.Version)
	for bi := range out.Blocks {
		b := &out.Blocks[bi]
		if b.Modality != memory.ModalityText || !utf8.Valid(b.Data) {
			continue
		}
		b.Data = memory.Bytes(maskWords(string(b.Data), share, seed[:], bi, words.class))
	}
	return out
}

// maskWords replaces floor(share·n) of the n words of s with "...",
// keeping the white space between them. Words are taken by class (class
// of the word; wordQuery words are never taken, so fewer may be masked),
// then by the smallest hash of (seed, block, position), so the choice is
// stable for a given record version and spread over the text.
func maskWords(s string, share float64, seed []byte, block int, class func(string) int) string {
	type word struct {
		start, end int
		class      int
		hash       float64
	}
	var words []word
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			i += n
			continue
		}
		j := i
		for j < len(s) {
			r, n := utf8.DecodeRuneInString(s[j:])
			if unicode.IsSpace(r) {
				break
			}
			j += n
		}
		words = append(words, word{start: i, end: j})
		i = j
	}
	// The small slack keeps products such as 0.3 · 2000 from flooring to
	// one word less.
	k := int(math.Floor(share*float64(len(words)) + 1e-9))
	if k <= 0 {
		return s
	}
	order := make([]int, 0, len(words))
	for i := range words {
		w := &words[i]
		if w.class = class(s[w.start:w.end]); w.class == wordQuery {
			continue
		}
		w.hash = wordHash(seed, block, i)
		order = append(order, i)
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(words[a].class, words[b].class); c != 0 {
			return c
		}
		return cmp.Compare(words[a].hash, words[b].hash)
	})
	masked := make([]bool, len(words))
	for _, w := range order[:min(k, len(order))] {
		masked[w] = true
	}
	var b strings.Builder
	b.Grow(len(s))
	prev := 0
	for i, w := range words {
		b.WriteString(s[prev:w.start])
		if masked[i] {
			b.WriteString("...")
		} else {
			b.WriteString(s[w.start:w.end])
		}
		prev = w.end
	}
	b.WriteString(s[prev:])
	return b.String()
}

// wordHash maps (seed, block, word) to [0, 1) with FNV-1a, stable across
// processes and releases.
func wordHash(seed []byte, block, word int) float64 {
	h := uint64(14695981039346656037)
	mix := func(c byte) {
		h ^= uint64(c)
		h *= 1099511628211
	}
	for _, c := range seed {
		mix(c)
	}
	for _, v := range [2]int{block, word} {
		for k := 0; k < 4; k++ {
			mix(byte(v >> (8 * k)))
		}
	}
	// Finalise so neighbouring words are independent.
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return float64(h>>11) / (1 << 53)
}
