package spool

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The file names of the package comment, as regular expressions: the
// reference the directory listing is checked against.
var (
	pendingRE     = regexp.MustCompile(`^batch-[0-9]{13}-[0-9a-f]{32}\.jsonl$`)
	quarantinedRE = regexp.MustCompile(`^batch-[0-9]{13}-[0-9a-f]{32}\.jsonl\.bad-[0-9a-f]{32}$`)
)

// FuzzDir fills a spool directory with arbitrary entries (a line of
// listing each: a regular file holding content, or with a "d:" prefix a
// directory, with "l:" a symlink to a batch outside) and reads it as a
// flush does. Pending lists exactly the regular files named like a
// pending batch, in order; Read of each agrees with Parse of its content;
// quarantining the malformed ones moves them from Pending to Quarantined;
// ReadState never reads outside the directory nor a batch; and nothing
// else in the directory is touched.
func FuzzDir(f *testing.F) {
	const b1 = "batch-1777346055000-0190f5d28c4e7a1b9c3d2e4f6a8b0c1d.jsonl"
	const b2 = "batch-1777346055001-0190f5d28c4e7a1b9c3d2e4f6a8b0c1e.jsonl"
	f.Add(b1+"\n"+b2+"\nrecent-events\nx.tmp", []byte("{\"a\":1}\n"))
	f.Add(b1+"\nd:"+b2+"\nl:"+b1[:len(b1)-1]+"x", []byte("{\"a\":1}"))
	f.Add(b1+".bad-0190f5d28c4e7a1b9c3d2e4f6a8b0c1d\n"+b1+".bad-zz90f5d28c4e7a1b9c3d2e4f6a8b0c1d\n"+b1, []byte("not json\n"))
	f.Add("batch-177734605500-0190f5d28c4e7a1b9c3d2e4f6a8b0c1dd.jsonl\nBATCH-1777346055000-0190F5D28C4E7A1B9C3D2E4F6A8B0C1D.jsonl\n../outside\n.", []byte("{}\n"))
	f.Fuzz(func(t *testing.T, listing string, content []byte) {
		if len(listing) > 4<<10 || len(content) > 64<<10 {
			return
		}
		root := t.TempDir()
		d, err := Open(filepath.Join(root, "spool"), Options{StaleTemp: -1})
		if err != nil {
			t.Fatal(err)
		}
		// Targets outside the spool directory: a batch for symlinks to
		// point at, and a file that ReadState("../outside") would read.
		outside := filepath.Join(root, "outside")
		writeT(t, outside, content)
		want := map[string]string{} // name -> kind of what was created
		for _, e := range strings.SplitN(listing, "\n", 16) {
			kind, name := "file", e
			if k, n, ok := strings.Cut(e, ":"); ok && (k == "d" || k == "l") {
				kind, name = map[string]string{"d": "dir", "l": "symlink"}[k], n
			}
			if !plainName(name) || want[name] != "" {
				continue
			}
			p := filepath.Join(d.Path(), name)
			switch kind {
			case "dir":
				err = os.Mkdir(p, 0o700)
			case "symlink":
				err = os.Symlink(outside, p)
			default:
				err = os.WriteFile(p, content, 0o600)
			}
			if err != nil {
				t.Fatalf("create %s %q: %v", kind, name, err)
			}
			want[name] = kind
		}

		var wantPending, wantBad []string
		for name, kind := range want {
			if kind == "file" && pendingRE.MatchString(name) {
				wantPending = append(wantPending, name)
			}
			if kind == "file" && quarantinedRE.MatchString(name) {
				wantBad = append(wantBad, name)
			}
		}
		slices.Sort(wantPending)
		slices.Sort(wantBad)
		pending := list(t, d.Pending)
		if !slices.Equal(pending, wantPending) {
			t.Fatalf("Pending = %q, want %q", pending, wantPending)
		}
		if bad := list(t, d.Quarantined); !slices.Equal(bad, wantBad) {
			t.Fatalf("Quarantined = %q, want %q", bad, wantBad)
		}

		for _, e := range strings.SplitN(listing, "\n", 16) {
			checkReadState(t, d, e, want[e], content)
		}

		wantRecs, perr := Parse(content)
		for _, name := range pending {
			recs, err := d.Read(name)
			if (err == nil) != (perr == nil) || !slices.EqualFunc(recs, wantRecs, bytes.Equal) {
				t.Fatalf("Read(%q) = %d records, %v; Parse gives %d, %v", name, len(recs), err, len(wantRecs), perr)
			}
			if err == nil {
				continue
			}
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("Read(%q): %v is not ErrMalformed", name, err)
			}
			bad, err := d.Quarantine(name)
			if err != nil || !quarantinedRE.MatchString(bad) || !strings.HasPrefix(bad, name) {
				t.Fatalf("Quarantine(%q) = %q, %v", name, bad, err)
			}
			wantBad = append(wantBad, bad)
		}
		if perr != nil {
			wantPending = nil
		}
		slices.Sort(wantBad)
		if p := list(t, d.Pending); !slices.Equal(p, wantPending) {
			t.Fatalf("after quarantine, Pending = %q, want %q", p, wantPending)
		}
		if bad := list(t, d.Quarantined); !slices.Equal(bad, wantBad) {
			t.Fatalf("after quarantine, Quarantined = %q, want %q", bad, wantBad)
		}
		for name, kind := range want {
			if perr != nil && slices.Contains(pending, name) {
				continue // quarantined above
			}
			checkUntouched(t, filepath.Join(d.Path(), name), kind, content)
		}
		checkUntouched(t, outside, "file", content)
	})
}

// plainName reports whether name can be created as one directory entry.
func plainName(name string) bool {
	return name != "" && name != "." && name != ".." && len(name) <= 255 && !strings.ContainsAny(name, "/\x00")
}

func writeT(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func list(t *testing.T, fn func() ([]string, error)) []string {
	t.Helper()
	names, err := fn()
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// checkReadState: ReadState(name) refuses batch names and names that are
// not a plain entry (a backslash counts as a separator), reads a regular file or a symlink's target, answers
// nil for a missing file and fails on a directory.
func checkReadState(t *testing.T, d *Dir, name, kind string, content []byte) {
	t.Helper()
	got, err := d.ReadState(name)
	switch {
	case IsBatchName(name) || !plainName(name) || strings.Contains(name, `\`):
		if err == nil {
			t.Fatalf("ReadState(%q) = %q, want an error", name, got)
		}
	case kind == "":
		if err != nil || got != nil {
			t.Fatalf("ReadState(%q) of a missing file = %q, %v", name, got, err)
		}
	case kind == "dir":
		if err == nil {
			t.Fatalf("ReadState(%q) read a directory: %q", name, got)
		}
	default:
		if err != nil || !bytes.Equal(got, content) {
			t.Fatalf("ReadState(%q) = %d bytes, %v; want %d bytes", name, len(got), err, len(content))
		}
	}
}

// checkUntouched: the entry at path is still what was created.
func checkUntouched(t *testing.T, path, kind string, content []byte) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	switch kind {
	case "dir":
		if !fi.IsDir() {
			t.Fatalf("%s is no longer a directory", path)
		}
	case "symlink":
		if fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("%s is no longer a symlink", path)
		}
	default:
		b, err := os.ReadFile(path)
		if err != nil || !fi.Mode().IsRegular() || !bytes.Equal(b, content) {
			t.Fatalf("%s changed: %v", path, err)
		}
	}
}
