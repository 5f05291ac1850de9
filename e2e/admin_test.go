package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// TestAdminBackupRestore runs memsvc-admin against real servers: a backup
// of a running server with auth, the backup checked offline, the first
// server's audit log verified while it runs, and a restore into a second,
// empty server that then holds the same data.
func TestAdminBackupRestore(t *testing.T) {
	const key = "e2e-admin-key"
	dirA := t.TempDir()
	srvA := startServer(t, dirA, "MEMSVC_AUTH__ENABLED=true", "MEMSVC_AUTH_API_KEYS="+key)
	clientEnv := []string{"MEMSVC_SERVER_URL=" + srvA.url(""), "MEMSVC_SERVER_API_KEY=" + key}
	memsvc := func(env []string, args ...string) result {
		t.Helper()
		r := runBin(t, 30*time.Second, env, "memsvc", args...)
		if r.code != 0 {
			t.Fatalf("memsvc %q: %+v", args, r)
		}
		return r
	}
	memsvc(clientEnv, "store", "the release train leaves on Thursdays", "--store", "semantic")
	memsvc(clientEnv, "store", "rollback needs the previous image tag", "--store", "procedural")
	memsvc(clientEnv, "store", "the on-call rotation changed in May")
	memsvc(clientEnv, "store-raw", "user asked about the marmalade incident", "--session-id", "s1")
	memsvc(clientEnv, "store-raw", "assistant explained the incident timeline", "--session-id", "s1")

	admin := func(env []string, args ...string) (result, map[string]any) {
		t.Helper()
		r := runBin(t, 60*time.Second, env, "memsvc-admin", args...)
		var m map[string]any
		if r.stdout != "" {
			if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
				t.Fatalf("memsvc-admin %q: stdout is not JSON (%v): %+v", args, err, r)
			}
		}
		return r, m
	}

	// Without the key the server refuses, and nothing is left behind.
	backups := filepath.Join(t.TempDir(), "backups")
	r, _ := admin(nil, "backup", "--server-url", srvA.url(""), "--dir", backups)
	if r.code != 1 || !strings.Contains(r.stderr, "Authorization") {
		t.Fatalf("backup without the key: %+v", r)
	}
	if entries, _ := os.ReadDir(backups); len(entries) != 0 {
		t.Fatalf("failed backup left %v", entries)
	}

	r, b := admin([]string{"MEMSVC_SERVER_API_KEY=" + key}, "backup", "--server-url", srvA.url(""), "--dir", backups, "--include-raw-journal", "--keep", "2")
	if r.code != 0 || b["verified"] != true || b["records"] != 5.0 || b["curated_records"] != 3.0 || b["raw_records"] != 2.0 {
		t.Fatalf("backup: %+v", r)
	}
	path := b["path"].(string)
	if !strings.HasPrefix(path, backups+string(filepath.Separator)+"memsvc-") || !strings.HasSuffix(path, "Z.cma") {
		t.Fatalf("backup path %q", path)
	}
	if entries, _ := os.ReadDir(backups); len(entries) != 1 {
		t.Fatalf("backup directory holds %v", entries)
	}

	r, v := admin(nil, "archive", "verify", path)
	if r.code != 0 || v["ok"] != true || v["format"] != "plaintext" || v["records"] != 5.0 || v["checksum"] != b["checksum"] || v["size_bytes"] != b["size_bytes"] {
		t.Fatalf("archive verify: %+v", r)
	}
	r, in := admin(nil, "archive", "inspect", path)
	if r.code != 0 || in["verified"] != true || strings.Contains(r.stdout, "marmalade") {
		t.Fatalf("archive inspect: %+v", r)
	}

	// The audit log of the running server: three stores, two raw entries
	// and the export, at least.
	r, a := admin(nil, "audit", "verify", "--data-dir", dirA)
	if r.code != 0 || a["ok"] != true || a["entries"].(float64) < 6 || a["path"] != filepath.Join(dirA, "audit.jsonl") {
		t.Fatalf("audit verify on a running server: %+v", r)
	}

	// Restore into a second, empty server.
	dirB := t.TempDir()
	srvB := startServer(t, dirB)
	r, rs := admin(nil, "restore", "--server-url", srvB.url(""), path)
	if r.code != 0 || rs["records_imported"] != 5.0 || rs["checksum"] != b["checksum"] {
		t.Fatalf("restore: %+v", r)
	}
	statsOf := func(env []string) memory.Stats {
		t.Helper()
		var s memory.Stats
		if err := json.Unmarshal([]byte(memsvc(env, "stats", "--json").stdout), &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	envB := []string{"MEMSVC_SERVER_URL=" + srvB.url("")}
	sa, sb := statsOf(clientEnv), statsOf(envB)
	if sa.TotalRecords != 3 || sb.TotalRecords != sa.TotalRecords || sb.RawJournalRecords != sa.RawJournalRecords ||
		sb.RecordsByStore[memory.StoreSemantic] != 1 || sb.RecordsByStore[memory.StoreProcedural] != 1 {
		t.Fatalf("stats after restore:\n A %+v\n B %+v", sa, sb)
	}
	if r := memsvc(envB, "recall", "release train", "--mode", "perfect"); !strings.Contains(r.stdout, "the release train leaves on Thursdays") {
		t.Fatalf("restored record not found: %+v", r)
	}

	// Replace needs --yes when there is no terminal to ask.
	r, _ = admin(nil, "restore", "--server-url", srvB.url(""), path, "--strategy", "replace")
	if r.code != 2 || !strings.Contains(r.stderr, "--yes") {
		t.Fatalf("replace without --yes: %+v", r)
	}

	for _, s := range []*server{srvA, srvB} {
		if err := s.stop(syscall.SIGTERM); err != nil {
			t.Fatalf("server exit: %v\n%s", err, s.log())
		}
	}
	// The restore is in B's audit log.
	if r, a := admin(nil, "audit", "verify", "--path", filepath.Join(dirB, "audit.jsonl")); r.code != 0 || a["entries"].(float64) < 1 {
		t.Fatalf("audit verify of the restored server: %+v", r)
	}
}

// TestAdminBackupUnit runs the command line of
// deploy-docs/memsvc-backup.service (server URL and directory swapped for
// test ones) and checks the hardening and that the timer fires daily and
// catches up.
func TestAdminBackupUnit(t *testing.T) {
	unit, args := unitExecStart(t, "../deploy-docs/memsvc-backup.service", "/usr/local/bin/memsvc-admin")
	for _, want := range []string{"Type=oneshot", "DynamicUser=yes", "StateDirectory=memsvc-backups", "ProtectSystem=strict", "NoNewPrivileges=yes", "EnvironmentFile=-/etc/memsvc/backup.env"} {
		if !strings.Contains(unit, "\n"+want+"\n") {
			t.Errorf("unit lacks %s", want)
		}
	}
	timer, err := os.ReadFile("../deploy-docs/memsvc-backup.timer")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"OnCalendar=*-*-* 02:30:00", "Persistent=true", "WantedBy=timers.target"} {
		if !strings.Contains(string(timer), "\n"+want+"\n") {
			t.Errorf("timer lacks %s", want)
		}
	}

	srv := startServer(t, t.TempDir())
	storeNote(t, srv, "backed up by the unit")
	dir := t.TempDir()
	for i := range args {
		switch args[i] {
		case "http://127.0.0.1:8420":
			args[i] = srv.url("")
		case "/var/lib/memsvc-backups":
			args[i] = dir
		}
	}
	if strings.Join(args, " ") != "backup --server-url "+srv.url("")+" --dir "+dir+" --keep 7 --include-raw-journal" {
		t.Fatalf("unit runs %q", args)
	}
	r := runBin(t, 60*time.Second, nil, "memsvc-admin", args...)
	var out struct {
		Path    string `json:"path"`
		Records int    `json:"records"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); r.code != 0 || err != nil || out.Records != 1 {
		t.Fatalf("unit command: %v %+v", err, r)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || filepath.Join(dir, entries[0].Name()) != out.Path {
		t.Fatalf("backup directory: %v %v", entries, err)
	}
}
