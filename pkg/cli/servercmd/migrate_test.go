package servercmd

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runEnv(t *testing.T, dataDir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), append([]string{"--data-dir", dataDir}, args...), strings.NewReader(""), &stdout, &stderr, env)
	return stdout.String(), stderr.String(), code
}

func dirContains(t *testing.T, dir, word string) bool {
	t.Helper()
	found := false
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(word)) {
			found = true
		}
		return nil
	})
	return found
}

func TestMigrateStoreEncryption(t *testing.T) {
	dir := t.TempDir()
	// The word travels as plain bytes in raw entries' session ids and in
	// record content stored through the CLI.
	storeText(t, dir, "Quokkaplasm remembers everything")
	run(t, dir, "store-raw", "Quokkaplasm in the journal", "--session-id", "s1")
	if !dirContains(t, dir, "Quokkaplasm") {
		t.Fatal("the word is not on disk before migrating: the check below could not fail")
	}
	_, errOut, code := run(t, dir, "migrate-store-encryption", "--confirm")
	if code != 1 || !strings.Contains(errOut, "no store passphrase is configured") {
		t.Fatalf("without passphrase: %d %s", code, errOut)
	}
	pass := []string{"MEMSVC_SECURITY__STORE_ENCRYPTION_PASSPHRASE=correct horse battery staple"}
	_, errOut, code = runEnv(t, dir, pass, "migrate-store-encryption")
	if code != 1 || !strings.Contains(errOut, "--confirm") {
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
	if dirContains(t, dir, "Quokkaplasm") {
		t.Fatal("plaintext left on disk after migration")
	}
	out, _, _ = runEnv(t, dir, pass, "migrate-store-encryption", "--confirm")
	if !strings.Contains(out, "episodic: total=1, migrated=0, already_encrypted=1") {
		t.Fatalf("second run not idempotent:\n%s", out)
	}
	// The data is usable with the passphrase, refused with a wrong one,
	// and the migration is in the audit log.
	out, _, code = runEnv(t, dir, pass, "recall", "quokkaplasm", "--mode", "perfect")
	if code != 0 || !strings.Contains(out, "Quokkaplasm remembers everything") {
		t.Fatalf("recall after migration: %d %s", code, out)
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
