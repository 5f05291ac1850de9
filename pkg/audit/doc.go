// Package audit writes and verifies memsvc's audit log: a tamper-evident,
// hash-chained file of JSON Lines with one entry per committed state change.
// It is a format package: this comment is the definition of the bytes, and the
// code follows it.
//
// # Lines
//
// The log is a sequence of lines, each ending with one LF (0x0A). Line n
// (1-based) holds the entry with sequence n. A line is
//
//	{"version":1,"sequence":S,"timestamp":T,"operation":O,"record_ids":R,"store_types":K,"summary":M,"prev_hash":P,"entry_hash":H}
//
// with these nine members in exactly this order, nothing else, and no
// whitespace outside strings:
//
//   - version: the number 1, written as the single digit 1.
//   - sequence: a decimal integer with no sign, leading zero, fraction or
//     exponent; 1 on line 1 and one more on each following line.
//   - timestamp: a string with the entry time in UTC in Go's
//     time.RFC3339Nano layout: "YYYY-MM-DDTHH:MM:SS", then, only if the
//     sub-second part is not zero, "." and 1 to 9 digits with trailing zeros
//     removed, then "Z". Years 0001 to 9999.
//   - operation: a non-empty string; see Operations below.
//   - record_ids and store_types: arrays of strings, "[]" when empty, elements
//     separated by a bare ",".
//   - summary: a JSON object in canonical form (below), "{}" when empty.
//   - prev_hash: a string of 64 lowercase hex digits, the entry_hash of line
//     n-1, or 64 zeros (GenesisHash) on line 1.
//   - entry_hash: a string of 64 lowercase hex digits, defined under Hash.
//
// No line is longer than MaxLineSize bytes without its LF.
//
// # Strings
//
// Every string, object keys included, is valid UTF-8 written between double
// quotes with exactly these escapes: '"' as \", '\' as \\, U+0008 as \b,
// U+0009 as \t, U+000A as \n, U+000C as \f, U+000D as \r, every other code
// point below U+0020 as \u00XX with lowercase hex digits, and U+2028 and
// U+2029 as \u2028 and \u2029. Every other character, including '/', '<',
// '>', '&', U+007F and all non-ASCII text, is written as its own UTF-8
// bytes. This is what encoding/json's Encoder writes with SetEscapeHTML(false)
// for valid UTF-8, and the package uses it; TestStringEscaping pins each rule,
// so a Go release that changed the encoder fails the tests instead of
// silently changing the format. The rules here, not encoding/json, are the
// format.
//
// # Summary
//
// A summary is a JSON object in canonical form: members sorted by key in
// ascending byte order of the unescaped key, no key twice, strings as above,
// true, false and null as such, numbers exactly as the writer was given them
// (any valid JSON number literal: they are hashed byte for byte, never
// reinterpreted), arrays in order, and no whitespace. It is the output of
// encoding/json's Encoder (SetEscapeHTML(false)) for the value that a Decoder
// with UseNumber reads from the summary. The writer canonicalises whatever
// summary it is given; a nil, empty or null summary is written as {}. A
// summary describes an operation (counts, ids, flags, store names) and never
// contains memory content.
//
// # Hash
//
// The canonical form C of an entry is its line without the LF and without
// the entry_hash member, closed by "}":
//
//	C    = {"version":1,"sequence":S,"timestamp":T,"operation":O,"record_ids":R,"store_types":K,"summary":M,"prev_hash":P}
//	H    = lowercase hex of SHA-256(C)
//	line = C without its final "}"  +  ,"entry_hash":"H"}  +  LF
//
// Every byte of a line except the value of entry_hash itself is therefore
// covered by H, and every H is covered by the next line's prev_hash. The
// hash of line 1 can be recomputed with standard tools:
//
//	head -n 1 audit.jsonl | sed 's/,"entry_hash":"[0-9a-f]*"}$/}/' | tr -d '\n' | sha256sum
//
// # Verification
//
// A verifier parses each line, renders the entry anew from the parsed values
// and requires the rendering to equal the line byte for byte, then checks the
// sequence, prev_hash and entry_hash. So a line is accepted only if it is
// exactly what the writer would have written for its values: unknown,
// duplicate, missing or reordered members, whitespace, CR LF line ends,
// alternative string escapes, number or timestamp spellings and unsorted
// summary keys are all rejected, and nothing can be slipped into a line
// outside the hash. Verify and VerifyFile report the first failure as a
// *BrokenError naming the 1-based line and a Fault.
//
// A final line without its LF is torn: an append that was cut short by a
// crash, or one that another process is writing while the file is read.
// Verification reports it as FaultTorn, which matches ErrTorn and not
// ErrBroken, together with the Report of the complete lines before it: the
// chain up to there is intact, and the torn bytes were never acknowledged.
// VerifyFile reads the file only up to its size when opened, so entries
// appended afterwards are ignored. The writer only ever adds whole lines at
// the end, in order, so every prefix of the file is a valid chain followed
// by at most one partial line: an append in progress shows up as torn at
// worst, never as broken.
//
// # Writing
//
// A Log is the single writer of a log file; it holds an exclusive advisory
// lock on the file (where the platform has flock) so that a second writer
// fails with ErrLocked instead of forking the chain. Append takes events
// whose sequence numbers the caller has already assigned, checks that they
// continue the chain exactly (anything else is a *SequenceError, and nothing
// is written), renders all their lines, writes them with one write, syncs
// the file once and only then advances the head. If a write or sync fails
// (a full disk, say), the file may end in a torn or unsynced line and Err
// reports the failure; the next Append first truncates the file to the end
// of the last entry it synced and syncs the cut, and only when that works
// appends. So a log recovers without being reopened once space returns,
// and the caller retries the same events from its outbox.
//
// This suits an outbox: the engine stores each pending event, with its
// sequence number and time, in the same database batch as the state change
// it records; an appender passes pending events to Append in sequence order
// and deletes them from the outbox once Append has returned; at start-up,
// pending events with a sequence at or below Last are already in the log
// and are deleted, and the rest are appended. Because the event carries its
// own time, a replayed event is written with the same bytes it would have
// had the first time.
//
// # Opening
//
// Open creates the file (mode 0600) and its directory when missing, then
// checks the end of the existing file. By default it verifies only the last
// two lines: that both are canonical with correct entry_hash values, that
// the last continues the one before (sequence and prev_hash), and that a
// single line is sequence 1 with the genesis prev_hash. That costs the same
// for any log size and catches a damaged or forged tail, but not an edit
// deeper in the file; Options.VerifyFull verifies every line, as
// VerifyFile and the audit-verify command do. When the tail check fails,
// Open verifies the whole file to name the first broken line.
//
// A torn final line is cut off by Open with a warning on the injected
// logger: it was never acknowledged, so the caller's outbox still holds its
// event. Open truncates only when the complete lines before it verify, and
// only bytes that begin like an entry (or with a zero byte, as a crash can
// leave unwritten blocks) and are no longer than a line can be; anything
// else without a final LF is refused as broken, so Open never cuts into a
// file that is not an audit log. A complete line that does not verify is
// always an error naming its line number, and the file is left untouched.
//
// # Operations
//
// The operation names memsvc writes are the Op constants. They are part of
// the format: tools filter on them, so a name is never reused for another
// meaning.
//
// Every entry memsvc writes names the namespace it concerns in its
// summary: "namespace" holds one name, or "*" for a change to the whole
// data directory (the background decay tick, a store encryption
// migration); an export or import of several namespaces lists them under
// "namespaces" instead.
package audit

