// Package backup writes verified CMA backups of a memsvc server into a
// directory and keeps a bounded number of them. It is the library behind
// `memsvc-admin backup`; it reaches the server only through an Exporter
// (pkg/client in the command), so it never links the storage engine.
//
// # Files
//
// A backup is one CMA archive (see pkg/archive) named after the UTC time the
// run started, to the second:
//
//	memsvc-20261101T120000Z.cma        a complete, verified backup
//	memsvc-20261101T120000Z.cma.part   a backup being written
//
// The names sort in time order. The package only ever creates, renames or
// deletes files that match these two patterns exactly; anything else in the
// directory is left alone.
//
// # Procedure
//
// Create does, in this order:
//
//  1. create the directory (0700) if it is missing and take an exclusive
//     advisory lock on it, so two runs cannot race on the same directory
//     (ErrLocked);
//  2. delete the .part files that an earlier run left behind when it was
//     killed: no run holds them, since the lock is held;
//  3. create <name>.cma.part with mode 0600 (never replacing an existing
//     file) and stream the export into it through a buffer; the archive is
//     never held in memory;
//  4. flush and fsync the file;
//  5. read the file back with archive.Verify: every record, the counts and
//     the checksum must verify, and the checksum, record count, size and
//     format must equal what the server reported for the export
//     (ErrMismatch otherwise);
//  6. rename <name>.cma.part to <name>.cma (refusing to replace an existing
//     backup, ErrExists) and fsync the directory;
//  7. rotate: keep the new backup and the newest Keep-1 other complete
//     backups and delete the older ones, then fsync the directory again.
//     The new backup is kept even when others are named after a later time
//     (written while the clock ran ahead).
//
// Any failure before step 6 deletes the .part file, so a failed run leaves
// neither a .cma nor a .part behind; a run killed outright may leave its
// .part, which the next run deletes. Rotation runs only after a backup has
// been completed, so a failing server never causes good backups to be
// deleted.
package backup
