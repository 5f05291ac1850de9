package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/audittest"
	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/memory"
)

// migrationTrail reads the security.migrate_store_encryption entries of an
// audit log: their stages in order and the raw journal entries each says
// it migrated. A torn last line (a kill during an append) is ignored.
func migrationTrail(t *testing.T, path string) (stages []string, migrated []uint64) {
	t.Helper()
	for _, ent := range audittest.Entries(t, path) {
		if ent.Operation != audit.OpMigrateStoreEncryption {
			continue
		}
		var sum struct {
			Stage      string `json:"stage"`
			RawJournal struct {
				Migrated uint64 `json:"migrated"`
			} `json:"raw_journal"`
		}
		if err := json.Unmarshal(ent.Summary, &sum); err != nil {
			t.Fatalf("migration entry %d: %v", ent.Sequence, err)
		}
		stages = append(stages, sum.Stage)
		migrated = append(migrated, sum.RawJournal.Migrated)
	}
	return stages, migrated
}

// TestMigrationKilledLeavesTrail: migrate-store-encryption killed with
// SIGKILL midway leaves audit entries for the chunks it committed; the
// rerun finishes the job and audits the rest, including whatever the
// killed run committed but had not yet audited, so over both runs the
// trail accounts for every migrated entry exactly once.
func TestMigrationKilledLeavesTrail(t *testing.T) {
	const total = 40000
	dir := t.TempDir()
	srv := startServer(t, dir)
	for b := 0; b < total/1000; b++ {
		req := memory.EncodeBatchStoreRawRequest{}
		for i := range 1000 {
			r := memory.DefaultEncodeStoreRawRequest()
			r.SessionID = fmt.Sprint("session-", i%7)
			r.Content = memory.TextContent(fmt.Sprintf("journal entry %d of batch %d, long enough to be worth encrypting", i, b))
			req.Records = append(req.Records, r)
		}
		if code := call(t, "POST", srv.url("/v1/encode/raw/batch"), req, nil); code != 200 {
			t.Fatalf("raw batch %d: %d", b, code)
		}
	}
	if err := srv.stop(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	auditPath := filepath.Join(dir, "audit.jsonl")
	env := []string{"MEMSVC_SECURITY__STORE_ENCRYPTION_PASSPHRASE=correct horse battery staple"}

	// The first run is killed once it has audited a chunk.
	cmd := binCmd(t, "memsvc", env, "--data-dir", dir, "migrate-store-encryption", "--confirm")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if stages, _ := migrationTrail(t, auditPath); len(stages) > 0 {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("the migration ended (%v) before it audited a chunk:\n%s", err, out.String())
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("no chunk audited within a minute:\n%s", out.String())
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	err := <-exited
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the migration finished before the kill (%v); the test needs more data:\n%s", err, out.String())
	}
	stages, counts := migrationTrail(t, auditPath)
	var trail uint64
	for i, st := range stages {
		if st != "chunk" {
			t.Fatalf("killed run wrote a %q entry", st)
		}
		trail += counts[i]
	}
	if trail == 0 || trail >= total {
		t.Fatalf("the killed run's trail says %d of %d entries were migrated", trail, total)
	}

	// The rerun finishes.
	r := runBin(t, 5*time.Minute, env, "memsvc", "--data-dir", dir, "migrate-store-encryption", "--confirm")
	m := regexp.MustCompile(`raw_journal: total=(\d+), migrated=(\d+), already_encrypted=(\d+)`).FindStringSubmatch(r.stdout)
	if r.code != 0 || m == nil {
		t.Fatalf("rerun: %+v", r)
	}
	second, _ := strconv.ParseUint(m[2], 10, 64)
	if m[1] != strconv.Itoa(total) || second == 0 || second >= total {
		t.Fatalf("rerun report %q: the kill should have left part of the work", m[0])
	}

	stages, counts = migrationTrail(t, auditPath)
	var audited uint64
	completed := 0
	for i, st := range stages {
		switch st {
		case "chunk", "recovered":
			audited += counts[i]
		case "completed":
			completed++
			if counts[i] != second {
				t.Errorf("completed entry says %d migrated, the rerun reported %d", counts[i], second)
			}
		}
	}
	if audited != total || completed != 1 || stages[len(stages)-1] != "completed" {
		t.Fatalf("trail over both runs: %d of %d entries audited as migrated, %d completed entries, stages %v", audited, total, completed, stages)
	}
	if r := runBin(t, time.Minute, nil, "memsvc", "--data-dir", dir, "audit-verify"); r.code != 0 {
		t.Fatalf("audit-verify after the kill and the rerun: %+v", r)
	}
}
