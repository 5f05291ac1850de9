package textindex

import "strconv"

// formatVersion numbers the tokenizer's rules (Tokenize). Bump it whenever
// they change: saved search indexes built with other rules are then
// rebuilt.
const formatVersion = 1

// Analyzer is the tokenizer (Tokenize's rules) with a stem cache, for
// indexes that analyse text themselves, such as package searchindex. It
// is safe for concurrent use.
type Analyzer struct {
	stems stemCache
}

// NewAnalyzer returns an Analyzer with an empty stem cache.
func NewAnalyzer() *Analyzer { return &Analyzer{} }

// AppendTerms appends the terms of text to dst in order, with repeats.
func (a *Analyzer) AppendTerms(dst []string, text string) []string {
	return appendTerms(dst, text, &a.stems)
}

// Version names the tokenizer's rules; it changes whenever they do, so a
// saved index built with other rules is recognised as stale.
func (a *Analyzer) Version() string { return "textindex/" + strconv.Itoa(formatVersion) }
