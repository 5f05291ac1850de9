package textindex

import (
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"github.com/rivo/uniseg"
	"golang.org/x/text/unicode/norm"
)

// MaxTermBytes is the longest term in bytes. Longer tokens are cut to the
// longest valid UTF-8 prefix that fits, so a long identifier still matches
// itself.
const MaxTermBytes = 64

// Tokenize returns the distinct terms of text in order of first occurrence.
// The same function analyses documents and queries; see the package comment
// for the rules.
func Tokenize(text string) []string {
	terms, _ := TokenizeCount(text)
	return terms
}

// TokenizeCount is Tokenize that also returns the number of terms before
// duplicates were removed, which is the BM25 length of text.
func TokenizeCount(text string) (terms []string, n int) {
	all := appendTerms(nil, text, nil)
	return dedupe(all), len(all)
}

// dedupe removes repeated terms in place, keeping first occurrences.
func dedupe(all []string) []string {
	out := all[:0]
	if len(all) <= 32 {
		for _, t := range all {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
		return out
	}
	seen := make(map[string]struct{}, len(all))
	for _, t := range all {
		if _, dup := seen[t]; !dup {
			seen[t] = struct{}{}
			out = append(out, t)
		}
	}
	return out
}

// stopWords are dropped from documents and queries: the most common English
// function words, whose posting lists would be as long as the corpus while
// telling nothing about relevance. Negations (no, not) are kept on purpose.
// A word is compared in its lower-case surface form; a word with an
// apostrophe is also compared after stemming ("it's" -> "it").
var stopWords = map[string]struct{}{
	"a": {}, "an": {}, "and": {}, "are": {}, "as": {}, "at": {},
	"be": {}, "been": {}, "but": {}, "by": {},
	"for": {}, "from": {},
	"had": {}, "has": {}, "have": {}, "he": {}, "her": {}, "his": {},
	"i": {}, "if": {}, "in": {}, "into": {}, "is": {}, "it": {}, "its": {},
	"of": {}, "on": {}, "or": {},
	"she": {}, "so": {},
	"than": {}, "that": {}, "the": {}, "their": {}, "them": {}, "then": {},
	"there": {}, "these": {}, "they": {}, "this": {}, "those": {}, "to": {},
	"was": {}, "we": {}, "were": {}, "which": {}, "will": {}, "with": {},
	"you": {},
}

// IsStopWord reports whether the lower-case word w is on the stop-word list.
func IsStopWord(w string) bool {
	_, ok := stopWords[w]
	return ok
}

// appendTerms appends every term of text to dst in order, with repeats.
// sc may be nil.
func appendTerms(dst []string, text string, sc *stemCache) []string {
	s, ascii := normalize(text)
	if ascii {
		for {
			var seg string
			seg, s = nextASCIIWord(s)
			if seg == "" {
				return dst
			}
			dst = appendSegment(dst, seg, sc)
		}
	}
	// A run of segments of one unspaced script is s[runStart:runEnd].
	var (
		full             = s
		runClass         = classNone
		runStart, runEnd int
		seg              string
		segState         = -1
	)
	flush := func() {
		if runClass != classNone {
			dst = appendBigrams(dst, full[runStart:runEnd], runClass == classCJK)
			runClass = classNone
		}
	}
	for len(s) > 0 {
		start := len(full) - len(s)
		seg, s, segState = uniseg.FirstWordInString(s, segState)
		cls, words := classify(seg)
		if cls != classNone && cls == runClass {
			runEnd = start + len(seg)
			continue
		}
		flush()
		switch {
		case cls != classNone:
			runClass, runStart, runEnd = cls, start, start+len(seg)
		case words:
			dst = appendSegment(dst, seg, sc)
		}
	}
	flush()
	return dst
}

// normalize applies NFKC, then folds case and cleans characters that must
// not reach a term:
//   - letters are lower-cased with Unicode's simple, language-neutral
//     mapping (so "İ" becomes "i" and the Turkish dotless "ı" stays "ı");
//     final sigma "ς" is folded to "σ" so Greek words match in any position;
//   - typographic apostrophes ’ and ‘ become ' (the stemmer and UAX #29
//     treat ' as part of a word);
//   - control characters (including 0x00), zero-width space and invalid
//     UTF-8 become spaces;
//   - other format characters (soft hyphen, zero-width joiners, byte order
//     mark) are removed, so "co\u00ADoperate" is "cooperate".
//
// It also reports whether the result is pure ASCII.
func normalize(text string) (string, bool) {
	clean, ascii := true, true
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c >= utf8.RuneSelf {
			clean, ascii = false, false
			break
		}
		if c < 0x20 || c == 0x7f || 'A' <= c && c <= 'Z' {
			clean = false
		}
	}
	if clean {
		return text, true
	}
	if !ascii && !norm.NFKC.IsNormalString(text) {
		text = norm.NFKC.String(text)
	}
	var b strings.Builder
	b.Grow(len(text))
	ascii = true
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c < 0x20 || c == 0x7f:
				b.WriteByte(' ')
			case 'A' <= c && c <= 'Z':
				b.WriteByte(c + 'a' - 'A')
			default:
				b.WriteByte(c)
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1, r == '\u200b':
			b.WriteByte(' ')
		case r == '’' || r == '‘':
			b.WriteByte('\'')
		case r == 'ς':
			ascii = false
			b.WriteRune('σ')
		case unicode.Is(unicode.Cc, r):
			b.WriteByte(' ')
		case unicode.Is(unicode.Cf, r):
			// dropped
		default:
			lr := unicode.ToLower(r)
			ascii = ascii && lr < utf8.RuneSelf
			b.WriteRune(lr)
		}
	}
	return b.String(), ascii
}

