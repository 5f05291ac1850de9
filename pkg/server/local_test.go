package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"memsvc.dev/memsvc/internal/audittest"
	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/config"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

func loadConfig(t *testing.T, dataDir string) *config.Config {
	t.Helper()
	cfg, err := config.Load(config.LoadOptions{Overrides: []config.Override{{Key: "data_dir", Value: dataDir, Flag: "--data-dir"}}})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// openLocal opens cfg's data directory; the caller closes it.
func openLocal(t *testing.T, cfg *config.Config, opts LocalOptions) *Local {
	t.Helper()
	l, err := OpenLocal(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestLocalCloseOrder: Close stops the engine before it closes the audit
// log and the store, so the engine's last audit entries reach the log and
// the directory is free for the next process.
func TestLocalCloseOrder(t *testing.T) {
	ctx := context.Background()
	cfg := loadConfig(t, t.TempDir())
	l := openLocal(t, cfg, LocalOptions{Create: true})
	const n = 20
	for i := range n {
		if _, err := l.Service().EncodeStore(ctx, &memory.EncodeStoreRequest{Content: memory.TextContent("note " + string(rune('a'+i)))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Read before anything reopens the directory (which would replay
	// an outbox the engine failed to empty).
	rep, err := audit.VerifyFile(cfg.AuditLogPath())
	if err != nil || rep.Entries != n {
		t.Fatalf("audit log after Close: %+v %v, want %d entries", rep, err, n)
	}
	l, err = OpenLocal(ctx, cfg, LocalOptions{})
	if err != nil {
		t.Fatalf("reopen after Close: %v", err)
	}
	s, err := l.Service().Stats(ctx)
	if err != nil || s.TotalRecords != n {
		t.Fatalf("stats after reopening: %+v %v", s, err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestOpenLocalDataDir: without Create a missing or empty directory is
// refused and left as it was; with it the database is created; a directory
// holding anything else is refused either way.
func TestOpenLocalDataDir(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	open := func(dir string, create bool) error {
		l, err := OpenLocal(ctx, loadConfig(t, dir), LocalOptions{Create: create})
		if err == nil {
			return l.Close()
		}
		return err
	}
	missing := filepath.Join(root, "typo")
	if err := open(missing, false); !errors.Is(err, ErrDataDir) || !strings.Contains(err.Error(), missing+" (from --data-dir) does not exist") {
		t.Fatalf("missing directory: %v", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused open created %s: %v", missing, err)
	}
	empty := filepath.Join(root, "empty")
	if err := os.Mkdir(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := open(empty, false); !errors.Is(err, ErrDataDir) || !strings.Contains(err.Error(), "is empty") {
		t.Fatalf("empty directory: %v", err)
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Fatalf("a refused open wrote %v", entries)
	}
	if err := open(missing, true); err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := open(missing, false); err != nil {
		t.Fatalf("reopen: %v", err)
	}

	project := filepath.Join(root, "project")
	if err := os.Mkdir(project, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"go.mod", "main.go"} {
		if err := os.WriteFile(filepath.Join(project, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, create := range []bool{false, true} {
		err := open(project, create)
		if !errors.Is(err, ErrDataDir) || !strings.Contains(err.Error(), "is not a memsvc data directory") || !strings.Contains(err.Error(), "go.mod, main.go") {
			t.Fatalf("create=%v, foreign directory: %v", create, err)
		}
	}
	if entries, _ := os.ReadDir(project); len(entries) != 2 {
		t.Fatalf("a refused open wrote into the foreign directory: %v", entries)
	}
}

// migrationEntries reads the summaries of the migration entries of the
// audit log at path.
func migrationEntries(t *testing.T, path string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, ent := range audittest.Entries(t, path) {
		if ent.Operation != audit.OpMigrateStoreEncryption {
			continue
		}
		var sum map[string]any
		if err := json.Unmarshal(ent.Summary, &sum); err != nil {
			t.Fatalf("migration entry %d: %v", ent.Sequence, err)
		}
		out = append(out, sum)
	}
	return out
}

// migrated sums summary[line].migrated over entries of the given stage.
func migrated(entries []map[string]any, stage, line string) float64 {
	var n float64
	for _, e := range entries {
		if e["stage"] == stage {
			n += e[line].(map[string]any)["migrated"].(float64)
		}
	}
	return n
}

// TestMigrationAuditedPerChunk: the migration writes one audit entry per
// committed chunk, whose counts add up to what was migrated, and one with
// the totals at the end.
func TestMigrationAuditedPerChunk(t *testing.T) {
	ctx := context.Background()
	cfg := loadConfig(t, t.TempDir())
	l := openLocal(t, cfg, LocalOptions{Create: true})
	const n = 600 // three chunks of at most 256
	batch := &memory.EncodeBatchStoreRawRequest{}
	for i := range n {
		r := memory.DefaultEncodeStoreRawRequest()
		r.SessionID, r.Content = "s", memory.TextContent(fmt.Sprint("entry ", i))
		batch.Records = append(batch.Records, r)
	}
	if _, err := l.Service().EncodeBatchRaw(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	pass := "correct horse battery staple"
	cfg.Security.StoreEncryptionPassphrase = &pass
	l = openLocal(t, cfg, LocalOptions{})
	size, err := l.MigrationSize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var seen []uint64
	rep, err := l.MigrateStoreEncryption(ctx, func(done uint64) { seen = append(seen, done) })
	if err != nil {
		t.Fatal(err)
	}
	// Progress rises chunk by chunk to the size announced before the run.
	if size != n || len(seen) < 2 || !slices.IsSorted(seen) || seen[len(seen)-1] != size {
		t.Fatalf("migration of %d values reported progress %v", size, seen)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if rep.RawJournal.Migrated != n {
		t.Fatalf("report %+v", rep.RawJournal)
	}
	entries := migrationEntries(t, cfg.AuditLogPath())
	chunks := 0
	for _, e := range entries {
		if e["stage"] == "chunk" {
			chunks++
		}
	}
	if chunks != 3 || migrated(entries, "chunk", "raw_journal") != n {
		t.Fatalf("%d chunk entries migrating %v raw entries, want 3 and %d: %v", chunks, migrated(entries, "chunk", "raw_journal"), n, entries)
	}
	if last := entries[len(entries)-1]; last["stage"] != "completed" || migrated(entries[len(entries)-1:], "completed", "raw_journal") != n {
		t.Fatalf("last entry %v", last)
	}
}

// TestLocalSearchIndexesOnDiskWithEncryption: with store encryption on,
// an embedded open keeps the search indexes on disk only sealed (no
// stored word anywhere in the data directory in plaintext), and with
// security.persist_search_indexes set to false explicitly it keeps
// nothing derived on disk at all, deleting what an earlier run kept.
func TestLocalSearchIndexesOnDiskWithEncryption(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	pass := "correct horse battery staple"
	open := func(persist *bool) *Local {
		t.Helper()
		cfg := loadConfig(t, dir)
		cfg.Security.StoreEncryptionPassphrase = &pass
		cfg.Security.PersistSearchIndexes = persist
		l, err := OpenLocal(ctx, cfg, LocalOptions{Create: true})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	closeLocal := func(l *Local) {
		t.Helper()
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	derived := func() []string { return testkit.DirNames(t, filepath.Join(dir, "derived")) }
	l := open(nil)
	if _, err := l.Service().EncodeStore(ctx, &memory.EncodeStoreRequest{Content: memory.TextContent("the Zyxquuxing lighthouse ledger")}); err != nil {
		t.Fatal(err)
	}
	closeLocal(l)
	if got := derived(); len(got) != 1 {
		t.Fatalf("derived files with encryption and the default setting: %v, want one sealed snapshot", got)
	}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(strings.ToLower(string(data)), "zyxquux") {
			t.Errorf("%s holds a stored word in plaintext", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	no := false
	l = open(&no)
	if got := derived(); len(got) != 0 {
		t.Errorf("derived files at start with persist_search_indexes = false: %v", got)
	}
	req := memory.DefaultRecallQueryRequest()
	text := "zyxquuxing"
	req.Cue.Text = &text
	resp, err := l.Service().RecallQuery(ctx, &req)
	if err != nil || len(resp.Memories) != 1 {
		t.Fatalf("recall with the indexes rebuilt: %+v, %v", resp, err)
	}
	closeLocal(l)
	if got := derived(); len(got) != 0 {
		t.Errorf("derived files after close with persist_search_indexes = false: %v", got)
	}
}

// TestOpenLocalStoreKDF: the security.store_kdf_* keys set the key
// derivation of a directory whose encryption starts, and a directory
// already encrypted keeps its own when they change.
func TestOpenLocalStoreKDF(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	pass := "kdf settings"
	cfg, err := config.Load(config.LoadOptions{
		Overrides: []config.Override{{Key: "data_dir", Value: dir, Flag: "--data-dir"}},
		Environ: []string{
			"MEMSVC_SECURITY__STORE_ENCRYPTION_PASSPHRASE=" + pass,
			"MEMSVC_SECURITY__STORE_KDF_MEMORY_MIB=20",
			"MEMSVC_SECURITY__STORE_KDF_ITERATIONS=3",
			"MEMSVC_SECURITY__STORE_KDF_PARALLELISM=2",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := store.KDFParams{MemoryKiB: 20 << 10, Iterations: 3, Parallelism: 2}
	for _, round := range []string{"create", "reopen with the defaults"} {
		l, err := OpenLocal(ctx, cfg, LocalOptions{Create: true})
		if err != nil {
			t.Fatalf("%s: %v", round, err)
		}
		got, ok := l.db.KDF()
		if cerr := l.Close(); cerr != nil {
			t.Fatal(cerr)
		}
		if !ok || got != want {
			t.Errorf("%s: header KDF %v (%v), want %v", round, got, ok, want)
		}
		cfg = loadConfig(t, dir)
		cfg.Security.StoreEncryptionPassphrase = &pass
	}
}
