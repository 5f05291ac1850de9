package server

import (
	"context"
	"errors"

	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// MigrationReport is what an encryption migration did, per store.
type MigrationReport = store.MigrationReport

// Stages of a migration's audit entries (the summary's "stage").
const (
	// migrationChunk: values one chunk rewrote.
	migrationChunk = "chunk"
	// migrationRecovered: chunks an earlier run committed and was
	// stopped before auditing.
	migrationRecovered = "recovered"
	// migrationCompleted: the run finished; the totals it saw.
	migrationCompleted = "completed"
)

// MigrateStoreEncryption rewrites every plaintext record encrypted with the
// configured passphrase (store.DB.MigrateEncryptionWith) and audits the
// work as it commits it: one security.migrate_store_encryption entry per
// committed chunk, with that chunk's counts, written in the same batch that
// acknowledges them, and one with the run's totals at the end. Counts a
// killed earlier run committed but did not audit are audited first. So a
// kill at any moment leaves an audit trail of exactly what was migrated.
// progress, when not nil, is called after every chunk with the number of
// values looked at so far (of MigrationSize).
func (l *Local) MigrateStoreEncryption(ctx context.Context, progress func(done uint64)) (MigrationReport, error) {
	left, ok, err := l.db.UnauditedMigration()
	if err != nil {
		return MigrationReport{}, err
	}
	if ok {
		if err := l.auditMigration(ctx, migrationRecovered, left, true); err != nil {
			return MigrationReport{}, err
		}
	}
	rep, err := l.db.MigrateEncryptionWith(ctx, store.MigrateOptions{
		Committed: func(chunk MigrationReport) error {
			return l.auditMigration(ctx, migrationChunk, chunk, true)
		},
		Progress: func(sofar MigrationReport) {
			if progress != nil {
				progress(migrationValues(sofar))
			}
		},
	})
	if err != nil {
		return rep, err
	}
	return rep, l.auditMigration(ctx, migrationCompleted, rep, false)
}

// MigrationSize is the number of values MigrateStoreEncryption looks at:
// the raw journal entries and the records of the persistent stores of
// every namespace, as the engine counts them.
func (l *Local) MigrationSize(ctx context.Context) (uint64, error) {
	s, err := l.eng.StatsAll(ctx)
	if err != nil {
		return 0, err
	}
	n := uint64(s.RawJournalRecords)
	for _, st := range memory.PersistentStores() {
		n += uint64(s.RecordsByStore[st])
	}
	return n, nil
}

// migrationValues is the number of values a report says were looked at;
// vector_index counts records its store's line counts already.
func migrationValues(r MigrationReport) uint64 {
	return r.RawJournal.Total + r.Episodic.Total + r.Semantic.Total + r.Procedural.Total + r.Emotional.Total
}

// auditMigration writes one migration entry; ack also clears the counts
// the store keeps until they are audited, in the same batch.
func (l *Local) auditMigration(ctx context.Context, stage string, rep MigrationReport, ack bool) error {
	summary := map[string]any{"stage": stage}
	for _, line := range rep.Lines() {
		summary[line.Name] = map[string]uint64{"total": line.Total, "migrated": line.Migrated, "already_encrypted": line.AlreadyEncrypted}
	}
	var with func(*store.Batch)
	if ack {
		with = func(b *store.Batch) { b.ClearUnauditedMigration() }
	}
	return l.eng.LogOperation(ctx, audit.OpMigrateStoreEncryption, summary, with)
}

// AuditReport is what verifying an audit log found.
type AuditReport = audit.Report

// VerifyAuditLog checks the hash chain of the audit log at path (see
// audit.VerifyFile). It only reads the file, so it works while a server
// appends to it.
func VerifyAuditLog(path string) (AuditReport, error) { return audit.VerifyFile(path) }

// IsTornAuditTail reports whether err from VerifyAuditLog only says that
// the last line is partly written (by a running server, or a crash).
func IsTornAuditTail(err error) bool { return errors.Is(err, audit.ErrTorn) }

// IsBrokenAuditLog reports whether err from VerifyAuditLog says the chain
// itself is broken (an entry was changed, removed or reordered), as opposed
// to the file being unreadable.
func IsBrokenAuditLog(err error) bool { return errors.As(err, new(*audit.BrokenError)) }
