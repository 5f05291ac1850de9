package servercmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

func TestRecallAndSetMode(t *testing.T) {
	dir := t.TempDir()
	id := storeText(t, dir, "the staging cluster runs on spot instances")
	storeText(t, dir, "lunch is at noon")
	out, errOut, code := run(t, dir, "recall", "spot instances")
	if code != 0 {
		t.Fatalf("recall: %d %s", code, errOut)
	}
	want := regexp.MustCompile(`^Found 1 memories \(total candidates: 1\)\n\n1\. \[episodic\] score=\d\.\d{4} fidelity=1\.0000 created \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+\n   ID: ` + id + `\n   the staging cluster runs on spot instances\n\n$`)
	if !want.MatchString(out) {
		t.Fatalf("recall output:\n%s", out)
	}
	// Without a query: the most recent first.
	out, _, _ = run(t, dir, "recall", "--limit", "1")
	if !strings.Contains(out, "lunch is at noon") || strings.Contains(out, "spot") {
		t.Fatalf("recent listing:\n%s", out)
	}
	out, errOut, code = run(t, dir, "set-mode", "PERFECT", "--scope", "episodic,semantic")
	if code != 0 || out != "Recall mode set to perfect for episodic, semantic\n" {
		t.Fatalf("set-mode: %d %q %s", code, out, errOut)
	}
	_, errOut, code = run(t, dir, "set-mode", "fuzzy")
	if code != 2 || !strings.Contains(errOut, "human, perfect") {
		t.Fatalf("bad mode: %d %s", code, errOut)
	}
	_, errOut, code = run(t, dir, "recall", "x", "--mode", "dreamy")
	if code != 2 || !strings.Contains(errOut, "--mode") {
		t.Fatalf("bad --mode: %d %s", code, errOut)
	}
}

func TestDecayDreamConsolidate(t *testing.T) {
	dir := t.TempDir()
	storeText(t, dir, "an episode worth keeping")
	out, _, code := run(t, dir, "decay-tick", "--duration", "86400")
	if code != 0 || out != "Decay tick completed:\n  records updated: 1\n  records below threshold: 0\n  records pruned: 0\n" {
		t.Fatalf("decay-tick: %d %q", code, out)
	}
	if s := stats(t, dir); s.AvgFidelity < 0.707 || s.AvgFidelity > 0.708 {
		t.Fatalf("fidelity after a day: %v", s.AvgFidelity)
	}
	for _, text := range []string{"we discussed the cache eviction policy", "the cache eviction policy is LRU with a TTL"} {
		if _, errOut, code := run(t, dir, "store-raw", text, "--session-id", "s1", "--topic-id", "cache"); code != 0 {
			t.Fatal(errOut)
		}
	}
	out, _, code = run(t, dir, "dream-tick", "--dry-run", "--json")
	var dr memory.DreamTickResponse
	if err := json.Unmarshal([]byte(out), &dr); err != nil || code != 0 || dr.SemanticNodesCreated != 1 {
		t.Fatalf("dream dry run: %d %q", code, out)
	}
	out, _, _ = run(t, dir, "dream-tick", "--promote-semantic=false", "--json")
	if err := json.Unmarshal([]byte(out), &dr); err != nil || dr != (memory.DreamTickResponse{GroupsProcessed: 1, RawRecordsProcessed: 2, EpisodicSummariesCreated: 1}) {
		t.Fatalf("dream: %q", out)
	}
	out, _, code = run(t, dir, "consolidate", "--dry-run")
	if code != 0 || out != "Consolidated: processed=2, migrated=2, compressed=0, pruned=0, semantic_nodes_created=2 (dry run: nothing was changed)\n" {
		t.Fatalf("consolidate dry run: %q", out)
	}
	out, _, _ = run(t, dir, "consolidate")
	if out != "Consolidated: processed=2, migrated=2, compressed=0, pruned=0, semantic_nodes_created=2\n" {
		t.Fatalf("consolidate: %q", out)
	}
	out, _, _ = run(t, dir, "consolidate")
	if out != "Consolidated: processed=2, migrated=0, compressed=0, pruned=0, semantic_nodes_created=0\n" {
		t.Fatalf("second consolidate: %q", out)
	}
	_, errOut, code := run(t, dir, "consolidate", "--strategy", "greedy")
	if code != 2 || !strings.Contains(errOut, "full, incremental, selective") {
		t.Fatalf("bad strategy: %d %s", code, errOut)
	}
}

