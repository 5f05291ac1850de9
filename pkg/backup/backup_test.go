package backup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/archive"
	"memsvc.dev/memsvc/pkg/memory"
)

var t0 = time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)

func record(i int) *memory.MemoryRecord {
	at := t0.Add(-time.Duration(i) * time.Hour)
	return &memory.MemoryRecord{
		ID:             memory.MustParseID(fmt.Sprintf("0190f5d2-8c4e-7a1b-9c3d-%012x", i+1)),
		Store:          memory.StoreEpisodic,
		CreatedAt:      at,
		UpdatedAt:      at,
		LastAccessedAt: at,
		Content:        memory.TextContent(fmt.Sprintf("memory number %d", i)),
		Fidelity:       memory.FidelityState{Score: 1, DecayRate: 0.5, EmotionalAnchor: 1, Stability: 1, LastDecayTick: at},
		Metadata:       memory.JSON(`{}`),
		Version:        1,
		Meta:           memory.LegacyMeta(),
	}
}

// archiveBytes returns an archive of n records, encrypted with pass when
// it is not empty, and its summary.
func archiveBytes(t testing.TB, n int, pass string) ([]byte, archive.Summary) {
	t.Helper()
	var buf bytes.Buffer
	var wo archive.WriterOptions
	if pass != "" {
		wo.Encryption = &archive.EncryptOptions{Passphrase: []byte(pass), KDF: archive.KDFParams{MemoryKiB: 64, Iterations: 1, Parallelism: 1}}
	}
	w, err := archive.NewWriter(&buf, archive.Header{Version: archive.Version1, Timestamp: t0, Curated: n}, wo)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := w.WriteRecord(record(i)); err != nil {
			t.Fatal(err)
		}
	}
	sum, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), sum
}

// fakeExporter writes data (cut after cut bytes when cut >= 0), then
// answers resp and err.
type fakeExporter struct {
	data []byte
	cut  int
	resp *memory.ExportResponse
	err  error
	// cancel, when set, is called after the data was written.
	cancel func()
}

func (f *fakeExporter) Export(ctx context.Context, req *memory.ExportRequest, w io.Writer) (*memory.ExportResponse, error) {
	data := f.data
	if f.cut >= 0 && f.cut < len(data) {
		data = data[:f.cut]
	}
	if _, err := w.Write(data); err != nil {
		return nil, err
	}
	if f.cancel != nil {
		f.cancel()
	}
	return f.resp, f.err
}

func goodExporter(t *testing.T, n int, pass string) *fakeExporter {
	data, sum := archiveBytes(t, n, pass)
	return &fakeExporter{data: data, cut: -1, resp: &memory.ExportResponse{
		ArchiveID: "a1", SizeBytes: uint64(sum.Size), RecordCount: uint32(sum.Header.Records()), Checksum: sum.Checksum,
	}}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestName(t *testing.T) {
	if got := Name(time.Date(2026, 11, 1, 14, 5, 9, 999, time.FixedZone("CET", 3600))); got != "memsvc-20261101T130509Z.cma" {
		t.Fatalf("Name = %q", got)
	}
	for _, tc := range []struct {
		name string
		ext  string
		want bool
	}{
		{"memsvc-20261101T130509Z.cma", "", true},
		{"memsvc-20261101T130509Z.cma.part", partSuffix, true},
		{"memsvc-20261101T130509Z.cma.part", "", false},
		{"memsvc-20261101T130509Z.cma", partSuffix, false},
		{"memsvc-20261301T130509Z.cma", "", false}, // month 13
		{"memsvc-20261101T130509.cma", "", false},
		{"memsvc-latest.cma", "", false},
		{"other-20261101T130509Z.cma", "", false},
		{"memsvc-20261101T130509Z.cma.bak", "", false},
		{"memsvc-20261101T130509Z.CMA", "", false},
	} {
		if got := isName(tc.name, tc.ext); got != tc.want {
			t.Errorf("isName(%q, %q) = %v, want %v", tc.name, tc.ext, got, tc.want)
		}
	}
}

func TestCreate(t *testing.T) {
	for _, tc := range []struct {
		name string
		pass string
		want archive.Format
	}{
		{"plaintext", "", archive.FormatPlain},
		{"encrypted", "correct horse", archive.FormatEncrypted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "backups")
			exp := goodExporter(t, 5, tc.pass)
			req := memory.DefaultExportRequest()
			if tc.pass != "" {
				req.Encrypt, req.EncryptionKey = true, &tc.pass
			}
			var progressed int64
			res, err := Create(t.Context(), exp, Options{Dir: dir, Keep: 3, Request: req, Now: func() time.Time { return t0 }, Progress: func(n int64) { progressed = n }})
			if err != nil {
				t.Fatal(err)
			}
			want := filepath.Join(dir, "memsvc-20261101T020000Z.cma")
			if res.Path != want || res.ArchiveID != "a1" || res.Summary.Format != tc.want || res.Summary.Header.Records() != 5 || res.Summary.Checksum != exp.resp.Checksum {
				t.Fatalf("result %+v", res)
			}
			if progressed != int64(len(exp.data)) {
				t.Errorf("progress reported %d bytes, wrote %d", progressed, len(exp.data))
			}
			got, err := os.ReadFile(want)
			if err != nil || !bytes.Equal(got, exp.data) {
				t.Fatalf("backup file differs from the export (%v)", err)
			}
			for _, p := range []string{dir, want} {
				st, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				if perm := st.Mode().Perm(); perm&0o077 != 0 {
					t.Errorf("%s has mode %v, want no group or other access", p, perm)
				}
			}
			if names := dirNames(t, dir); !slices.Equal(names, []string{"memsvc-20261101T020000Z.cma"}) {
				t.Errorf("directory holds %q", names)
			}
		})
	}
}

