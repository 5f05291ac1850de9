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

// Scope is the namespace scope of names; the test fails if they do not
// make one.
func Scope(t testing.TB, names ...string) access.Scope {
	t.Helper()
	s, err := access.ParseScope(names)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
