package archive

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

// TestNamespaceMember: entries of a namespace other than the default carry
// it between kind and data; default entries are written as they always
// were; the reader reports the member, and an archive without it reads as
// the default namespace.
func TestNamespaceMember(t *testing.T) {
	rec, raw := goldenRecord(), goldenRaw()
	other := goldenRecord()
	other.ID[15]++
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Version: Version2, Timestamp: exportTime, Curated: 2, Raw: 1}, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		w.WriteRecordIn(memory.DefaultNamespace, rec),
		w.WriteRecordIn("proj-a", other),
		w.WriteRawIn("proj-a", raw),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	if !strings.HasPrefix(lines[1], `{"kind":"memory_record","data":{`) {
		t.Errorf("default entry %s", lines[1])
	}
	if !strings.HasPrefix(lines[2], `{"kind":"memory_record","namespace":"proj-a","data":{`) {
		t.Errorf("proj-a entry %s", lines[2])
	}
	if !strings.HasPrefix(lines[3], `{"kind":"raw_journal_record","namespace":"proj-a","data":{`) {
		t.Errorf("proj-a raw entry %s", lines[3])
	}
	entries, _, err := readAll(buf.Bytes(), ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Namespace)
	}
	if want := []string{"", "proj-a", "proj-a"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("namespaces %q, want %q", got, want)
	}
	checkEntries(t, entries, []*memory.MemoryRecord{rec, other}, []*memory.RawJournalRecord{raw})
}

// TestNamespaceMemberAnywhere: a member in another position (a tool that
// rewrote the line) is read by the general decoder, and an invalid name is
// a corrupt entry.
func TestNamespaceMemberAnywhere(t *testing.T) {
	data, _ := writeArchive(t, Version2, []*memory.MemoryRecord{goldenRecord()}, nil, WriterOptions{})
	lines := strings.Split(string(data), "\n")
	entry := lines[1]
	body := strings.TrimSuffix(strings.TrimPrefix(entry, `{"kind":"memory_record","data":`), "}")
	for _, tc := range []struct {
		name, line, want string
		bad              bool
	}{
		{"after data", `{"kind":"memory_record","data":` + body + `,"namespace":"proj.b"}`, "proj.b", false},
		{"first", `{"namespace":"proj_c","kind":"memory_record","data":` + body + `}`, "proj_c", false},
		{"upper case", `{"kind":"memory_record","namespace":"Proj","data":` + body + `}`, "", true},
		{"empty", `{"kind":"memory_record","namespace":"","data":` + body + `}`, "", true},
		{"not a string", `{"kind":"memory_record","namespace":7,"data":` + body + `}`, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines[1] = tc.line
			fixed := rehash(t, lines)
			entries, _, err := readAll(fixed, ReaderOptions{})
			if tc.bad {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("read: %v, want a corrupt entry", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 1 || entries[0].Namespace != tc.want {
				t.Errorf("entries %+v, want namespace %s", entries, tc.want)
			}
		})
	}
}

// rehash returns the archive lines with the footer's checksum recomputed.
func rehash(t *testing.T, lines []string) []byte {
	t.Helper()
	n := len(lines) - 2 // the last element is the empty string after "\n"
	h := sha256.New()
	for _, l := range lines[1:n] {
		h.Write([]byte(l + "\n"))
	}
	out := append([]string{}, lines[:n]...)
	out = append(out, string(appendFooterLine(nil, h.Sum(nil))))
	return []byte(strings.Join(out, "\n"))
}

func TestNamespaceOnlyInBundles(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Version: Version1, Timestamp: exportTime, Curated: 1}, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRecordIn("proj-a", goldenRecord()); err == nil || !strings.Contains(err.Error(), "default namespace only") {
		t.Errorf("a 1.0 archive took a record of another namespace: %v", err)
	}
	if err := w.WriteRecordIn("Bad Name", goldenRecord()); err == nil {
		t.Error("an invalid namespace was written")
	}
	if err := w.WriteRecordIn(memory.DefaultNamespace, goldenRecord()); err != nil {
		t.Errorf("default record in a 1.0 archive: %v", err)
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
