// Package textindex is memsvc's full-text search: a tokenizer and a BM25
// inverted index whose postings live in a store.DB under a key prefix chosen
// by the caller. The engine keeps one index for curated records and one for
// the raw journal and writes postings in the same store.Batch as the record
// they describe, so after a crash the index agrees with the records. When
// search indexes must not reach the disk the engine gives the index an
// in-memory store.DB and rebuilds it at start.
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
//
// # Key layout
//
// Under the caller's prefix P (no prefix may be a prefix of another index's
// prefix):
//
//	P 'v'                      format version: uvarint
//	P 'p' term 0x00 doc(16)    posting: uvarint term frequency,
//	                           uvarint document length, attrs
//	P 'f' doc(16)              forward entry: uvarint document length,
//	                           uvarint number of terms, then per term
//	                           (ascending byte order) uvarint length + bytes,
//	                           then attrs
//
// doc is the 16-byte memory.ID. attrs are the caller's opaque bytes (for
// example the store type or raw flags), copied into every posting so a
// Filter can decide without reading the record. The document length is the
// number of terms with repeats over all texts of the document. Document
// frequencies are counted while a term's postings are scanned; the number
// of documents and the total length are kept in memory (Open recomputes them
// from the forward entries). Any change to the tokenizer or this layout
// bumps the version, and Open then reports ErrStale so the engine rebuilds.
// The version is written only by Rebuild (last, after every other entry)
// and by Clear, so a prefix without it is an index that was never built or
// whose rebuild did not finish.
//
// # Life cycle
//
// At start the engine calls Open and, when it reports ErrStale (always the
// case for a fresh in-memory database), Rebuild with every record. While
// serving, it calls Put or Delete with the batch that writes the record,
// commits the batch, then passes the returned Change to Apply. Search may
// run at any time from any goroutine.
//
// # Ranking
//
// Okapi BM25 with k1 = 1.2 and b = 0.75 and
// idf = ln(1 + (N − df + 0.5)/(df + 0.5)), summed over the distinct query
// terms a document contains. Scores are raw (unnormalised) and strictly
// positive; results are ordered by score descending, then document id
// ascending.
package textindex