// TestCreateFailures: whatever goes wrong, no .cma and no .part of the
// run remain, and nothing else in the directory changes.
func TestCreateFailures(t *testing.T) {
	pass := "pw"
	for _, tc := range []struct {
		name    string
		mutate  func(t *testing.T, f *fakeExporter, req *memory.ExportRequest, cancel func())
		wantErr error
		wantMsg string
	}{
		{"server error before any byte", func(t *testing.T, f *fakeExporter, _ *memory.ExportRequest, _ func()) {
			f.cut, f.resp, f.err = 0, nil, memory.ErrExportFailed
		}, memory.ErrExportFailed, "export"},
		{"stream cut mid-way", func(t *testing.T, f *fakeExporter, _ *memory.ExportRequest, _ func()) {
			f.cut, f.resp, f.err = len(f.data)/2, nil, errors.New("export stream cut after 200 bytes")
		}, nil, "stream cut"},
		{"no answer", func(t *testing.T, f *fakeExporter, _ *memory.ExportRequest, _ func()) {
			f.resp = nil
		}, nil, "no export summary"},
		{"truncated file, server claims success", func(t *testing.T, f *fakeExporter, _ *memory.ExportRequest, _ func()) {
			f.cut = len(f.data) / 2
		}, archive.ErrTruncated, "verify"},
		{"checksum differs from the server's", func(t *testing.T, f *fakeExporter, _ *memory.ExportRequest, _ func()) {
			f.resp.Checksum = "00" + f.resp.Checksum[2:]
		}, ErrMismatch, "checksum"},
		{"record count differs", func(t *testing.T, f *fakeExporter, _ *memory.ExportRequest, _ func()) {
			f.resp.RecordCount++
		}, ErrMismatch, "records"},
		{"size differs", func(t *testing.T, f *fakeExporter, _ *memory.ExportRequest, _ func()) {
			f.resp.SizeBytes--
		}, ErrMismatch, "bytes"},
		{"plaintext when encryption was asked", func(t *testing.T, f *fakeExporter, req *memory.ExportRequest, _ func()) {
			req.Encrypt, req.EncryptionKey = true, &pass
		}, ErrMismatch, "format"},
		{"cancelled", func(t *testing.T, f *fakeExporter, _ *memory.ExportRequest, cancel func()) {
			f.cancel = cancel
		}, context.Canceled, "export"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			old := filepath.Join(dir, "memsvc-20261031T020000Z.cma")
			touch(t, old)
			touch(t, filepath.Join(dir, "notes.txt"))
			before := dirNames(t, dir)
			exp := goodExporter(t, 4, "")
			req := memory.DefaultExportRequest()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			tc.mutate(t, exp, &req, cancel)
			res, err := Create(ctx, exp, Options{Dir: dir, Keep: 1, Request: req, Now: func() time.Time { return t0 }})
			if err == nil {
				t.Fatalf("Create succeeded: %+v", res)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("error %v, want %v", err, tc.wantErr)
			}
			if !bytes.Contains([]byte(err.Error()), []byte(tc.wantMsg)) {
				t.Errorf("error %q does not mention %q", err, tc.wantMsg)
			}
			if res.Path != "" || res.ArchiveID != "" {
				t.Errorf("failed run reports a backup: %+v", res)
			}
			if after := dirNames(t, dir); !slices.Equal(after, before) {
				t.Errorf("directory changed from %q to %q", before, after)
			}
		})
	}
}

