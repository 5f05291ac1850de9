// Package archive reads and writes CMA archives, the portable export format
// of memsvc, in plaintext and inside an encrypted envelope.
//
// The package depends only on the standard library, golang.org/x/crypto and
// pkg/memory, so offline tools can link it without the storage engine. Both
// directions stream: a Writer never holds more than one record and one
// cipher chunk, a Reader never more than one line and one cipher chunk.
//
// # Plaintext layout
//
// A plaintext archive is UTF-8 JSON Lines; every line, including the last,
// ends with "\n". It is byte-compatible with upstream archives.
//
//	line 1          header  {"version":V,"timestamp":T,"record_count":N,"curated_record_count":C,"raw_record_count":R}
//	lines 2..N+1    N entry lines
//	line N+2        footer  {"checksum":"<64 lowercase hex digits>"}
//
// Version "1.0" holds curated records only: C and R are null and every entry
// line is a memory.MemoryRecord in its wire JSON. Version "2.0" is a bundle:
// C and R are numbers with C+R = N, and every entry line is
//
//	{"kind":"memory_record","data":{MemoryRecord}}        (all C of them first)
//	{"kind":"raw_journal_record","data":{RawJournalRecord}}  (then all R)
//
// # Namespaces
//
// A memsvc server keeps records in namespaces (memory.ValidateNamespace).
// In a bundle, an entry of a namespace other than "default" names it in an
// additive member between kind and data:
//
//	{"kind":"memory_record","namespace":"proj-a","data":{MemoryRecord}}
//
// An entry without the member belongs to the default namespace: every
// archive written before namespaces, by upstream, or of the default
// namespace alone (writers omit the member for it, so such archives are
// byte for byte what they always were). A 1.0 archive has no wrapper to
// carry the member and holds default-namespace records only; a writer
// refuses anything else in it, and exporters use 2.0 when they export
// another namespace. Readers that do not know the member ignore it, as
// they ignore any unknown field; this package's Reader reports it in
// Entry.Namespace and refuses an invalid name as ErrCorrupt.
//
// T is the export time in RFC 3339, UTC, suffix "Z", with 0, 3, 6 or 9
// fractional digits (the fewest that show every non-zero digit).
//
// The checksum is SHA-256 over the exact bytes of every entry line, each
// followed by one "\n"; the header and footer are not included. An archive
// with no entries has the checksum of the empty string, e3b0c442...b855.
//
// Reading is a little more liberal than writing, as upstream is: blank lines
// (only spaces, tabs and CR) are skipped and not hashed, a "\r\n" terminator
// is accepted (the CR is not hashed), and the footer may lack its final
// newline. Entries of a bundle may come in any order. Unknown JSON fields are
// ignored. Missing record fields get upstream's defaults (timestamps: the
// reader's clock; version: 1; meta: the legacy marker); the record must then
// pass the model's Validate and have a non-nil id.
//
// # Encrypted envelope (format version 1)
//
// An encrypted archive is the plaintext archive above, cut into chunks and
// sealed with XChaCha20-Poly1305 under a key derived from a passphrase with
// Argon2id. All integers are big-endian. The header is 71 bytes:
//
//	offset  size  field
//	     0    11  magic         "MEMSVC-CMA\x00" (4d 45 4d 53 56 43 2d 43 4d 41 00)
//	    11     1  version       0x01
//	    12     1  kdf           0x01 = Argon2id, version 0x13
//	    13     4  memory        Argon2 memory in KiB          (default 65536 = 64 MiB)
//	    17     4  iterations    Argon2 passes                 (default 3)
//	    21     1  parallelism   Argon2 lanes                  (default 1)
//	    22     1  chunk shift   log2 of the plaintext chunk size, 10..20 (default 16 = 64 KiB)
//	    23    16  salt          random per archive
//	    39    16  nonce prefix  random per archive
//	    55    16  key check     first 16 bytes of HKDF-SHA256(master, "memsvc-cma v1 key check")
//	    71     …  chunks
//
// Keys: master = Argon2id(passphrase, salt, iterations, memory, parallelism,
// 32 bytes); the payload key is HKDF-SHA256(master, no salt, info
// "memsvc-cma v1 payload key", 32 bytes). The passphrase is used byte for
// byte: it is never trimmed (upstream does not trim archive passphrases
// either), and an empty one is refused (ErrEmptyPassphrase).
//
// Chunks: the plaintext is cut into chunks of exactly 2^shift bytes, except
// the last, which holds 1..2^shift bytes (0 only if the whole plaintext is
// empty). Chunk i (counting from 0) is stored as
//
//	+----------------------------------+-----------+
//	| ciphertext (same length as text) | tag (16)  |
//	+----------------------------------+-----------+
//	nonce = nonce prefix (16) ‖ uint64(i) (8)                      = 24 bytes
//	aad   = the 71 header bytes ‖ last flag (0x01 on the final chunk, else 0x00)
//
// Binding the counter into the nonce detects reordered, dropped or
// duplicated chunks; binding the last flag detects truncation at a chunk
// boundary; binding the header detects any change to it. The key check lets
// a reader refuse a wrong passphrase before it reads a chunk; it is derived
// from the same master key as the payload key, so it costs an attacker as
// much as trying a chunk would.
//
// Key derivation is the expensive step, and its cost is chosen by the
// header. A reader therefore accepts at most the parameters this package
// writes (DefaultKDFLimit: 64 MiB, 3 passes, 1 lane) and checks them before
// deriving anything, and a server runs at most MaxConcurrentKDF derivations
// at once (KDFGate); the rest wait their turn.
//
// What a reader reports:
//
//	not the magic, not JSON, no passphrase        ErrNotArchive
//	magic with a few bytes damaged                ErrCorrupt
//	unknown version or kdf                        ErrUnsupported
//	KDF parameters above the reader's limit       ErrTooLarge
//	valid header, no passphrase                   ErrNeedKey
//	key check differs                             ErrWrongKey (wrong passphrase, or a damaged salt,
//	                                              KDF field or key check: the two cannot be told apart)
//	header cut short, or the stream cut at a      ErrCorrupt and ErrTruncated
//	chunk boundary (or within a tag's length)
//	chunk fails to authenticate (damaged,         ErrCorrupt, naming the chunk
//	reordered, dropped, cut inside, or followed
//	by extra bytes)
//
// # Legacy envelope (read only)
//
// Upstream encrypts the whole plaintext as one blob with no magic:
//
//	salt (16) ‖ nonce (12) ‖ ChaCha20-Poly1305 ciphertext ‖ tag (16)
//
// with base = Argon2id(passphrase, "memsvc-archive-v2", 3 passes, 64 MiB,
// 1 lane, 32 bytes) and key = SHA-256(SHA-256(salt ‖ base) ‖
// "memsvc-archive-key-v2" ‖ 0x01). Upstream's own builds spell the two
// strings "cerememory-archive-v2" and "cerememory-archive-key-v2"; a Reader
// tries both spellings. It tries this envelope when it has a passphrase
// and the input is neither our envelope nor plaintext JSON. Since the blob
// has no magic, a failure means "wrong passphrase, damaged, or not an
// archive at all" and is reported as ErrWrongKey. The blob must be held in
// memory to be authenticated: the legacy path reads at most MaxSize bytes
// and needs about twice that in memory.
//
// # Errors
//
// Every error a Reader returns for bad input wraps one of ErrNotArchive,
// ErrNeedKey, ErrWrongKey, ErrCorrupt, ErrTooLarge or ErrUnsupported (test
// with errors.Is); problems on a particular line are a *LineError carrying
// the line number. ErrTruncated, ErrChecksum and ErrCountMismatch refine
// ErrCorrupt. Errors never wrap a *memory.Error: validation problems of a
// record are reported in the message only, so callers map this package's
// sentinels themselves (the engine reports all of them as IMPORT_CONFLICT).
//
// # What callers must do
//
// A Reader hands out records as it reads them, before it has seen the
// footer. Records must not be committed until Next has returned io.EOF: a
// checksum or count error surfaces only at the end. Either verify first
// (Verify, then read again) or stage the records.
//
// Writers write to the io.Writer they are given and do not close or sync
// it. Creating the file 0600 as a temporary file, syncing and renaming it
// into place is the caller's job, as is removing it when Close fails.
package archive
