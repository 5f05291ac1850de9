package testkit

import (
	"testing"

	"memsvc.dev/memsvc/pkg/access"
)

// Keyring is the keyring of keys; the test fails if they do not make one.
func Keyring(t testing.TB, keys ...string) *access.Keyring {
	t.Helper()
	k, err := access.NewKeyring(keys)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
