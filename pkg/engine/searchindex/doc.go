// Package searchindex is memsvc's in-memory full-text index: one Index
// serves one collection of documents (a namespace's curated records, or
// its raw journal). It ranks with BM25F, finds the top k with block-max
// MaxScore without touching every posting, keeps each document's terms in
// order for second-stage ranking, and serialises to a checksummed
// snapshot. It depends on no storage: the caller decides where snapshots
// go.
package searchindex
