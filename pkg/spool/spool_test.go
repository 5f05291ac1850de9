package spool

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testproc"
)

func unixOnly(t *testing.T) {
	t.Helper()
	if !privateModeSupported {
		t.Skip("permission bits are not meaningful on " + runtime.GOOS)
	}
}

func open(t *testing.T, path string) *Dir {
	t.Helper()
	d, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// write writes recs to d as one batch and returns the file's name.
func write(t *testing.T, d *Dir, recs [][]byte) string {
	t.Helper()
	name, err := d.Write(recs)
	if err != nil {
		t.Fatal(err)
	}
	return name
}

// pendingIn lists the pending files of d.
func pendingIn(t *testing.T, d *Dir) []string {
	t.Helper()
	pending, err := d.Pending()
	if err != nil {
		t.Fatal(err)
	}
	return pending
}

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestOpenChecksExistingDirectory(t *testing.T) {
	unixOnly(t)
	cases := []struct {
		name  string
		setup func(t *testing.T, path string)
		want  error // nil: accepted
		msg   string
	}{
		{"private 0700", func(t *testing.T, p string) { mkdir(t, p, 0o700) }, nil, ""},
		{"group readable 0750", func(t *testing.T, p string) { mkdir(t, p, 0o750) }, ErrNotPrivate, "chmod 700"},
		{"world readable 0755", func(t *testing.T, p string) { mkdir(t, p, 0o755) }, ErrNotPrivate, "mode 0755"},
		{"other search only 0701", func(t *testing.T, p string) { mkdir(t, p, 0o701) }, ErrNotPrivate, "0701"},
		{"group write only 0720", func(t *testing.T, p string) { mkdir(t, p, 0o720) }, ErrNotPrivate, "0720"},
		{"symlink to a private directory", func(t *testing.T, p string) {
			target := p + "-target"
			mkdir(t, target, 0o700)
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
		}, ErrSymlink, "not a symlink"},
		{"dangling symlink", func(t *testing.T, p string) {
			if err := os.Symlink(p+"-missing", p); err != nil {
				t.Fatal(err)
			}
		}, ErrSymlink, "symlink"},
		{"regular file", func(t *testing.T, p string) {
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, errAny, "not a directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "spool")
			tc.setup(t, path)
			before, _ := os.Lstat(path)
			_, err := Open(path, Options{})
			switch {
			case tc.want == nil && err != nil:
				t.Fatalf("Open: %v", err)
			case tc.want != nil && err == nil:
				t.Fatal("Open accepted the directory")
			case tc.want != nil && tc.want != errAny && !errors.Is(err, tc.want):
				t.Fatalf("Open: %v, want %v", err, tc.want)
			case tc.want != nil && !strings.Contains(err.Error(), tc.msg):
				t.Fatalf("Open: %q does not mention %q", err, tc.msg)
			}
			after, _ := os.Lstat(path)
			if before.Mode() != after.Mode() {
				t.Fatalf("Open changed the mode from %v to %v", before.Mode(), after.Mode())
			}
		})
	}
}

// errAny in a table accepts any error.
var errAny = errors.New("any error")

func mkdir(t *testing.T, path string, perm fs.FileMode) {
	t.Helper()
	if err := os.Mkdir(path, perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil { // past the umask
		t.Fatal(err)
	}
}

// TestWriteRechecks: a directory opened private and later opened up is
// refused at the next write.
func TestWriteRechecks(t *testing.T) {
	unixOnly(t)
	path := filepath.Join(t.TempDir(), "spool")
	d := open(t, path)
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Write([][]byte{[]byte(`{}`)}); !errors.Is(err, ErrNotPrivate) {
		t.Fatalf("write into a directory made public: %v", err)
	}
}

func TestWriteListReadRoundTrip(t *testing.T) {
	clock := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	d, err := Open(spoolPath(t), Options{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	batches := [][][]byte{
		{[]byte(`{"n":1}`), []byte("{\n  \"n\": 2\n}")},
		{[]byte(`  {"text":"line\nbreak","u":"é"}  `)},
		{[]byte(`{"n":4}`)},
	}
	var names []string
	for _, b := range batches {
		name := write(t, d, b)
		if !IsBatchName(name) || !strings.HasPrefix(name, "batch-1793534400000-") {
			t.Fatalf("batch name %q", name)
		}
		names = append(names, name)
	}
	pending := pendingIn(t, d)
	if !slices.Equal(pending, names) {
		t.Fatalf("pending %v, want %v (write order, same millisecond)", pending, names)
	}
	want := [][]string{{`{"n":1}`, `{"n":2}`}, {`{"text":"line\nbreak","u":"é"}`}, {`{"n":4}`}}
	for i, name := range names {
		if privateModeSupported {
			if m := mode(t, filepath.Join(d.Path(), name)); m != 0o600 {
				t.Errorf("%s mode %04o, want 0600", name, m)
			}
		}
		recs, err := d.Read(name)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range recs {
			got = append(got, string(r))
		}
		if !slices.Equal(got, want[i]) {
			t.Errorf("batch %d: %q, want %q", i, got, want[i])
		}
	}
}

// constReader reads as an endless run of one byte.
type constReader byte

func (c constReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(c)
	}
	return len(p), nil
}

// TestWriteOrderAcrossProcesses: batches written one after the other by
// different processes (here two Dirs on one directory) are pending in write
// order, even within one millisecond, when the later writer's random bits
// are smaller, and when its clock is behind.
func TestWriteOrderAcrossProcesses(t *testing.T) {
	path := spoolPath(t)
	ms := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	a, err := Open(path, Options{Now: func() time.Time { return ms }, Rand: constReader(0xff)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(path, Options{Now: func() time.Time { return ms }, Rand: constReader(0x00)})
	if err != nil {
		t.Fatal(err)
	}
	behind, err := Open(path, Options{Now: func() time.Time { return ms.Add(-time.Hour) }, Rand: constReader(0x00)})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i, d := range []*Dir{a, b, a, behind, b} {
		name := write(t, d, [][]byte{[]byte(fmt.Sprintf(`{"n":%d}`, i))})
		names = append(names, name)
	}
	pending := pendingIn(t, a)
	if !slices.Equal(pending, names) {
		t.Fatalf("pending\n%v\nwant the write order\n%v", pending, names)
	}
}

func TestWriteRefusesNonObjects(t *testing.T) {
	d := open(t, spoolPath(t))
	for _, recs := range [][][]byte{nil, {[]byte(`[1]`)}, {[]byte(`{"a":`)}, {[]byte(`{} {}`)}, {[]byte(``)}, {[]byte("{\"a\":\"\xff\"}")}} {
		if name, err := d.Write(recs); err == nil {
			t.Errorf("Write(%q) = %s, want an error", recs, name)
		}
	}
	if p, _ := d.Pending(); len(p) != 0 {
		t.Fatalf("refused writes left files: %v", p)
	}
}

// TestPendingIgnoresEverythingElse: only batch-<millis>-<uuid>.jsonl regular
// files are pending.
func TestPendingIgnoresEverythingElse(t *testing.T) {
	d := open(t, spoolPath(t))
	good := write(t, d, [][]byte{[]byte(`{}`)})
	others := []string{
		good + ".tmp",
		good + ".rewrite-0190b6a47c1e7a559f1a5f2b3c4d5e6f.tmp",
		good + ".bad-0190b6a47c1e7a559f1a5f2b3c4d5e6f",
		"notes.jsonl",
		"batch-.jsonl",
		"batch-123-abc.jsonl",
		"batch-1793534400000-0190b6a47c1e7a559f1a5f2b3c4d5e6F.jsonl",
		"batch-1793534400000-0190b6a47c1e7a559f1a5f2b3c4d5e6f.json",
		"xbatch-1793534400000-0190b6a47c1e7a559f1a5f2b3c4d5e6f.jsonl",
		"recent-events",
	}
	for _, name := range others {
		if err := os.WriteFile(filepath.Join(d.Path(), name), []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(d.Path(), "batch-1793534400001-0190b6a47c1e7a559f1a5f2b3c4d5e6f.jsonl"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(d.Path(), good), filepath.Join(d.Path(), "batch-1793534400002-0190b6a47c1e7a559f1a5f2b3c4d5e6f.jsonl")); err != nil {
		t.Fatal(err)
	}
	pending := pendingIn(t, d)
	if !slices.Equal(pending, []string{good}) {
		t.Fatalf("pending %v, want only %s", pending, good)
	}
	bad, err := d.Quarantined()
	if err != nil || len(bad) != 1 || bad[0] != good+".bad-0190b6a47c1e7a559f1a5f2b3c4d5e6f" {
		t.Fatalf("quarantined %v %v", bad, err)
	}
}

func TestRewriteAndRemove(t *testing.T) {
	d := open(t, spoolPath(t))
	name := write(t, d, [][]byte{[]byte(`{"n":1}`), []byte(`{"n":2}`), []byte(`{"n":3}`)})
	if err := d.Rewrite(name, [][]byte{[]byte(`{"n":3}`)}); err != nil {
		t.Fatal(err)
	}
	recs, err := d.Read(name)
	if err != nil || len(recs) != 1 || string(recs[0]) != `{"n":3}` {
		t.Fatalf("after rewrite: %q %v", recs, err)
	}
	if err := d.Rewrite(name, nil); err != nil {
		t.Fatal(err)
	}
	if p, _ := d.Pending(); len(p) != 0 {
		t.Fatalf("empty rewrite left %v", p)
	}
	if err := d.Remove(name); err != nil {
		t.Fatalf("removing a removed file: %v", err)
	}
	entries, _ := os.ReadDir(d.Path())
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}
	for _, bad := range []string{"../x", "a/b", "", ".."} {
		if err := d.Remove(bad); err == nil {
			t.Errorf("Remove(%q) accepted", bad)
		}
	}
}

func TestQuarantine(t *testing.T) {
	d := open(t, spoolPath(t))
	name := write(t, d, [][]byte{[]byte(`{}`)})
	bad, err := d.Quarantine(name)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(bad, name+".bad-") {
		t.Fatalf("quarantined as %q", bad)
	}
	if p, _ := d.Pending(); len(p) != 0 {
		t.Fatalf("quarantined file still pending: %v", p)
	}
	if q, _ := d.Quarantined(); !slices.Equal(q, []string{bad}) {
		t.Fatalf("quarantined list %v", q)
	}
	if _, err := os.Stat(filepath.Join(d.Path(), bad)); err != nil {
		t.Fatalf("quarantined file is gone: %v", err)
	}
}

// TestCrashBeforeRename: a write that dies between writing the temp file
// and renaming it leaves nothing pending, and the leftover is cleaned up
// once it is stale.
func TestCrashBeforeRename(t *testing.T) {
	now := time.Now()
	dir := spoolPath(t)
	crash := errors.New("crash")
	d, err := Open(dir, Options{Now: func() time.Time { return now }, beforeRename: func(string) error { return crash }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Write([][]byte{[]byte(`{"n":1}`)}); !errors.Is(err, crash) {
		t.Fatalf("write: %v", err)
	}
	// A half-written temp file, as a crash in the middle of Write leaves.
	half := filepath.Join(dir, "batch-1793534400000-0190b6a47c1e7a559f1a5f2b3c4d5e6f.jsonl.tmp")
	if err := os.WriteFile(half, []byte(`{"n":2}`+"\n"+`{"n":`), 0o600); err != nil {
		t.Fatal(err)
	}
	temps := func() int {
		n := 0
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".tmp") {
				n++
			}
		}
		return n
	}
	if got := temps(); got != 2 {
		t.Fatalf("%d temp files, want 2", got)
	}
	if p, _ := d.Pending(); len(p) != 0 {
		t.Fatalf("a temp file is pending: %v", p)
	}
	// Young temp files may belong to a live writer: kept.
	if _, err := Open(dir, Options{Now: func() time.Time { return now }}); err != nil {
		t.Fatal(err)
	}
	if got := temps(); got != 2 {
		t.Fatalf("young temp files removed: %d left", got)
	}
	if _, err := Open(dir, Options{Now: func() time.Time { return now.Add(2 * time.Hour) }}); err != nil {
		t.Fatal(err)
	}
	if got := temps(); got != 0 {
		t.Fatalf("%d stale temp files left", got)
	}
}

// TestCrashKill runs a writer in a child process, kills it with SIGKILL in
// the middle of its writes and checks that every acknowledged batch is
// there and complete, and that nothing pending is partial.
func TestCrashKill(t *testing.T) {
	if os.Getenv("SPOOL_CRASH_CHILD") != "" {
		return // only the child variant below runs in the child
	}
	unixOnly(t)
	dir := spoolPath(t)
	cmd := testproc.Command(t.Context(), "TestCrashChild", "SPOOL_CRASH_CHILD="+dir)
	out := testproc.Start(t, cmd)
	acked := map[string]string{}
	sc := bufio.NewScanner(out)
	for len(acked) < 200 && sc.Scan() {
		name, n, ok := strings.Cut(sc.Text(), " ")
		if ok && IsBatchName(name) {
			acked[name] = n
		}
	}
	if len(acked) < 200 {
		t.Fatalf("child acknowledged only %d writes: %v", len(acked), sc.Err())
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = cmd.Wait()

	d := open(t, dir)
	pending := pendingIn(t, d)
	for _, name := range pending {
		recs, err := d.Read(name)
		if err != nil {
			t.Fatalf("pending file %s after kill: %v", name, err)
		}
		if len(recs) != 3 {
			t.Fatalf("pending file %s has %d records, want 3", name, len(recs))
		}
	}
	for name, n := range acked {
		recs, err := d.Read(name)
		if err != nil {
			t.Fatalf("acknowledged batch %s lost: %v", name, err)
		}
		if want := fmt.Sprintf(`{"n":%s,"i":2}`, n); string(recs[2]) != want {
			t.Fatalf("acknowledged batch %s: %s, want %s", name, recs[2], want)
		}
	}
}

// TestCrashChild is the writer of TestCrashKill; it does nothing unless
// started by it.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv("SPOOL_CRASH_CHILD")
	if dir == "" {
		return
	}
	d, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 4096)
	for n := 0; ; n++ {
		recs := [][]byte{
			[]byte(fmt.Sprintf(`{"n":%d,"i":0,"pad":%q}`, n, pad)),
			[]byte(fmt.Sprintf(`{"n":%d,"i":1,"pad":%q}`, n, pad)),
			[]byte(fmt.Sprintf(`{"n":%d,"i":2}`, n)),
		}
		name := write(t, d, recs)
		fmt.Printf("%s %d\n", name, n)
	}
}

func TestProbeAndState(t *testing.T) {
	d := open(t, spoolPath(t))
	if err := d.Probe(); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(d.Path())
	if len(entries) != 0 {
		t.Fatalf("probe left %d entries", len(entries))
	}
	if data, err := d.ReadState("recent-events"); err != nil || data != nil {
		t.Fatalf("missing state: %q %v", data, err)
	}
	if err := d.WriteState("recent-events", []byte("v1\n")); err != nil {
		t.Fatal(err)
	}
	if data, err := d.ReadState("recent-events"); err != nil || string(data) != "v1\n" {
		t.Fatalf("state: %q %v", data, err)
	}
	// A cache replaces the file the same way, whole, with no temp left.
	if err := d.WriteCache("recent-events", []byte("v2\n")); err != nil {
		t.Fatal(err)
	}
	if data, err := d.ReadState("recent-events"); err != nil || string(data) != "v2\n" {
		t.Fatalf("cache: %q %v", data, err)
	}
	if entries, _ := os.ReadDir(d.Path()); len(entries) != 1 {
		t.Fatalf("after two writes the directory holds %d entries, want the state file only", len(entries))
	}
	for _, write := range []func(string, []byte) error{d.WriteState, d.WriteCache} {
		if err := write("batch-1793534400000-0190b6a47c1e7a559f1a5f2b3c4d5e6f.jsonl", nil); err == nil {
			t.Fatal("a state file may not look like a batch")
		}
	}
	if p, _ := d.Pending(); len(p) != 0 {
		t.Fatalf("state files are pending: %v", p)
	}
}

func TestLock(t *testing.T) {
	d := open(t, spoolPath(t))
	unlock, err := d.TryLock("flush")
	if err != nil {
		t.Fatal(err)
	}
	if flockSupported() {
		if _, err := d.TryLock("flush"); !errors.Is(err, ErrLocked) {
			t.Fatalf("second TryLock: %v, want ErrLocked", err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := d.Lock(ctx, "flush"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Lock with a held lock and a done context: %v", err)
		}
	}
	other, err := d.TryLock("recent-events")
	if err != nil {
		t.Fatalf("an unrelated lock: %v", err)
	}
	other()
	unlock()
	unlock2, err := d.Lock(t.Context(), "flush")
	if err != nil {
		t.Fatalf("Lock after unlock: %v", err)
	}
	unlock2()
}

func flockSupported() bool { return privateModeSupported }

// spoolPath is a not yet existing spool directory in a fresh temp dir (the
// temp dir itself is 0755, which Open would refuse).
func spoolPath(t *testing.T) string {
	return filepath.Join(t.TempDir(), "spool")
}
