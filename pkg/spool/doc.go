// Package spool is the recorder's durable on-disk queue: batches of raw
// journal requests that could not be delivered wait here, one file per
// batch, until a later run sends them.
//
// The package knows nothing about what a record means. A record is one JSON
// object; a batch file holds one or more of them. It depends on the standard
// library only.
//
// # Directory
//
// The spool directory holds redacted but still private journal text, so it
// must be private to its owner. Open creates a missing directory (and its
// missing parents) with mode 0700. A directory that already exists is used
// only if it is a real directory (not a symlink), is owned by the current
// user (Unix) and has no group or other permission bits; otherwise Open
// fails with ErrNotPrivate or ErrSymlink and names the fix. The directory is
// never chmod-ed: a directory somebody else made public may be public on
// purpose, and silently narrowing it could break them while hiding that
// journal text was exposed. The check is repeated before every batch write.
//
// # Files
//
//	batch-<unix-millis>-<uuid>.jsonl          a pending batch
//	batch-<unix-millis>-<uuid>.jsonl.bad-<uuid> a quarantined batch
//	*.tmp                                     a write in progress
//	<state name>                              small state files (WriteState)
//	<state name>.lock                         lock files (Lock, TryLock)
//
// The millisecond timestamp is zero-padded to 13 digits and the UUID is a
// version 7 UUID from a per-Dir monotonic source, so lexicographic order of
// pending names is creation order. Pending lists exactly the names of that
// form, in that order; nothing else in the directory is ever picked up.
//
// Every file is written as a temp file (created exclusively, mode 0600),
// fsynced, renamed to its final name and followed by an fsync of the
// directory. A crash at any point leaves either no file or a complete one,
// plus possibly a *.tmp file that Pending never returns and that
// RemoveStaleTemp (called by Open) deletes once it is older than
// Options.StaleTemp — old enough that no live writer can still own it.
//
// # Batch file format
//
// UTF-8 text; one JSON object per line, each line ending in "\n"; blank
// lines are ignored. A non-empty file must end in "\n" (a missing final
// newline means the file was cut short), must hold at least one record and
// may not exceed MaxFileBytes. Parse reports anything else as ErrMalformed;
// the caller quarantines such a file (Quarantine) and moves on.
//
// Rewrite replaces a batch with its unsent remainder after a partial send,
// with the same temp-file discipline, so a crash during a rewrite leaves
// either the old batch or the remainder — never a mix. Records carry their
// own idempotency keys (the recorder gives each a client-generated id), so
// sending the old batch again is harmless.
package spool
