package servercmd

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/archive"
	"memsvc.dev/memsvc/pkg/memory"
)

// readArchive verifies the archive at path and returns the ids of its
// curated records by store and the ids of its raw entries.
func readArchive(t *testing.T, path string) (map[memory.StoreType][]string, []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := archive.NewReader(f, archive.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	curated := map[memory.StoreType][]string{}
	var raw []string
	for {
		ent, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ent.Record != nil {
			curated[ent.Record.Store] = append(curated[ent.Record.Store], ent.Record.ID.String())
		} else {
			raw = append(raw, ent.Raw.ID.String())
		}
	}
	for _, ids := range curated {
		slices.Sort(ids)
	}
	return curated, raw
}

// TestExportStoresFlag: `export --stores semantic,procedural` writes the
// records of exactly those stores (names are case-insensitive), and the raw
// journal only with --include-raw-journal.
func TestExportStoresFlag(t *testing.T) {
	dir := t.TempDir()
	want := map[memory.StoreType][]string{}
	for _, st := range memory.PersistentStores() {
		for _, text := range []string{"one " + st.String() + " memory", "another " + st.String() + " memory"} {
			want[st] = append(want[st], storeText(t, dir, text, "--store", st.String()))
		}
		slices.Sort(want[st])
	}
	out, errOut, code := run(t, dir, "store-raw", "a verbatim line", "--session-id", "s", "--json")
	if code != 0 {
		t.Fatalf("store-raw: %d %s", code, errOut)
	}
	var stored memory.EncodeStoreRawResponse
	if err := json.Unmarshal([]byte(out), &stored); err != nil {
		t.Fatalf("store-raw output: %v\n%s", err, out)
	}
	rawID := stored.RecordID.String()

	exportTo := func(name string, args ...string) string {
		t.Helper()
		path := filepath.Join(t.TempDir(), name)
		if _, errOut, code := run(t, dir, append([]string{"export", "--output", path}, args...)...); code != 0 {
			t.Fatalf("export %v: %d %s", args, code, errOut)
		}
		return path
	}
	check := func(path string, wantRaw []string) {
		t.Helper()
		curated, raw := readArchive(t, path)
		if len(curated) != 2 || !slices.Equal(curated[memory.StoreSemantic], want[memory.StoreSemantic]) ||
			!slices.Equal(curated[memory.StoreProcedural], want[memory.StoreProcedural]) {
			t.Errorf("%s: curated records %v, want only semantic %v and procedural %v", filepath.Base(path), curated,
				want[memory.StoreSemantic], want[memory.StoreProcedural])
		}
		if !slices.Equal(raw, wantRaw) {
			t.Errorf("%s: raw entries %v, want %v", filepath.Base(path), raw, wantRaw)
		}
	}
	check(exportTo("curated.cma", "--stores", "Semantic, PROCEDURAL"), nil)
	check(exportTo("with-raw.cma", "--stores", "semantic,procedural", "--include-raw-journal"), []string{rawID})

	// Without --stores: all four stores.
	curated, _ := readArchive(t, exportTo("all.cma"))
	for _, st := range memory.PersistentStores() {
		if !slices.Equal(curated[st], want[st]) {
			t.Errorf("full export, %s: %v, want %v", st, curated[st], want[st])
		}
	}

	_, errOut, code = run(t, dir, "export", "--output", filepath.Join(t.TempDir(), "bad.cma"), "--stores", "semantic,dreams")
	if code == 0 || !strings.Contains(errOut, "--stores") {
		t.Fatalf("unknown store name: %d %s", code, errOut)
	}
}