// Word-break classes of ASCII characters (UAX #29).
const (
	wbOther      = iota
	wbLetter     // ALetter
	wbNumeric    // Numeric
	wbExtendNum  // ExtendNumLet: _
	wbMidLetter  // MidLetter: :
	wbMidNumLetQ // MidNumLet and Single_Quote: . '
	wbMidNum     // MidNum: , ;
)

// asciiWordBreak is the UAX #29 word-break class of every ASCII character.
var asciiWordBreak = func() (t [utf8.RuneSelf]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = wbLetter, wbLetter
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = wbNumeric
	}
	t['_'] = wbExtendNum
	t[':'] = wbMidLetter
	t['.'], t['\''] = wbMidNumLetQ, wbMidNumLetQ
	t[','], t[';'] = wbMidNum, wbMidNum
	return t
}()

// nextASCIIWord returns the next UAX #29 word segment of the ASCII text s
// that contains a letter or digit or starts with an underscore, and the
// text after it; word is "" at the end. It is rivo/uniseg's segmentation
// restricted to ASCII (a test and a fuzz target check that they agree),
// about five times faster, which matters when the engine rebuilds an index
// of 100,000 records at start.
func nextASCIIWord(s string) (word, rest string) {
	i := 0
	for i < len(s) {
		c := asciiWordBreak[s[i]]
		if c == wbLetter || c == wbNumeric || c == wbExtendNum {
			break
		}
		i++
	}
	if i == len(s) {
		return "", ""
	}
	j := i + 1
	for j < len(s) {
		prev, next := asciiWordBreak[s[j-1]], asciiWordBreak[s[j]]
		var after uint8 = wbOther
		if j+1 < len(s) {
			after = asciiWordBreak[s[j+1]]
		}
		switch {
		case next == wbExtendNum: // WB13a
		case prev == wbExtendNum && (next == wbLetter || next == wbNumeric): // WB13b
		case prev == wbLetter && (next == wbLetter || next == wbNumeric): // WB5, WB9
		case prev == wbNumeric && (next == wbLetter || next == wbNumeric): // WB8, WB10
		case prev == wbLetter && (next == wbMidLetter || next == wbMidNumLetQ) && after == wbLetter: // WB6, WB7
			j++
		case prev == wbNumeric && (next == wbMidNum || next == wbMidNumLetQ) && after == wbNumeric: // WB11, WB12
			j++
		default:
			return s[i:j], s[j:]
		}
		j++
	}
	return s[i:], ""
}

// Script classes of segments that are merged into runs and cut into
// bigrams because the script is written without spaces between words.
const (
	classNone  = iota
	classCJK   // Han, Hiragana, Katakana (and the prolonged sound mark)
	classSEA   // Thai, Lao, Khmer, Myanmar
	classMixed // internal: runes of more than one class
)

func scriptClass(r rune) int {
	switch {
	case r < 0x0e00:
		return classNone
	case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) || r == 'ー':
		return classCJK
	case unicode.In(r, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar):
		return classSEA
	}
	return classNone
}

// classify reports the unspaced-script class of a segment whose letters
// all belong to one such class (classNone otherwise), and whether the
// segment contains any letter or number at all.
func classify(seg string) (cls int, words bool) {
	cls = -1
	for _, r := range seg {
		if r < utf8.RuneSelf {
			if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' {
				return classNone, true
			}
			cls = classMixed
			continue
		}
		letter := unicode.IsLetter(r) || unicode.IsNumber(r)
		words = words || letter
		if unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r) {
			continue // marks belong to whatever they follow
		}
		c := scriptClass(r)
		switch {
		case c == classNone:
			cls = classMixed
		case cls == -1:
			cls = c
		case cls != c:
			cls = classMixed
		}
	}
	if cls < classCJK || cls > classSEA || !words {
		return classNone, words
	}
	return cls, words
}

