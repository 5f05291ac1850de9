package servercmd

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/engine/textindex"
)

// dirContains reports whether a file under dir contains word, ignoring
// ASCII case.
func dirContains(t *testing.T, dir, word string) bool {
	t.Helper()
	needle := bytes.ToLower([]byte(word))
	found := false
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || found {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		found = bytes.Contains(bytes.ToLower(b), needle)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// leftovers returns the forms of word found in dir: the word itself and
// the terms the search index stores for it, in any letter case.
func leftovers(t *testing.T, dir, word string) []string {
	t.Helper()
	var found []string
	for _, w := range append([]string{word}, textindex.Tokenize(word)...) {
		if dirContains(t, dir, w) {
			found = append(found, w)
		}
	}
	return found
}

func TestMigrateStoreEncryption(t *testing.T) {
	dir := t.TempDir()
	// A unique word in a record and a raw entry. The search indexes keep it
	// as its lower-case stem, quokkaplasmi, which the word itself does not
	// contain: a leftover index is found only by looking for the stem.
	const word = "Quokkaplasmy"
	stem := textindex.Tokenize(word)
	if len(stem) != 1 || strings.Contains(strings.ToLower(word), stem[0]) {
		t.Fatalf("index terms of %s: %q; want one stem that differs from the word", word, stem)
	}
	storeText(t, dir, word+" remembers everything")
	run(t, dir, "store-raw", word+" in the journal", "--session-id", "s1")
	if !dirContains(t, dir, word) || !dirContains(t, dir, stem[0]) {
		t.Fatal("the word or its index term is not on disk before migrating: the checks below could not fail")
	}
	_, errOut, code := run(t, dir, "migrate-store-encryption", "--confirm")
	if code != 1 || !strings.Contains(errOut, "no store passphrase is configured") {
		t.Fatalf("without passphrase: %d %s", code, errOut)
	}
	pass := []string{"MEMSVC_SECURITY__STORE_ENCRYPTION_PASSPHRASE=correct horse battery staple"}
	_, errOut, code = runEnv(t, dir, pass, "migrate-store-encryption")
	if code != 2 || !strings.Contains(errOut, "--confirm") {
		t.Fatalf("without --confirm: %d %s", code, errOut)
	}
	out, errOut, code := runEnv(t, dir, pass, "migrate-store-encryption", "--confirm")
	want := "Store encryption migration completed:\n" +
		"  raw_journal: total=1, migrated=1, already_encrypted=0\n" +
		"  episodic: total=1, migrated=1, already_encrypted=0\n" +
		"  semantic: total=0, migrated=0, already_encrypted=0\n" +
		"  procedural: total=0, migrated=0, already_encrypted=0\n" +
		"  emotional: total=0, migrated=0, already_encrypted=0\n" +
		"  vector_index: total=0, migrated=0, already_encrypted=0\n"
	if code != 0 || out != want {
		t.Fatalf("migrate: %d\n%s\n%s", code, out, errOut)
	}
	if found := leftovers(t, dir, word); len(found) > 0 {
		t.Fatalf("plaintext left on disk after migration: %q", found)
	}
	out, _, _ = runEnv(t, dir, pass, "migrate-store-encryption", "--confirm")
	if !strings.Contains(out, "episodic: total=1, migrated=0, already_encrypted=1") {
		t.Fatalf("second run not idempotent:\n%s", out)
	}
	// The data is usable with the passphrase, refused with a wrong one,
	// and the migration is in the audit log.
	out, _, code = runEnv(t, dir, pass, "recall", "quokkaplasmies", "--mode", "perfect")
	if code != 0 || !strings.Contains(out, word+" remembers everything") {
		t.Fatalf("recall after migration: %d %s", code, out)
	}
	// Running with the passphrase (the recall above rebuilt the indexes)
	// writes no plaintext either.
	if found := leftovers(t, dir, word); len(found) > 0 {
		t.Fatalf("plaintext on disk after using the encrypted store: %q", found)
	}
	_, errOut, code = runEnv(t, dir, []string{"MEMSVC_SECURITY__STORE_ENCRYPTION_PASSPHRASE=wrong"}, "stats")
	if code != 1 || !strings.Contains(errOut, "does not match") {
		t.Fatalf("wrong passphrase: %d %s", code, errOut)
	}
	log, err := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	if err != nil || !bytes.Contains(log, []byte(`"security.migrate_store_encryption"`)) {
		t.Fatalf("migration not audited: %v", err)
	}
	if _, errOut, code := runEnv(t, dir, pass, "audit-verify"); code != 0 {
		t.Fatalf("audit chain broken: %s", errOut)
	}
}
