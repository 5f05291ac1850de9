package backup

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/archive"
	"memsvc.dev/memsvc/pkg/memory"
)

// backupRE is the file name of the package comment; the time must also
// exist on the calendar.
var backupRE = regexp.MustCompile(`^memsvc-[0-9]{8}T[0-9]{6}Z\.cma(\.part)?$`)

// modelName reports whether name is a complete backup (ext "") or a
// partial one (ext ".part") by the package comment.
func modelName(name, ext string) bool {
	m := backupRE.FindStringSubmatch(name)
	if m == nil || m[1] != ext {
		return false
	}
	stamp := strings.TrimSuffix(strings.TrimPrefix(name, prefix), suffix+ext)
	_, err := time.Parse(stampForm, stamp)
	return err == nil
}

// FuzzCreate runs a backup into a directory holding arbitrary entries (a
// line of listing each: a file, or with a "d:" prefix a directory, with
// "l:" a symlink), with an arbitrary export: its bytes, the server's report
// of it (archive id, checksum, size, record count) and whether the export
// call failed after writing. Create succeeds exactly when the bytes are an
// archive that verifies and matches the report and the name is free; a
// success leaves the exported bytes under the new name and keeps it; a
// failure leaves no new file. Either way only leftover .part files are
// deleted beforehand, rotation (after a success only) keeps the newest
// Keep complete backups, and nothing not named like a backup is touched.
func FuzzCreate(f *testing.F) {
	data, sum := archiveBytes(f, 2, "")
	newName := Name(t0)
	f.Add(data, "a1", sum.Checksum, uint64(sum.Size), uint32(2), "", uint8(0), false)
	f.Add(data, "a1", sum.Checksum, uint64(sum.Size), uint32(2), "memsvc-20261031T020000Z.cma\nmemsvc-20261030T020000Z.cma\nnotes.txt\nmemsvc-20261031T020000Z.cma.part\nd:memsvc-20200101T000000Z.cma", uint8(1), false)
	f.Add(data, "a1", sum.Checksum, uint64(sum.Size), uint32(2), "memsvc-20991231T235959Z.cma", uint8(0), false)
	f.Add(data, "a1", sum.Checksum, uint64(sum.Size), uint32(3), "memsvc-20261131T020000Z.cma\nl:memsvc-20200102T000000Z.cma", uint8(0), false)
	f.Add(data, "a1", sum.Checksum, uint64(sum.Size), uint32(2), newName, uint8(2), false)
	f.Add(data[:len(data)/2], "a1", sum.Checksum, uint64(sum.Size), uint32(2), newName+".part", uint8(0), false)
	f.Add(data, "a1", sum.Checksum, uint64(sum.Size), uint32(2), "", uint8(0), true)
	f.Add([]byte("not an archive\n"), "", "", uint64(15), uint32(0), "x.part\nmemsvc-latest.cma", uint8(3), false)
	f.Fuzz(func(t *testing.T, data []byte, id, checksum string, size uint64, count uint32, listing string, keep uint8, fail bool) {
		if len(data) > 64<<10 || len(listing) > 2<<10 {
			return
		}
		dir := t.TempDir()
		want := fillDir(t, dir, listing)
		var before, leftovers []string // complete backups and .part files
		for name, kind := range want {
			if kind == "file" && modelName(name, "") {
				before = append(before, name)
			}
			if kind == "file" && modelName(name, partSuffix) {
				leftovers = append(leftovers, filepath.Join(dir, name))
			}
		}
		slices.Sort(leftovers)
		exp := &fakeExporter{data: data, cut: -1, resp: &memory.ExportResponse{ArchiveID: id, Checksum: checksum, SizeBytes: size, RecordCount: count}}
		if fail {
			exp.err = errors.New("connection reset (fuzz)")
		}
		n := int(keep%4) + 1
		res, err := Create(t.Context(), exp, Options{Dir: dir, Keep: n, Now: func() time.Time { return t0 }})

		sum, verr := archive.Verify(bytes.NewReader(data), archive.ReaderOptions{MaxSize: SizeLimit(int64(len(data)))})
		matches := verr == nil && !fail && sum.Checksum == checksum && int64(sum.Header.Records()) == int64(count) &&
			sum.Size == int64(len(data)) && uint64(sum.Size) == size && sum.Format == archive.FormatPlain
		// The name is free, and no directory or symlink holds its .part.
		part := want[newName+partSuffix]
		free := want[newName] == "" && (part == "" || part == "file")
		if (err == nil) != (matches && free) {
			t.Fatalf("Create: %v; the export verifies and matches: %v (%v), the name is free: %v", err, matches, verr, free)
		}
		if !slices.Equal(res.Leftovers, leftovers) {
			t.Fatalf("leftovers removed %q, want %q", res.Leftovers, leftovers)
		}
		if _, err := os.Lstat(filepath.Join(dir, newName+partSuffix)); err == nil && (part == "" || part == "file") {
			t.Fatalf("a .part file is left behind")
		}
		path := filepath.Join(dir, newName)
		if err != nil {
			if free {
				if _, err := os.Lstat(path); err == nil {
					t.Fatalf("a failed backup left %s", newName)
				}
			}
			checkBackups(t, dir, before, nil)
		} else {
			if res.Path != path || slices.Contains(res.Removed, path) {
				t.Fatalf("result %+v: the new backup was not kept", res)
			}
			if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("the backup does not hold the exported bytes: %v", err)
			}
			// Kept: the new backup and the newest n-1 of the others.
			slices.Sort(before)
			slices.Reverse(before)
			var rotated []string
			for _, name := range before[min(n-1, len(before)):] {
				rotated = append(rotated, filepath.Join(dir, name))
			}
			if !sameSet(res.Removed, rotated) {
				t.Fatalf("keep %d with %q before: removed %q, want %q", n, before, res.Removed, rotated)
			}
			checkBackups(t, dir, append(before, newName), res.Removed)
		}
		for name, kind := range want {
			if kind != "file" || !modelName(name, "") && !modelName(name, partSuffix) {
				checkEntry(t, filepath.Join(dir, name), kind)
			}
		}
	})
}

