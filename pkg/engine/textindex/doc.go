// Package textindex is memsvc's text analysis: the tokenizer that turns
// record text and queries into index terms (Tokenize, and Analyzer with a
// stem cache for package searchindex, which holds the postings), and
// CorpusGen, the English-like corpora the engine's benchmarks use. The
// terms a search index was built with depend on these rules alone, so
// Analyzer.Version names them and a saved index with another version is
// rebuilt.
//
// # Tokenizer
//
// Documents and queries go through the same steps (Tokenize):
//
//  1. NFKC normalisation (full-width "ＡＢＣ１" is "ABC1", the ligature "ﬁ"
//     is "fi", half-width katakana become full-width), then simple,
//     language-neutral lower-casing: "İ" and "I" become "i", the Turkish
//     dotless "ı" stays "ı" (no locale-specific rules), final sigma "ς" is
//     folded to "σ", German "ß" is kept (it does not match "ss"). Control
//     characters (including 0x00) and invalid UTF-8 become spaces, format
//     characters such as the soft hyphen and zero-width joiners are removed.
//  2. Unicode word segmentation (UAX #29, github.com/rivo/uniseg). Segments
//     without a letter or a number (spaces, punctuation, emoji) are dropped.
//  3. Han, Hiragana and Katakana segments next to each other form one run,
//     which becomes overlapping character bigrams: "東京都庁" gives 東京,
//     京都, 都庁; a one-character run is kept as that character. No run is
//     dropped however long it is. Thai, Lao, Khmer and Myanmar, which are
//     also written without spaces, are cut into bigrams the same way (their
//     combining vowel signs count as characters). Hangul words stay words.
//  4. Other segments are split into parts at every character that is not a
//     letter, number, combining mark or apostrophe. A segment of several
//     parts yields the whole compound first, then each part:
//     "example.com" gives example.com, exampl, com; "snake_case_name" gives
//     snake_case_name, snake, case, name; "v1.2.3" gives v1.2.3, v1, 2, 3.
//     UAX #29 already breaks "pkg/store" into pkg, store, and an e-mail
//     address at the "@". camelCase is not split: "camelCase" is one term,
//     camelcas.
//  5. Parts on the stop-word list (IsStopWord, about fifty English function
//     words such as "the", "and", "is") are dropped. A query made only of
//     stop words therefore has no terms and finds nothing.
//  6. Parts made only of Latin letters (and apostrophes) are stemmed with
//     the Snowball English stemmer: "deployments" is deploy, "rotated",
//     "rotating" and "rotation" are rotat, "running" and "runs" are run;
//     irregular forms stay apart ("ran" is ran). Parts with digits and other
//     scripts are not stemmed.
//  7. Terms longer than MaxTermBytes (64) are cut to the longest valid UTF-8
//     prefix that fits; a long identifier therefore still matches itself.
//
// Terms never contain 0x00 and are never empty.
package textindex
