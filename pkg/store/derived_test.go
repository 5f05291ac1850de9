package store

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func writeDerived(t *testing.T, db *DB, name string, data []byte) {
	t.Helper()
	err := db.WriteDerived(name, len(data), func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		t.Fatalf("WriteDerived %s: %v", name, err)
	}
}

func readDerived(db *DB, name string) ([]byte, error) {
	r, err := db.OpenDerived(name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// derivedContent is larger than two chunks so sealing spans chunk
// boundaries, and not a multiple of the chunk size.
func derivedContent() []byte {
	data := make([]byte, 2*derivedChunk+1234)
	for i := range data {
		data[i] = byte(i*7 + i/251)
	}
	return data
}

// TestDerivedRoundTrip: what is written is read back, plain and sealed,
// for empty content, content of exactly one chunk and several chunks; a
// sealed file holds none of its plaintext.
func TestDerivedRoundTrip(t *testing.T) {
	contents := [][]byte{nil, bytes.Repeat([]byte("x"), derivedChunk), derivedContent()}
	for _, mode := range []string{"plain", "sealed"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			db := openPlain(t, dir)
			if mode == "sealed" {
				closeDB(t, db)
				db = openEnc(t, dir, "derived secret")
			}
			for i, data := range contents {
				name := "file" + string(rune('a'+i))
				writeDerived(t, db, name, data)
				got, err := readDerived(db, name)
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("%s: read %d bytes (%v), wrote %d", name, len(got), err, len(data))
				}
				raw, err := os.ReadFile(filepath.Join(dir, derivedDir, name))
				if err != nil {
					t.Fatal(err)
				}
				if len(data) < 64 {
					continue
				}
				if leaks := bytes.Contains(raw, data[:64]); leaks != (mode == "plain") {
					t.Errorf("%s: plaintext on disk %v in %s mode", name, leaks, mode)
				}
			}
			names, err := db.DerivedNames()
			if err != nil || !slices.Equal(names, []string{"filea", "fileb", "filec"}) {
				t.Errorf("DerivedNames %q, %v", names, err)
			}
			if _, err := readDerived(db, "missing"); !errors.Is(err, ErrNoDerived) {
				t.Errorf("missing file: %v, want ErrNoDerived", err)
			}
			if err := db.RemoveDerived("filea"); err != nil {
				t.Fatal(err)
			}
			if _, err := readDerived(db, "filea"); !errors.Is(err, ErrNoDerived) {
				t.Errorf("removed file: %v, want ErrNoDerived", err)
			}
		})
	}
}

// TestDerivedNames: names that could leave the directory or collide with
// the temporary files are refused.
func TestDerivedNames(t *testing.T) {
	db := openPlain(t, t.TempDir())
	for _, name := range []string{"", "../x", "a/b", `a\b`, ".hidden", "x" + derivedPart} {
		if err := db.WriteDerived(name, 0, func(io.Writer) error { return nil }); err == nil {
			t.Errorf("WriteDerived accepted %q", name)
		}
	}
}

// TestDerivedSealedRefusesTampering: a sealed file that was cut short,
// changed, or copied under another name does not read back, and without
// the passphrase it is not read at all.
func TestDerivedSealedRefusesTampering(t *testing.T) {
	dir := t.TempDir()
	db := openPlain(t, dir)
	closeDB(t, db)
	db = openEnc(t, dir, "derived secret")
	data := derivedContent()
	writeDerived(t, db, "good", data)
	path := filepath.Join(dir, derivedDir, "good")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	variants := map[string][]byte{
		"cut at a chunk boundary": raw[:len(derivedMagic)+1+derivedPrefix+derivedChunk+16],
		"cut inside a chunk":      raw[:len(raw)-10],
		"flipped byte":            func() []byte { c := slices.Clone(raw); c[len(c)/2] ^= 1; return c }(),
		"copied":                  raw,
	}
	for what, content := range variants {
		if err := os.WriteFile(filepath.Join(dir, derivedDir, "other"), content, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := readDerived(db, "other"); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", what, err)
		}
	}
	closeDB(t, db)
	locked, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer locked.Close()
	if _, err := readDerived(locked, "good"); !errors.Is(err, ErrEncrypted) {
		t.Errorf("sealed file without the passphrase: %v, want ErrEncrypted", err)
	}
	if err := locked.WriteDerived("new", 1, func(w io.Writer) error { _, err := w.Write([]byte("x")); return err }); !errors.Is(err, ErrEncrypted) {
		t.Errorf("plaintext write into an encrypted directory: %v, want ErrEncrypted", err)
	}
}

// TestDerivedTidyAtOpen: a leftover .part file is removed at open, and
// plaintext derived files are removed when the directory is opened with
// a passphrase.
func TestDerivedTidyAtOpen(t *testing.T) {
	dir := t.TempDir()
	db := openPlain(t, dir)
	writeDerived(t, db, "plain", []byte("derived plaintext"))
	part := filepath.Join(dir, derivedDir, "half"+derivedPart)
	if err := os.WriteFile(part, []byte("interrupted"), 0o600); err != nil {
		t.Fatal(err)
	}
	closeDB(t, db)
	db = openPlain(t, dir)
	if _, err := os.Stat(part); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("leftover .part file still there: %v", err)
	}
	if got, err := readDerived(db, "plain"); err != nil || string(got) != "derived plaintext" {
		t.Errorf("plain file after reopening: %q, %v", got, err)
	}
	closeDB(t, db)
	db = openEnc(t, dir, "derived secret")
	if _, err := readDerived(db, "plain"); !errors.Is(err, ErrNoDerived) {
		t.Errorf("plaintext derived file in an encrypted directory: %v, want it removed", err)
	}
	writeDerived(t, db, "sealed", []byte("kept"))
	closeDB(t, db)
	db = openEnc(t, dir, "derived secret")
	if got, err := readDerived(db, "sealed"); err != nil || string(got) != "kept" {
		t.Errorf("sealed file after reopening: %q, %v", got, err)
	}
}
