// Package memory is memsvc's data model and the contract every part of the
// project speaks: the records, the CMP operations and their errors.
//
//   - Records: MemoryRecord (a curated memory: content blocks, fidelity,
//     emotion, associations, metadata, meta-memory) and RawJournalRecord
//     (a verbatim entry of the raw journal), with Validate methods that
//     enforce the size limits and value ranges.
//   - Enumerations (StoreType, AssociationType, Visibility, ...): small
//     integers on disk, lowercase snake_case strings on the wire; the zero
//     value of each is "unset" and never valid in a stored record.
//   - The CMP request and response types, one pair per operation, with the
//     JSON shapes of the wire contract; requests that have defaults apply
//     them when decoded, and in-process callers start from the matching
//     Default... constructor.
//   - Service, the set of CMP operations. The engine implements it in
//     process and pkg/client over HTTP, so commands, transports and tests
//     are written once against it.
//   - Error, a CMP error code and a message for the client, with one
//     sentinel per code for errors.Is; any other error is internal.
//
// The package imports only the standard library: every binary links it,
// the companions included.
package memory
