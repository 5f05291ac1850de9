// Package searchindex is memsvc's in-memory full-text index. One Index
// serves one collection of documents (a namespace's curated records, or
// its raw journal): it ranks with BM25F, finds the top k without touching
// every posting, keeps each document's terms in order for second-stage
// ranking (proximity, query expansion, neighbours), and serialises to a
// checksummed snapshot whose bytes the caller stores where it likes. It
// knows nothing of storage (docs/layering.txt forbids it pkg/store and
// pebble) and takes its analyzer from the caller (textindex.Analyzer in
// the engine).
//
// # Documents
//
// A document has a memory.ID, a fixed attribute word (Attrs: a time, a
// group key and a 32-bit tag, whose meaning is the caller's, so filters
// never read records) and up to MaxFields fields of text. Documents are
// numbered densely (uint32) in the order they are added. Add replaces a
// document with the same id (the old number is tombstoned and the new
// version appended), Delete tombstones it; statistics (document count,
// total length per field, document frequency per term) always count the
// live documents only, so scores are exactly those of an index built
// afresh over the same documents. Deleted documents are reclaimed by
// compaction, in the background once they are at least 256 and a quarter
// of the live ones.
//
// Each document also has a mark, a word of the caller's that, unlike the
// attributes, changes in place (SetMark, or a Query.Admit filter that
// decides from it and stores what it found out): the engine keeps there
// what its recall filter would otherwise look up per document. Marks
// start at 0, survive compaction and are not kept in snapshots.
//
// # Layout
//
// Per term: document numbers ascending ([]uint32), term frequencies
// packed in 16 bits per posting (16/fields bits per field, larger values
// in a side map), a one-byte impact bound per posting, and per block of
// 32 postings the largest length-normalised frequency of each field
// (float32). Per document: id, attrs, field lengths (in a dense array
// for scoring), and the term sequence: a uvarint term id per term in
// order, 0 between two texts of a field. The sequences are what
// snapshots store and what compaction and loading rebuild postings from.
// Terms are found by text through an open-addressing table of ids (8
// bytes a slot), documents by id through one of document numbers (4
// bytes a slot), not maps. With the CorpusGen benchmark corpus (about 25
// distinct terms per document) a 100,000-document index built at once
// takes about 396 bytes of heap per document with one field: 180 in
// postings (7 bytes each), 52 in the document table (48 an entry and the
// field lengths), 52 in term sequences, some 43 in the vocabulary, 8 in
// marks, the rest in the id table and block maxima. An index filled one
// Add at a time holds more: its posting lists grow as append grows
// slices, so a list holds up to twice the postings it has until a
// compaction or a snapshot load lays it out exactly.
//
// # Ranking
//
// BM25F (Robertson, Zaragoza and Taylor, "Simple BM25 extension to
// multiple weighted fields", 2004): for a term t and document d,
//
//	x = Σ_f w_f · tf_f / ((1 − b_f) + b_f · len_f / avglen_f)
//	score(t, d) = weight_t · idf_t · x · (k1 + 1) / (k1 + x)
//	idf_t = ln(1 + (N − df_t + 0.5) / (df_t + 0.5))
//
// where w_f and b_f are the field's weight and length normalisation
// (Field), avglen_f the field's average length over the N live
// documents, df_t the number of live documents containing t in any
// field, and weight_t the query term's weight (QueryTerm). With one field
// of weight 1 this is classic Okapi BM25. A document's score is the sum
// over the distinct query terms, always summed in query order, so every
// way of scoring a document (Search, ScoreDocs, exhaustive scoring in the
// tests) gives bit-identical scores. Hits are ordered by score
// descending, then id ascending.
//
// # Top-k retrieval
//
// Search is document-at-a-time MaxScore (Turtle and Flood, 1995) with
// block-max bounds (Ding and Suel, "Faster top-k document retrieval
// using block-max indexes", 2011; the block-max MaxScore variant of
// Chakrabarti et al., 2011, and Mallia et al., 2019). MaxScore rather
// than WAND because the recall work gives queries many weighted terms
// (expansion terms, function words at weight 0), where MaxScore's fixed
// list order costs less than WAND's sorting by current document. The
// threshold is seeded from each list's best block, candidates are
// dismissed by their postings' one-byte impact bounds before the
// document table is read, and one-term queries take a loop of their own.
// Every bound is inflated by 1e-9 relative so rounding can never prune a
// document that belongs in the results, and a document is skipped only
// when its bound is strictly below the threshold, so ties with the k-th
// hit are still decided by id. The results are exactly those of scoring
// every document (TestSearchEqualsExhaustive).
//
// Block maxima and impacts are computed with an average length 10% above
// the current one; they bound the scores while the averages stay below
// it. When additions push an average past it, searches scale them up by
// the ratio of the two normalisations (still bounds, only looser) and a
// background rebuild (the compaction) lays the postings out again.
//
// Match enumerates every match (All: every term; otherwise any term of
// positive weight) in document order, for listings with exact counts;
// conjunctive queries intersect by galloping from the shortest list.
//
// # Concurrency
//
// Documents, postings, term sequences and the vocabulary are
// append-only, and tombstones are bits set and read atomically. A search
// holds the read lock only to resolve its terms and copy the headers of
// what it will read (a microsecond or so), then runs without it, on the
// index as it was when it started: writers never wait for a search.
// Add and Delete analyse text outside the lock and hold the write lock
// only to append a document (a few microseconds). Compaction and
// Snapshot likewise capture slice headers and the tombstones under the
// read lock and do their work without it; compaction then applies what
// changed meanwhile and switches over under the write lock. Second-stage
// calls (TermsOf, ScoreDocs, ScoreProximity, DistinctiveTerms) are short
// and hold the read lock throughout.
//
// # Snapshots
//
// Snapshot captures the index at one moment (cost: a copy of the
// tombstone bits); AppendTo serialises it (format in its comment):
// versioned, with the analyzer version and the configuration, a caller's
// label (for example a change counter), the vocabulary, each live
// document with its attributes and term sequence, and a CRC-32C
// (Castagnoli) trailer. LoadSnapshot checks the checksum and every
// structural rule and rebuilds postings and statistics, refusing damaged
// or foreign bytes with ErrCorrupt and another version or configuration
// with ErrStale. Two fuzz targets check that no input makes it panic.
//
// # Benchmarks
//
// On CorpusGen corpora (textindex/corpus.go), limit 30. The "pebble"
// column is the index with postings in pebble that this one replaced
// (since removed), measured the same way at the time:
//
//	go test -run '^$' -bench . -benchtime 2000x ./pkg/engine/searchindex/
//	go test -run '^$' -bench 'Build|Snapshot' -benchtime 3x ./pkg/engine/searchindex/
//	go test -run '^$' -bench Concurrent -benchtime 20000x ./pkg/engine/searchindex/
//
// Measured on the two-core development machine while other jobs kept it
// busy (load average 5 to 12): wall times run two to three times the
// process CPU time, which is given as "cpu". Search: median latency and
// CPU per query (including analysing the query), limit 30; "3 fields"
// adds a meta and a date field to every document.
//
//	search, p50 µs (cpu µs)   pebble          1 field        3 fields
//	10k docs, 1 term          10.7 (26.6)     7.8 (10.2)     8.0 (10.6)
//	10k docs, 3 terms         80.5 (83.8)     37.6 (43.1)    31.8 (39.7)
//	10k docs, 6 terms         181 (181)       84.6 (94.6)    83.4 (95.6)
//	100k docs, 1 term         54.4 (225)      21.4 (21.6)    18.2 (19.4)
//	100k docs, 3 terms        780 (732)       91.4 (111)     85.1 (119)
//	100k docs, 6 terms        2530 (1634)     329 (351)      328 (374)
//
//	100k docs                 pebble          1 field        3 fields
//	build, docs/s (cpu)       46,000 (1.57 s) 144,000 (0.69 s)  114,000 (0.85 s)
//	heap per document         1,025 B         396 B          472 B
//	snapshot write (cpu)      -               51 ms (33 ms)  72 ms (39 ms)
//	snapshot load (cpu)       -               267 ms (139 ms) 407 ms (195 ms)
//	snapshot size             -               83 B/doc       95 B/doc
//
// At 10k documents the heap per document is about 1 KiB for either
// index: the vocabulary (about 14,000 terms) is spread over few
// documents. 48 searchers of 3-term queries and one writer (add and
// delete) over 40,000 documents (BenchmarkConcurrent): pebble 1,200
// searches/s, p50 4.5 ms, p99 167 ms; this index 3,100 to 7,900
// searches/s (machine load varied between runs), p50 70 µs, p99 42 ms, the
// tail set by the scheduler and the garbage collector on two shared
// cores, not by the lock, which searches no longer hold while they run.
package searchindex