func TestExportImport(t *testing.T) {
	dir := t.TempDir()
	storeText(t, dir, "remember the milk")
	run(t, dir, "store-raw", "a raw note", "--session-id", "s")
	archivePath := filepath.Join(t.TempDir(), "backup.cma")
	out, errOut, code := run(t, dir, "export", "--output", archivePath, "--include-raw-journal")
	if code != 0 || !regexp.MustCompile(`^Exported 2 records to .*backup\.cma \(\d+ bytes, archive_id=[0-9a-f-]{36}, checksum=[0-9a-f]{64}\)\n$`).MatchString(out) {
		t.Fatalf("export: %d %q %s", code, out, errOut)
	}
	st, err := os.Stat(archivePath)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("archive mode %v %v", st.Mode(), err)
	}
	_, errOut, code = run(t, dir, "export", "--output", archivePath)
	if code != 1 || !strings.Contains(errOut, "already exists") || !strings.Contains(errOut, "--force") {
		t.Fatalf("overwrite without --force: %d %s", code, errOut)
	}
	if _, errOut, code = run(t, dir, "export", "--output", archivePath, "--force"); code != 0 {
		t.Fatalf("export --force: %s", errOut)
	}
	_, errOut, code = run(t, dir, "export", "--output", archivePath+"2", "--encryption-key", "pw")
	if code != 2 || !strings.Contains(errOut, "without --encrypt") {
		t.Fatalf("key without --encrypt: %d %s", code, errOut)
	}
	if _, err := os.Stat(archivePath + "2"); err == nil {
		t.Fatal("a refused export left a file")
	}

	other := t.TempDir()
	out, errOut, code = run(t, other, "import", archivePath)
	if code != 0 || out != "Imported 1 records from "+archivePath+"\n" {
		t.Fatalf("import: %d %q %s", code, out, errOut)
	}
	if s := stats(t, other); s.TotalRecords != 1 {
		t.Fatalf("imported stats %+v", s)
	}

	// Encrypted, with the passphrase on stdin.
	enc := filepath.Join(t.TempDir(), "enc.cma")
	if _, errOut, code := runIn(t, dir, "s3cret phrase\n", "export", "--output", enc, "--encrypt", "--encryption-key-stdin"); code != 0 {
		t.Fatalf("encrypted export: %s", errOut)
	}
	_, errOut, code = run(t, t.TempDir(), "import", enc)
	if code != 1 || !strings.Contains(errOut, "passphrase required") || !strings.Contains(errOut, "--decryption-key-stdin") {
		t.Fatalf("encrypted import without key: %d %s", code, errOut)
	}
	if out, errOut, code := runIn(t, t.TempDir(), "s3cret phrase\n", "import", enc, "--decryption-key-stdin"); code != 0 || !strings.HasPrefix(out, "Imported 1 records") {
		t.Fatalf("encrypted import: %d %q %s", code, out, errOut)
	}
}