// appendBigrams appends the overlapping character bigrams of s, or s itself
// when it has one character. With dropMarks, non-spacing marks (such as
// ideographic variation selectors) are ignored; otherwise (Thai, Khmer, ...)
// they count as characters. Characters that are neither letters, numbers
// nor marks are separators.
func appendBigrams(dst []string, s string, dropMarks bool) []string {
	prevStart, prevEnd := -1, -1
	single := -1 // start of a character that has no right neighbour yet
	for i, r := range s {
		size := utf8.RuneLen(r)
		if size < 0 {
			size = 1
		}
		mark := unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r)
		if mark && dropMarks {
			continue
		}
		if !mark && !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.Is(unicode.Mc, r) {
			if single >= 0 {
				dst = appendTerm(dst, s[single:prevEnd])
			}
			prevStart, prevEnd, single = -1, -1, -1
			continue
		}
		if prevStart >= 0 {
			if prevEnd == i {
				dst = appendTerm(dst, s[prevStart:i+size])
			} else {
				dst = appendTerm(dst, s[prevStart:prevEnd]+s[i:i+size])
			}
			single = -1
		} else {
			single = i
		}
		prevStart, prevEnd = i, i+size
	}
	if single >= 0 {
		dst = appendTerm(dst, s[single:prevEnd])
	}
	return dst
}

// isPartRune reports whether r belongs inside a word part: letters,
// numbers, combining marks and the apostrophe. Every other character of a
// segment (. _ : , and the like) joins parts of a compound.
func isPartRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '\'' || 'A' <= r && r <= 'Z'
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r)
}

// appendSegment appends the terms of one UAX #29 word segment. A segment
// made of several parts joined by punctuation (example.com, snake_case,
// v1.2.3, key:value) yields the whole compound, trimmed of joiners at its
// ends, followed by the terms of each part.
func appendSegment(dst []string, seg string, sc *stemCache) []string {
	var parts [8]string
	ps := parts[:0]
	first, last := -1, -1
	start := -1
	for i, r := range seg {
		if isPartRune(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			ps = append(ps, seg[start:i])
			if first < 0 {
				first = start
			}
			last = i
			start = -1
		}
	}
	if start >= 0 {
		ps = append(ps, seg[start:])
		if first < 0 {
			first = start
		}
		last = len(seg)
	}
	if len(ps) > 1 {
		dst = appendTerm(dst, seg[first:last])
	}
	for _, p := range ps {
		dst = appendPart(dst, p, sc)
	}
	return dst
}

// appendPart appends the term of one word part: stop words are dropped,
// words in Latin letters are stemmed, parts of an unspaced script become
// bigrams, anything else (numbers, words with digits, other scripts) is
// kept as it is.
func appendPart(dst []string, p string, sc *stemCache) []string {
	if isLatinWord(p) {
		if t := sc.term(p); t != "" {
			return appendTerm(dst, t)
		}
		return dst
	}
	if !hasLetterOrNumber(p) {
		return dst
	}
	if cls, _ := classify(p); cls != classNone {
		return appendBigrams(dst, p, cls == classCJK)
	}
	return appendTerm(dst, p)
}

// latinTerm returns the term of a word in Latin letters: its stem, or ""
// for a stop word.
func latinTerm(w string) string {
	if IsStopWord(w) {
		return ""
	}
	st := english.Stem(w, true)
	if st == "" {
		return w
	}
	if strings.IndexByte(w, '\'') >= 0 && IsStopWord(st) {
		return ""
	}
	return st
}

func hasLetterOrNumber(p string) bool {
	for _, r := range p {
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			return true
		}
	}
	return false
}

// isLatinWord reports whether p consists of Latin letters, marks and
// apostrophes only, with at least one letter: the words that are checked
// against the stop words and given to the English stemmer.
func isLatinWord(p string) bool {
	letter := false
	for _, r := range p {
		switch {
		case 'a' <= r && r <= 'z':
			letter = true
		case r == '\'':
		case r < utf8.RuneSelf:
			return false
		case unicode.IsMark(r):
		case unicode.Is(unicode.Latin, r):
			letter = true
		default:
			return false
		}
	}
	return letter
}

// appendTerm appends t cut to MaxTermBytes at a character boundary.
func appendTerm(dst []string, t string) []string {
	if len(t) > MaxTermBytes {
		n := MaxTermBytes
		for n > 0 && !utf8.RuneStart(t[n]) {
			n--
		}
		t = t[:n]
	}
	if t == "" {
		return dst
	}
	return append(dst, t)
}

// maxStemCache bounds a stemCache; a full cache is emptied.
const maxStemCache = 1 << 15

// stemCache remembers latinTerm of words, because the Snowball stemmer
// costs more than the rest of the tokenizer together. The zero value is
// ready; a nil cache computes every word. It is safe for concurrent use.
type stemCache struct {
	mu sync.RWMutex
	m  map[string]string
}

func (c *stemCache) term(w string) string {
	if c == nil {
		return latinTerm(w)
	}
	c.mu.RLock()
	t, ok := c.m[w]
	c.mu.RUnlock()
	if ok {
		return t
	}
	t = strings.Clone(latinTerm(w))
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxStemCache {
		c.m = make(map[string]string, 1024)
	}
	c.m[strings.Clone(w)] = t
	c.mu.Unlock()
	return t
}