func TestRotate(t *testing.T) {
	dir := t.TempDir()
	var all []string
	for i := range 10 {
		name := Name(t0.Add(time.Duration(i) * 24 * time.Hour))
		touch(t, filepath.Join(dir, name))
		all = append(all, name)
	}
	others := []string{"notes.txt", "memsvc-latest.cma", "memsvc-20200101T000000Z.cma.bak", "memsvc-20200101T000000Z.cma.gz", "x.part"}
	for _, n := range others {
		touch(t, filepath.Join(dir, n))
	}
	// A directory and a symlink named like old backups are not backups.
	if err := os.Mkdir(filepath.Join(dir, "memsvc-20200101T000000Z.cma"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("notes.txt", filepath.Join(dir, "memsvc-20200102T000000Z.cma")); err != nil {
		t.Fatal(err)
	}
	others = append(others, "memsvc-20200101T000000Z.cma", "memsvc-20200102T000000Z.cma")

	for _, tc := range []struct {
		keep        int
		wantRemoved int
	}{{12, 0}, {10, 0}, {7, 3}, {3, 4}, {1, 2}} {
		removed, err := Rotate(dir, tc.keep, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(removed) != tc.wantRemoved {
			t.Errorf("keep %d: removed %q, want %d files", tc.keep, removed, tc.wantRemoved)
		}
		kept, err := List(dir)
		if err != nil {
			t.Fatal(err)
		}
		n := min(tc.keep, len(all))
		var want []string
		for i := len(all) - 1; i >= len(all)-n; i-- {
			want = append(want, filepath.Join(dir, all[i]))
		}
		if !slices.Equal(kept, want) {
			t.Errorf("keep %d: kept %q, want %q", tc.keep, kept, want)
		}
	}
	for _, n := range others {
		if _, err := os.Lstat(filepath.Join(dir, n)); err != nil {
			t.Errorf("rotation touched %s: %v", n, err)
		}
	}
	if _, err := Rotate(dir, 0, nil); err == nil {
		t.Error("Rotate with keep 0 succeeded")
	}
}

func TestLeftoversAndCollisions(t *testing.T) {
	dir := t.TempDir()
	leftover := filepath.Join(dir, "memsvc-20261031T020000Z.cma.part")
	touch(t, leftover)
	touch(t, filepath.Join(dir, "someone-else.part"))
	res, err := Create(t.Context(), goodExporter(t, 2, ""), Options{Dir: dir, Keep: 5, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Leftovers, []string{leftover}) {
		t.Errorf("leftovers %q", res.Leftovers)
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{"memsvc-20261101T020000Z.cma", "someone-else.part"}) {
		t.Errorf("directory holds %q", names)
	}
	// The same second again: the existing backup is not replaced.
	before, _ := os.ReadFile(res.Path)
	_, err = Create(t.Context(), goodExporter(t, 3, ""), Options{Dir: dir, Keep: 5, Now: func() time.Time { return t0 }})
	if !errors.Is(err, ErrExists) {
		t.Fatalf("second backup in the same second: %v, want ErrExists", err)
	}
	if after, _ := os.ReadFile(res.Path); !bytes.Equal(before, after) {
		t.Error("existing backup changed")
	}
}

func TestLocked(t *testing.T) {
	dir := t.TempDir()
	unlock, err := lockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	part := filepath.Join(dir, "memsvc-20261031T020000Z.cma.part") // the running backup's file
	touch(t, part)
	_, err = Create(t.Context(), goodExporter(t, 1, ""), Options{Dir: dir, Keep: 1, Now: func() time.Time { return t0 }})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("Create while locked: %v, want ErrLocked", err)
	}
	if _, err := os.Stat(part); err != nil {
		t.Errorf("the running backup's .part was touched: %v", err)
	}
}

func TestCreateOptions(t *testing.T) {
	key := "k"
	for _, tc := range []struct {
		name string
		o    Options
	}{
		{"no dir", Options{Keep: 1}},
		{"keep 0", Options{Dir: t.TempDir()}},
		{"encrypt without key", Options{Dir: t.TempDir(), Keep: 1, Request: memory.ExportRequest{Encrypt: true}}},
		{"encrypt with empty key", Options{Dir: t.TempDir(), Keep: 1, Request: memory.ExportRequest{Encrypt: true, EncryptionKey: new(string)}}},
	} {
		if _, err := Create(t.Context(), goodExporter(t, 1, key), tc.o); err == nil {
			t.Errorf("%s: Create succeeded", tc.name)
		}
	}
}

// TestCreateKeepsNewBackup: a backup named after a later time (written
// while the clock ran ahead) does not make rotation delete the backup just
// made (found by FuzzCreate).
func TestCreateKeepsNewBackup(t *testing.T) {
	dir := t.TempDir()
	future := filepath.Join(dir, Name(t0.AddDate(1, 0, 0)))
	touch(t, future)
	res, err := Create(t.Context(), goodExporter(t, 1, ""), Options{Dir: dir, Keep: 1, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(res.Path); err != nil || !slices.Equal(res.Removed, []string{future}) {
		t.Fatalf("removed %q, the new backup: %v", res.Removed, err)
	}
}