func TestAuditVerify(t *testing.T) {
	dir := t.TempDir()
	storeText(t, dir, "one")
	storeText(t, dir, "two")
	out, errOut, code := run(t, dir, "audit-verify")
	if code != 0 || !regexp.MustCompile(`^Audit log verified:\n  path=.*audit\.jsonl\n  entries=2\n  last_sequence=2\n  head_hash=[0-9a-f]{64}\n  ok\n$`).MatchString(out) {
		t.Fatalf("audit-verify: %d %q %s", code, out, errOut)
	}
	// Tamper with the first entry: the chain breaks at line 1.
	logPath := filepath.Join(dir, "audit.jsonl")
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(logPath, bytes.Replace(b, []byte(`"encode.store"`), []byte(`"encode.stork"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = run(t, dir, "audit-verify")
	if code != 1 || out != "" || !strings.Contains(errOut, "NOT intact") || !strings.Contains(errOut, "line 1") {
		t.Fatalf("tampered log: %d %q %s", code, out, errOut)
	}
	// Nothing to verify is a failure that names the path, never "ok":
	// a missing log, an empty one, a directory, a data directory without a
	// log.
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"audit-verify", "--path", filepath.Join(dir, "none.jsonl")}, "no audit log at " + filepath.Join(dir, "none.jsonl")},
		{[]string{"audit-verify", "--path", empty}, "audit log " + empty + " is empty"},
		{[]string{"audit-verify", "--path", dir}, "audit log " + dir + " is not a regular file"},
	} {
		out, errOut, code := run(t, dir, tc.args...)
		if code != 1 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, out %q, err %q", tc.args, code, out, errOut)
		}
	}
	nowhere := filepath.Join(t.TempDir(), "nowhere")
	out, errOut, code = run(t, nowhere, "audit-verify")
	if code != 1 || out != "" || !strings.Contains(errOut, "data directory "+nowhere) || !strings.Contains(errOut, "--data-dir") {
		t.Errorf("data dir without a log: exit %d, out %q, err %q", code, out, errOut)
	}
}

// TestDreamTickSecretDefault: dream-tick processes every secrecy level by
// default, as the spec says, and a secret entry's text still never reaches
// a summary or a semantic memory: it is marked processed and counted as
// redacted. --secrecy-levels narrows what is processed.
func TestDreamTickSecretDefault(t *testing.T) {
	dir := t.TempDir()
	const secretText = "the vault combination is tangerine seventeen"
	storeRaw := func(text string, extra ...string) {
		t.Helper()
		args := append([]string{"store-raw", text, "--session-id", "ops", "--topic-id", "deploy"}, extra...)
		if _, errOut, code := run(t, dir, args...); code != 0 {
			t.Fatalf("store-raw: %s", errOut)
		}
	}
	storeRaw("we deploy the billing service every tuesday")
	storeRaw("the billing service deploy needs a database migration first")
	storeRaw(secretText, "--secrecy-level", "secret")
	dream := func(args ...string) memory.DreamTickResponse {
		t.Helper()
		out, errOut, code := run(t, dir, append([]string{"dream-tick", "--json"}, args...)...)
		var dr memory.DreamTickResponse
		if err := json.Unmarshal([]byte(out), &dr); err != nil || code != 0 {
			t.Fatalf("dream-tick: exit %d %q %s", code, out, errOut)
		}
		return dr
	}

	// Narrowed: the secret entry is left pending.
	if dr := dream("--secrecy-levels", "public,sensitive"); dr.RawRecordsProcessed != 2 || dr.EpisodicSummariesCreated != 1 || dr.SemanticNodesCreated != 1 {
		t.Fatalf("dream-tick without secret: %+v", dr)
	}
	// Default: the secret entry is processed too, alone in its own group.
	want := memory.DreamTickResponse{GroupsProcessed: 1, RawRecordsProcessed: 1, EpisodicSummariesCreated: 1}
	if dr := dream("--dry-run"); dr != want {
		t.Fatalf("default dry run after a narrowed tick: %+v, want the secret entry pending", dr)
	}
	if dr := dream(); dr != want {
		t.Fatalf("default dream-tick: %+v", dr)
	}
	if dr := dream(); dr != (memory.DreamTickResponse{}) {
		t.Fatalf("second default dream-tick: %+v, want nothing left", dr)
	}

	// Every derived record: none holds the secret text; the first summary
	// holds the facts.
	out, _, _ := run(t, dir, "recall-raw", "--session-id", "ops", "--json")
	var rr memory.RecallRawQueryResponse
	if err := json.Unmarshal([]byte(out), &rr); err != nil || len(rr.Records) != 3 {
		t.Fatalf("recall-raw: %q", out)
	}
	derived := map[memory.ID]bool{}
	for _, raw := range rr.Records {
		if len(raw.DerivedMemoryIDs) == 0 {
			t.Fatalf("raw entry %s (%s) was not processed", raw.ID, raw.SecrecyLevel)
		}
		for _, id := range raw.DerivedMemoryIDs {
			derived[id] = true
		}
	}
	if len(derived) != 3 { // summary and semantic node, then the secret entry's summary
		t.Fatalf("derived records %v", derived)
	}
	facts := false
	for id := range derived {
		out, errOut, code := run(t, dir, "inspect", id.String(), "--json")
		if code != 0 {
			t.Fatalf("inspect %s: %s", id, errOut)
		}
		if strings.Contains(out, "tangerine") || strings.Contains(out, "vault") {
			t.Fatalf("secret text leaked into derived record %s:\n%s", id, out)
		}
		facts = facts || strings.Contains(out, "every tuesday") && strings.Contains(out, "database migration")
	}
	if !facts {
		t.Fatal("no summary holds the facts of the normal entries")
	}
}