// sameSet reports whether a and b hold the same names in any order.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// checkBackups: List gives the complete backups in dir, all but removed,
// newest first.
func checkBackups(t *testing.T, dir string, all, removed []string) {
	t.Helper()
	var want []string
	for _, name := range all {
		if !slices.Contains(removed, filepath.Join(dir, name)) {
			want = append(want, filepath.Join(dir, name))
		}
	}
	slices.Sort(want)
	slices.Reverse(want)
	got, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("backups %q, want %q (removed %q)", got, want, removed)
	}
}

// fillDir creates the entries of listing in dir and returns them by name.
func fillDir(t *testing.T, dir, listing string) map[string]string {
	t.Helper()
	want := map[string]string{}
	for _, e := range strings.SplitN(listing, "\n", 16) {
		kind, name := "file", e
		if k, n, ok := strings.Cut(e, ":"); ok && (k == "d" || k == "l") {
			kind, name = map[string]string{"d": "dir", "l": "symlink"}[k], n
		}
		if name == "" || name == "." || name == ".." || len(name) > 200 || strings.ContainsAny(name, "/\x00") || want[name] != "" {
			continue
		}
		p := filepath.Join(dir, name)
		var err error
		switch kind {
		case "dir":
			err = os.Mkdir(p, 0o700)
		case "symlink":
			err = os.Symlink("elsewhere", p)
		default:
			err = os.WriteFile(p, []byte("x"), 0o600)
		}
		if err != nil {
			t.Fatalf("create %s %q: %v", kind, name, err)
		}
		want[name] = kind
	}
	return want
}

// checkEntry: the entry at path is still what fillDir made.
func checkEntry(t *testing.T, path, kind string) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatalf("%s was removed: %v", path, err)
	}
	ok := kind == "dir" && fi.IsDir() || kind == "symlink" && fi.Mode()&os.ModeSymlink != 0 || kind == "file" && fi.Mode().IsRegular()
	if !ok {
		t.Fatalf("%s is no longer a %s", path, kind)
	}
}
