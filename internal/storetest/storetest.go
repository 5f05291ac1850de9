// Package storetest holds what tests of the store's users do to a data
// directory behind the engine's back. It imports the store only, so that
// the engine's own tests can use it as well as the server's.
package storetest

import (
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// DamageValue flips a byte in the middle of the stored value of record id
// (the first key under prefix that ends in id) in the closed data
// directory dir, as damage on disk would; the test fails when there is
// no such key.
func DamageValue(t testing.TB, dir string, passphrase, prefix []byte, id memory.ID) {
	t.Helper()
	db, err := store.Open(dir, store.Options{Passphrase: passphrase})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var key, val []byte
	err = db.ScanPrefix(prefix, false, func(k, v []byte) (bool, error) {
		if strings.HasSuffix(string(k), string(id[:])) {
			key, val = append([]byte(nil), k...), append([]byte(nil), v...)
			return false, nil
		}
		return true, nil
	})
	if err != nil || key == nil {
		t.Fatalf("no stored value for %s: %v", id, err)
	}
	val[len(val)/2] ^= 0x5a
	b := db.NewBatch()
	defer b.Close()
	b.Set(key, val)
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
}
