package store

import (
	"bytes"
	"reflect"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

// TestPutEncodedRecord: a record written from its encoding reads back as
// PutRecord would have written it, with a passphrase it is sealed like
// any other record, and the encoding is left as it was: the writer keeps
// it (the recall write-behind reads it until the commit and writes it
// again when the commit fails).
func TestPutEncodedRecord(t *testing.T) {
	for _, passphrase := range []string{"", "correct horse"} {
		var db *DB
		if passphrase == "" {
			db = openMem(t)
		} else {
			db = openEnc(t, t.TempDir(), passphrase)
		}
		rec := realisticRecord(3, recID(3))
		rec.Store = memory.StoreSemantic
		enc := EncodeRecord(rec)
		kept := bytes.Clone(enc)
		commit(t, db, func(b *Batch) { b.PutEncodedRecord(DefaultNS, rec.Store, rec.ID, enc) })
		if !bytes.Equal(enc, kept) {
			t.Errorf("passphrase %q: writing the encoding changed it", passphrase)
		}
		got, err := db.GetRecord(DefaultNS, rec.Store, rec.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, rec) {
			t.Errorf("passphrase %q: read back %+v, want %+v", passphrase, got, rec)
		}
		sealed, plain := sealedValues(t, db)
		if passphrase != "" && (sealed != 1 || plain != 0) {
			t.Errorf("with a passphrase: %d sealed and %d plaintext values, want the record sealed", sealed, plain)
		}
		if passphrase == "" && (sealed != 0 || plain != 1) {
			t.Errorf("without a passphrase: %d sealed and %d plaintext values, want 1 plaintext", sealed, plain)
		}
	}
}
