// Package rank holds the ranking techniques of text recall beyond plain
// BM25, as pure functions over analysed queries and term sequences, so
// the engine can call them whatever its index looks like and they can be
// measured in isolation (memsvc-bench rankeval). docs/recall-ranking.md
// gives the measurements behind every choice.
//
// The pipeline the package recommends (Recommended):
//
//   - Query analysis (Analyzer): question and function words carry no
//     weight unless the query has nothing else, repeated words count
//     once — the query stop list of question-answering retrieval.
//   - Okapi BM25 (BM25, IDF) with k1 = 1.2 and b = 0.5, weighted per
//     query term.
//   - Fields scored weight · idf: the record's time as terms (TimeTerms,
//     QueryTimeTerms), its speaker, and words related by a lexical
//     resource.
//   - A second stage over the best candidates (Rerank): term-pair
//     proximity (Scorer.Proximity, BM25TP after Rasolofo and Savoy, 2003)
//     and evidence shared between neighbouring records of a conversation
//     (SmoothNeighbours).
//
// Also here, measured and not recommended for conversations: RM3
// pseudo-relevance feedback (Feedback) and the resolution of spoken
// relative dates (ResolveRelative).
//
// Everything is deterministic: ties keep the caller's order, and no
// function depends on map iteration order, time or randomness.
package rank
