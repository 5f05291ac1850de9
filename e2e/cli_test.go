package e2e

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// TestCLIRoundTrip runs the scenario through the real binary:
// store, inspect, stats, forget refused without --confirm, then forget.
func TestCLIRoundTrip(t *testing.T) {
	dir := t.TempDir()
	memsvc := func(args ...string) result {
		return runBin(t, 20*time.Second, nil, "memsvc", append([]string{"--data-dir", dir}, args...)...)
	}
	r := memsvc("store", "hello")
	m := regexp.MustCompile(`^Stored: ([0-9a-f-]{36}) `).FindStringSubmatch(r.stdout)
	if r.code != 0 || m == nil {
		t.Fatalf("store: %+v", r)
	}
	id := m[1]
	r = memsvc("inspect", id, "--json")
	var rec memory.MemoryRecord
	if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil || r.code != 0 {
		t.Fatalf("inspect stdout is not a record (%v): %+v", err, r)
	}
	if text, _ := rec.Content.Text(); text != "hello" {
		t.Fatalf("round trip gave %q", text)
	}
	r = memsvc("stats", "--json")
	var s memory.Stats
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil || s.TotalRecords != 1 {
		t.Fatalf("stats: %v %+v", err, r)
	}
	r = memsvc("forget", id)
	if r.code == 0 || !strings.Contains(r.stderr, "--confirm") {
		t.Fatalf("forget without --confirm: %+v", r)
	}
	if r = memsvc("inspect", id); r.code != 0 {
		t.Fatalf("record gone after a refused forget: %+v", r)
	}
	if r = memsvc("forget", id, "--confirm"); r.code != 0 || r.stdout != "Deleted 1 record(s)\n" {
		t.Fatalf("forget: %+v", r)
	}
	if r = memsvc("inspect", id); r.code != 1 || !strings.Contains(r.stderr, "record not found") {
		t.Fatalf("inspect after forget: %+v", r)
	}
}

// TestDataDirHeld: while another process holds the data directory, a data
// command fails within a second and says what to do.
func TestDataDirHeld(t *testing.T) {
	dir := t.TempDir()
	db, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r := runBin(t, 10*time.Second, nil, "memsvc", "--data-dir", dir, "stats")
	if r.code != 1 {
		t.Fatalf("stats on a held directory: %+v", r)
	}
	if r.took > time.Second {
		t.Errorf("failing took %v, want under a second", r.took)
	}
	for _, want := range []string{dir, "already in use by another memsvc process", "--server-url"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("message %q does not mention %q", r.stderr, want)
		}
	}
	if r.stdout != "" {
		t.Errorf("stdout not empty: %q", r.stdout)
	}
}