// Operation names that memsvc writes in the operation member.
const (
	// OpEncodeStore: one curated record was stored.
	OpEncodeStore = "encode.store"
	// OpEncodeBatch: a batch of curated records was stored in one atomic
	// change; the entry lists them all.
	OpEncodeBatch = "encode.batch"
	// OpEncodeUpdate: a curated record's content or metadata changed.
	OpEncodeUpdate = "encode.update"
	// OpEncodeStoreRaw: one raw journal entry was appended.
	OpEncodeStoreRaw = "encode.store_raw"
	// OpEncodeBatchRaw: a batch of raw journal entries was appended in one
	// atomic change; the entry lists them all.
	OpEncodeBatchRaw = "encode.batch_raw"
	// OpRecallReconsolidate: a recall with reconsolidation updated the
	// persisted recall counter and the records it returned (access counts,
	// co-activation of their links, reinforcement where due).
	OpRecallReconsolidate = "recall.query.reconsolidate"
	// OpDreamTick: a dream tick summarised a group of raw entries (one
	// entry per group; dry runs change nothing and are not logged).
	OpDreamTick = "lifecycle.dream_tick"
	// OpConsolidate: a consolidation changed records (dry runs are not
	// logged).
	OpConsolidate = "lifecycle.consolidate"
	// OpLink: similarity associations were added between records (a
	// pass that finds every edge already there changes nothing and is not
	// logged).
	OpLink = "associations.link"
	// OpDecayTick: the decay clock advanced.
	OpDecayTick = "lifecycle.decay_tick"
	// OpDecayPrune: records below decay.prune_below were deleted.
	OpDecayPrune = "lifecycle.decay_prune"
	// OpSetMode: the recall mode changed.
	OpSetMode = "lifecycle.set_mode"
	// OpForget: records were deleted on request.
	OpForget = "lifecycle.forget"
	// OpExport: an archive was exported. Not a state change, but data left
	// the server, so it is logged.
	OpExport = "lifecycle.export"
	// OpImport: an archive was imported.
	OpImport = "lifecycle.import"
	// OpMigrateStoreEncryption: stored records were migrated to encryption
	// at rest.
	OpMigrateStoreEncryption = "security.migrate_store_encryption"
	// OpNamespaceDrop: a namespace was dropped: every record, raw entry and
	// setting in it deleted (the default namespace is emptied).
	OpNamespaceDrop = "namespace.drop"
)
