package admincmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/archive"
	"memsvc.dev/memsvc/pkg/backup"
	"memsvc.dev/memsvc/pkg/engine"
	"memsvc.dev/memsvc/pkg/httpapi"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// testServer is httpapi over an engine on an in-memory store, on a
// loopback port.
type testServer struct {
	url string
	eng *engine.Engine
}

// newServer starts a server; wrap, when set, wraps the engine before
// httpapi serves it.
func newServer(t *testing.T, opts httpapi.Options, wrap func(memory.Service) memory.Service) *testServer {
	t.Helper()
	db, err := store.OpenInMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	eng, err := engine.Open(t.Context(), db, engine.Options{
		Now:          func() time.Time { return t0 },
		SimilarLinks: -1, // background linking would make the data timing-dependent
		ArchiveKDF:   archive.KDFParams{MemoryKiB: 64, Iterations: 1, Parallelism: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	var svc memory.Service = eng
	if wrap != nil {
		svc = wrap(eng)
	}
	h, err := httpapi.New(svc, opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return &testServer{url: ts.URL, eng: eng}
}

// populate stores curated records in three stores and raw entries of
// every visibility, one of them secret.
func (s *testServer) populate(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	for i, st := range []memory.StoreType{memory.StoreEpisodic, memory.StoreEpisodic, memory.StoreSemantic, memory.StoreProcedural} {
		if _, err := s.eng.EncodeStore(ctx, &memory.EncodeStoreRequest{
			Content: memory.TextContent(fmt.Sprintf("fact %d about the deploy pipeline", i)),
			Store:   &st,
		}); err != nil {
			t.Fatal(err)
		}
	}
	for i, v := range []memory.Visibility{memory.VisibilityNormal, memory.VisibilityPrivateScratch, memory.VisibilitySealed, memory.VisibilityNormal} {
		req := memory.DefaultEncodeStoreRawRequest()
		req.SessionID, req.Visibility, req.Content = "s1", v, memory.TextContent(fmt.Sprintf("turn %d", i))
		if i == 3 {
			req.SecrecyLevel = memory.SecrecySecret
		}
		if _, err := s.eng.EncodeStoreRaw(ctx, &req); err != nil {
			t.Fatal(err)
		}
	}
}

func (s *testServer) stats(t *testing.T) *memory.Stats {
	t.Helper()
	st, err := s.eng.Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// exportAll returns the engine's full archive (everything included).
func (s *testServer) exportAll(t *testing.T) ([]byte, *memory.ExportResponse) {
	t.Helper()
	var buf bytes.Buffer
	resp, err := s.eng.Export(t.Context(), &memory.ExportRequest{Format: "cma", IncludeRawJournal: true, IncludeSealed: true, IncludeSecret: true}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), resp
}

func TestBackup(t *testing.T) {
	srv := newServer(t, httpapi.Options{}, nil)
	srv.populate(t)
	dir := filepath.Join(t.TempDir(), "backups")
	c := &clock{t: t0, step: time.Second}
	r := invocation{clock: c}.run(t, "backup", "--server-url", srv.url, "--dir", dir)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	m := decode(t, r)
	path, _ := m["path"].(string)
	if filepath.Dir(path) != dir || !strings.HasPrefix(filepath.Base(path), "memsvc-20261101T0200") || !strings.HasSuffix(path, "Z.cma") {
		t.Fatalf("path %q", path)
	}
	// Everything by default: 4 curated, and all 4 raw entries, the sealed
	// and the secret one included.
	if num(t, m, "records") != 8 || num(t, m, "curated_records") != 4 || num(t, m, "raw_records") != 4 || m["format"] != "plaintext" || m["verified"] != true {
		t.Errorf("report %v", m)
	}
	if fmt.Sprint(m["kept"]) != "["+path+"]" || fmt.Sprint(m["removed"]) != "[]" || fmt.Sprint(m["leftovers_removed"]) != "[]" {
		t.Errorf("rotation report %v", m)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 || int64(num(t, m, "size_bytes")) != st.Size() {
		t.Fatalf("backup file: %v %v", st, err)
	}
	if !strings.Contains(r.stderr, "backup: "+path+" complete (8 records") {
		t.Errorf("stderr %q", r.stderr)
	}
	// The file verifies on its own, with the checksum the backup reported.
	v := run(t, "archive", "verify", path)
	if vm := decode(t, v); v.code != 0 || vm["checksum"] != m["checksum"] || num(t, vm, "records") != 8 {
		t.Errorf("archive verify: %d %v", v.code, vm)
	}
	// --quiet: JSON on stdout and nothing on stderr.
	r = invocation{clock: c}.run(t, "--quiet", "backup", "--server-url", srv.url, "--dir", dir)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("--quiet: exit %d, stderr %q", r.code, r.stderr)
	}
	if m := decode(t, r); num(t, m, "records") != 8 {
		t.Errorf("--quiet report %v", m)
	}
	// The filters narrow it when asked.
	for _, tc := range []struct {
		flags   []string
		curated int
		raw     int
	}{
		{[]string{"--include-raw-journal=false"}, 4, 0},
		{[]string{"--include-secret=false"}, 4, 3},
		{[]string{"--include-sealed=false", "--include-secret=false"}, 4, 2},
	} {
		r := invocation{clock: c}.run(t, append([]string{"--quiet", "backup", "--server-url", srv.url, "--dir", dir}, tc.flags...)...)
		if m := decode(t, r); r.code != 0 || num(t, m, "curated_records") != tc.curated || num(t, m, "raw_records") != tc.raw {
			t.Errorf("%v: exit %d, report %v", tc.flags, r.code, m)
		}
	}
}

// TestBackupNamespaces: --namespaces narrows the backup to the named
// namespaces; a blank or bad list is a usage error (exit 2) that names
// the flag, and nothing is backed up.
func TestBackupNamespaces(t *testing.T) {
	srv := newServer(t, httpapi.Options{}, nil)
	srv.populate(t)
	dir := filepath.Join(t.TempDir(), "backups")
	r := run(t, "--quiet", "backup", "--server-url", srv.url, "--dir", dir, "--namespaces", " default ")
	if m := decode(t, r); r.code != 0 || num(t, m, "records") != 8 {
		t.Fatalf("--namespaces default: exit %d, report %v\n%s", r.code, m, r.stderr)
	}
	kept := testkit.DirNames(t, dir)
	for _, bad := range []string{"", " , ", "default,*", "Default", "default,,other"} {
		r := run(t, "--quiet", "backup", "--server-url", srv.url, "--dir", dir, "--namespaces", bad)
		if r.code != 2 || !strings.Contains(r.stderr, "--namespaces") {
			t.Errorf("--namespaces %q: exit %d, stderr %q", bad, r.code, r.stderr)
		}
		if got := testkit.DirNames(t, dir); !slices.Equal(got, kept) {
			t.Errorf("--namespaces %q changed the backups: %v, was %v", bad, got, kept)
		}
	}
}

// TestBackupProgress: on a terminal a backup draws a progress line with
// the bytes written and the rate on stderr; without a terminal, or with
// --quiet, there is none.
func TestBackupProgress(t *testing.T) {
	srv := newServer(t, httpapi.Options{}, nil)
	srv.populate(t)
	r := invocation{clock: &clock{t: t0, step: time.Hour}, terminal: true}.run(t, "backup", "--server-url", srv.url, "--dir", t.TempDir())
	if r.code != 0 || !regexp.MustCompile(`\rbackup [0-9.]+ (B|KiB) [0-9.]+ B/s \d+h0m0s *\n`).MatchString(r.stderr) {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	for _, in := range []invocation{{clock: &clock{t: t0, step: time.Hour}}, {clock: &clock{t: t0, step: time.Hour}, terminal: true}} {
		args := []string{"backup", "--server-url", srv.url, "--dir", t.TempDir()}
		if in.terminal {
			args = append([]string{"--quiet"}, args...)
		}
		if r := in.run(t, args...); r.code != 0 || strings.Contains(r.stderr, "\r") || strings.Contains(r.stderr, "B/s") {
			t.Fatalf("terminal=%v %q: exit %d, stderr %q", in.terminal, args, r.code, r.stderr)
		}
	}
}

func TestBackupRotation(t *testing.T) {
	srv := newServer(t, httpapi.Options{}, nil)
	srv.populate(t)
	dir := t.TempDir()
	unrelated := []string{"README", "memsvc-manual.cma", "memsvc-20200101T000000Z.cma.old"}
	for _, n := range unrelated {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("keep me"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c := &clock{t: t0, step: time.Minute}
	var made []string
	for i := range 5 {
		r := invocation{clock: c}.run(t, "--quiet", "backup", "--server-url", srv.url, "--dir", dir, "--keep", "3")
		if r.code != 0 {
			t.Fatalf("run %d: exit %d\n%s", i, r.code, r.stderr)
		}
		m := decode(t, r)
		made = append(made, m["path"].(string))
		removed := fmt.Sprint(m["removed"])
		if i < 3 && removed != "[]" || i >= 3 && removed != "["+made[i-3]+"]" {
			t.Errorf("run %d removed %s", i, removed)
		}
	}
	kept, err := backup.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{made[4], made[3], made[2]}; !slices.Equal(kept, want) {
		t.Errorf("kept %q, want %q", kept, want)
	}
	for _, n := range unrelated {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("rotation touched %s: %v", n, err)
		}
	}
}

// cutExport makes the server fail in the middle of an export: the archive
// stream breaks after a few bytes have gone out.
type cutExport struct {
	memory.Service
	after int
}

func (c cutExport) Export(ctx context.Context, req *memory.ExportRequest, w io.Writer) (*memory.ExportResponse, error) {
	return c.Service.Export(ctx, req, &cutWriter{w: w, left: c.after})
}

type cutWriter struct {
	w    io.Writer
	left int
}

func (c *cutWriter) Write(p []byte) (int, error) {
	if len(p) <= c.left {
		c.left -= len(p)
		return c.w.Write(p)
	}
	n, err := c.w.Write(p[:c.left])
	c.left -= n
	if err != nil {
		return n, err
	}
	return n, errors.New("device lost")
}

func TestBackupServerFailure(t *testing.T) {
	good := newServer(t, httpapi.Options{}, nil)
	good.populate(t)
	dir := t.TempDir()
	c := &clock{t: t0, step: time.Minute}
	r := invocation{clock: c}.run(t, "backup", "--server-url", good.url, "--dir", dir, "--keep", "1")
	if r.code != 0 {
		t.Fatalf("first backup: %d\n%s", r.code, r.stderr)
	}
	first := decode(t, r)["path"].(string)

	// Past the HTTP server's buffer, so the client has received part of
	// the archive when the stream breaks.
	broken := newServer(t, httpapi.Options{}, func(s memory.Service) memory.Service { return cutExport{Service: s, after: 20000} })
	for i := range 100 {
		if _, err := broken.eng.EncodeStore(t.Context(), &memory.EncodeStoreRequest{Content: memory.TextContent(fmt.Sprintf("filler memory %d with some words in it", i))}); err != nil {
			t.Fatal(err)
		}
	}
	refused := newServer(t, httpapi.Options{AuthEnabled: true, APIKeys: []string{"the-key"}}, nil)
	for _, tc := range []struct {
		name string
		url  string
		msg  string
	}{
		{"stream cut mid-export", broken.url, "export stream cut after"},
		{"server down", "http://127.0.0.1:1", "unreachable"},
		{"unauthorized", refused.url, "Authorization"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := invocation{clock: c}.run(t, "backup", "--server-url", tc.url, "--dir", dir, "--keep", "1")
			if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "Error: backup: export: ") || !strings.Contains(r.stderr, tc.msg) {
				t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
			}
			// Only the earlier backup: no new .cma, no .part, nothing
			// rotated away.
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 1 || entries[0].Name() != filepath.Base(first) {
				t.Errorf("directory after the failure: %v", entries)
			}
		})
	}
	// The key comes from the environment.
	r = invocation{clock: c, env: []string{"MEMSVC_SERVER_API_KEY=the-key"}}.run(t, "--quiet", "backup", "--server-url", refused.url, "--dir", dir, "--keep", "1")
	if r.code != 0 {
		t.Fatalf("with MEMSVC_SERVER_API_KEY: exit %d\n%s", r.code, r.stderr)
	}
	// ... and so may the URL.
	r = invocation{clock: c, env: []string{"MEMSVC_SERVER_URL=" + good.url}}.run(t, "--quiet", "backup", "--dir", dir, "--keep", "1")
	if r.code != 0 {
		t.Fatalf("with MEMSVC_SERVER_URL: exit %d\n%s", r.code, r.stderr)
	}
}

// TestBackupLeftoverPart: the .part of a run that was killed is removed
// by the next run.
func TestBackupLeftoverPart(t *testing.T) {
	srv := newServer(t, httpapi.Options{}, nil)
	dir := t.TempDir()
	part := filepath.Join(dir, backup.Name(t0.Add(-24*time.Hour))+".part")
	if err := os.WriteFile(part, []byte(`{"version":"1.0"`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := run(t, "backup", "--server-url", srv.url, "--dir", dir)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if m := decode(t, r); fmt.Sprint(m["leftovers_removed"]) != "["+part+"]" {
		t.Errorf("report %v", m)
	}
	if _, err := os.Stat(part); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("leftover still there: %v", err)
	}
	if !strings.Contains(r.stderr, "interrupted backup") {
		t.Errorf("stderr %q", r.stderr)
	}
}

// TestRestoreRoundTrip: backup of one server, restore into an empty one,
// and the second holds exactly the same data, for plaintext and encrypted
// backups.
func TestRestoreRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name    string
		encrypt bool
	}{{"plaintext", false}, {"encrypted", true}} {
		t.Run(tc.name, func(t *testing.T) {
			src := newServer(t, httpapi.Options{}, nil)
			src.populate(t)
			dir := t.TempDir()
			args := []string{"--quiet", "backup", "--server-url", src.url, "--dir", dir, "--include-raw-journal", "--include-sealed", "--include-secret"}
			in := invocation{}
			if tc.encrypt {
				args = append(args, "--encrypt", "--encryption-key-stdin")
				in.stdin = fixturePass + "\n"
			}
			r := in.run(t, args...)
			if r.code != 0 {
				t.Fatalf("backup: %d\n%s", r.code, r.stderr)
			}
			bm := decode(t, r)
			path := bm["path"].(string)
			wantFormat := map[bool]string{false: "plaintext", true: "encrypted"}[tc.encrypt]
			if bm["format"] != wantFormat || num(t, bm, "records") != 8 {
				t.Fatalf("backup report %v", bm)
			}

			dst := newServer(t, httpapi.Options{}, nil)
			args = []string{"restore", "--server-url", dst.url, path}
			if tc.encrypt {
				// Without the key nothing is sent.
				if r := run(t, args...); r.code != 1 || !strings.Contains(r.stderr, "nothing restored") || !strings.Contains(r.stderr, "passphrase required") {
					t.Fatalf("restore without key: %d %q", r.code, r.stderr)
				}
				args = append(args, "--decryption-key-stdin")
			}
			r = in.run(t, args...)
			if r.code != 0 {
				t.Fatalf("restore: %d\n%s", r.code, r.stderr)
			}
			rm := decode(t, r)
			if num(t, rm, "records_imported") != 8 || num(t, rm, "records_in_archive") != 8 || rm["strategy"] != "merge" ||
				rm["conflict_resolution"] != "keep_newer" || rm["format"] != wantFormat || rm["checksum"] != bm["checksum"] || rm["server_url"] != dst.url {
				t.Errorf("restore report %v", rm)
			}
			sameData(t, src, dst)

			// Restoring again merges nothing new.
			r = in.run(t, args...)
			if m := decode(t, r); r.code != 0 || num(t, m, "records_imported") != 0 {
				t.Errorf("second restore: %d %v", r.code, m)
			}
		})
	}
}

// sameData compares two servers' statistics and full exports.
func sameData(t *testing.T, a, b *testServer) {
	t.Helper()
	sa, sb := a.stats(t), b.stats(t)
	if sa.TotalRecords != sb.TotalRecords || fmt.Sprint(sa.RecordsByStore) != fmt.Sprint(sb.RecordsByStore) ||
		sa.RawJournalRecords != sb.RawJournalRecords || sa.TotalAssociations != sb.TotalAssociations || sa.AvgFidelity != sb.AvgFidelity {
		t.Errorf("stats differ:\n%+v\n%+v", sa, sb)
	}
	da, ra := a.exportAll(t)
	db, rb := b.exportAll(t)
	if ra.Checksum != rb.Checksum || !bytes.Equal(da, db) {
		t.Errorf("records differ after the round trip (checksums %s and %s)", ra.Checksum, rb.Checksum)
	}
}

func TestRestoreReplace(t *testing.T) {
	src := newServer(t, httpapi.Options{}, nil)
	src.populate(t)
	dir := t.TempDir()
	r := run(t, "--quiet", "backup", "--server-url", src.url, "--dir", dir)
	if r.code != 0 {
		t.Fatalf("backup: %d\n%s", r.code, r.stderr)
	}
	path := decode(t, r)["path"].(string)

	dst := newServer(t, httpapi.Options{}, nil)
	st := memory.StoreEmotional
	if _, err := dst.eng.EncodeStore(t.Context(), &memory.EncodeStoreRequest{Content: memory.TextContent("only on the target"), Store: &st}); err != nil {
		t.Fatal(err)
	}
	before := dst.stats(t)

	// Not a terminal and no --yes: refused before anything is sent.
	r = run(t, "restore", "--server-url", dst.url, path, "--strategy", "replace")
	if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "pass --yes") {
		t.Fatalf("replace without --yes: exit %d\n%s", r.code, r.stderr)
	}
	if after := dst.stats(t); after.TotalRecords != before.TotalRecords {
		t.Fatalf("refused restore changed the server: %d -> %d records", before.TotalRecords, after.TotalRecords)
	}

	r = run(t, "restore", "--server-url", dst.url, path, "--strategy", "replace", "--yes")
	if r.code != 0 {
		t.Fatalf("replace --yes: exit %d\n%s", r.code, r.stderr)
	}
	if m := decode(t, r); num(t, m, "records_imported") != 8 || m["strategy"] != "replace" {
		t.Errorf("report %v", m)
	}
	after := dst.stats(t)
	if after.TotalRecords != 4 || after.RecordsByStore[memory.StoreEmotional] != 0 || after.RawJournalRecords != 4 {
		t.Errorf("after replace: %+v", after)
	}
}

// TestRestoreBrokenArchive: a damaged archive is reported and nothing
// reaches the server.
func TestRestoreBrokenArchive(t *testing.T) {
	dst := newServer(t, httpapi.Options{}, nil)
	dir := t.TempDir()
	plain := fixtureArchive(t, "")
	for _, tc := range []struct {
		name string
		data []byte
		msg  string
	}{
		{"truncated", plain[:lineEnd(t, plain, 4)], "line 5: corrupt archive: truncated"},
		{"not an archive", []byte("just text\n"), "not a CMA archive"},
	} {
		path := writeFile(t, dir, strings.ReplaceAll(tc.name, " ", "_")+".cma", tc.data)
		r := run(t, "restore", "--server-url", dst.url, path, "--strategy", "replace", "--yes")
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "Error: nothing restored: archive "+path) || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", tc.name, r.code, r.stdout, r.stderr)
		}
	}
	if s := dst.stats(t); s.TotalRecords != 0 || s.RawJournalRecords != 0 {
		t.Errorf("server changed: %+v", s)
	}
	// A good fixture, for contrast, is accepted.
	path := writeFile(t, dir, "good.cma", plain)
	if r := run(t, "restore", "--server-url", dst.url, path); r.code != 0 {
		t.Fatalf("good archive: exit %d\n%s", r.code, r.stderr)
	}
}
