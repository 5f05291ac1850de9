package archive

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// TestGolden pins the exact bytes of two tiny archives. The files in
// testdata are the reviewable layout: header, entries, footer.
func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		file    string
		version string
		recs    []*memory.MemoryRecord
		raws    []*memory.RawJournalRecord
	}{
		{"golden-v1.cma", Version1, []*memory.MemoryRecord{goldenRecord()}, nil},
		{"golden-v2.cma", Version2, []*memory.MemoryRecord{goldenRecord()}, []*memory.RawJournalRecord{goldenRaw()}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			got, sum := writeArchive(t, tc.version, tc.recs, tc.raws, WriterOptions{})
			if !bytes.Equal(got, want) {
				t.Fatalf("written archive differs from %s:\n got:\n%s\nwant:\n%s", tc.file, got, want)
			}

			// The checksum, computed here from the file by the
			// definition: SHA-256 over the entry lines and their "\n".
			lines := strings.SplitAfter(string(want), "\n")
			lines = lines[:len(lines)-1] // after the final "\n"
			h := sha256.New()
			for _, l := range lines[1 : len(lines)-1] {
				h.Write([]byte(l))
			}
			wantSum := hex.EncodeToString(h.Sum(nil))
			if sum.Checksum != wantSum {
				t.Errorf("Summary.Checksum = %s, want %s", sum.Checksum, wantSum)
			}
			if footer := `{"checksum":"` + wantSum + `"}` + "\n"; lines[len(lines)-1] != footer {
				t.Errorf("footer = %q, want %q", lines[len(lines)-1], footer)
			}
			if sum.Size != int64(len(want)) || sum.Format != FormatPlain {
				t.Errorf("Summary size %d format %v, want %d plain", sum.Size, sum.Format, len(want))
			}

			entries, rsum, err := readAll(want, ReaderOptions{})
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			checkEntries(t, entries, tc.recs, tc.raws)
			if rsum != sum {
				t.Errorf("reader summary %+v, writer summary %+v", rsum, sum)
			}
			if !rsum.Header.Timestamp.Equal(exportTime) {
				t.Errorf("timestamp %v, want %v", rsum.Header.Timestamp, exportTime)
			}
		})
	}
}

func TestRoundTripPlain(t *testing.T) {
	recs, raws := sampleRecords(), sampleRaw()
	for _, tc := range []struct {
		name    string
		version string
		raws    []*memory.RawJournalRecord
	}{
		{"v1", Version1, nil},
		{"v2", Version2, raws},
		{"v2 without raw", Version2, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, sum := writeArchive(t, tc.version, recs, tc.raws, WriterOptions{})
			entries, rsum, err := readAll(data, ReaderOptions{})
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			checkEntries(t, entries, recs, tc.raws)
			if rsum != sum {
				t.Errorf("reader summary %+v, writer summary %+v", rsum, sum)
			}
			want := Header{Version: tc.version, Timestamp: exportTime, Curated: len(recs), Raw: len(tc.raws)}
			if !sum.Header.Timestamp.Equal(want.Timestamp) || sum.Header.Version != want.Version ||
				sum.Header.Curated != want.Curated || sum.Header.Raw != want.Raw {
				t.Errorf("header %+v, want %+v", sum.Header, want)
			}
			for i, e := range entries {
				if e.Line != i+2 {
					t.Errorf("entry %d on line %d, want %d", i, e.Line, i+2)
				}
			}
			vsum, err := Verify(bytes.NewReader(data), ReaderOptions{})
			if err != nil || vsum != sum {
				t.Errorf("Verify = %+v, %v; want %+v", vsum, err, sum)
			}
		})
	}
}

func TestEmptyArchive(t *testing.T) {
	for _, v := range []string{Version1, Version2} {
		data, sum := writeArchive(t, v, nil, nil, WriterOptions{})
		const empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
		if sum.Checksum != empty {
			t.Errorf("%s: checksum %s, want %s", v, sum.Checksum, empty)
		}
		if n := bytes.Count(data, []byte("\n")); n != 2 {
			t.Errorf("%s: %d lines, want header and footer:\n%s", v, n, data)
		}
		entries, _, err := readAll(data, ReaderOptions{})
		if err != nil || len(entries) != 0 {
			t.Errorf("%s: read %d entries, %v", v, len(entries), err)
		}
	}
}

func TestTimestampFormat(t *testing.T) {
	base := time.Date(2025, 1, 2, 3, 4, 5, 0, time.FixedZone("CET", 3600))
	for _, tc := range []struct {
		ns   int
		want string
	}{
		{0, "2025-01-02T02:04:05Z"},
		{500_000_000, "2025-01-02T02:04:05.500Z"},
		{123_000, "2025-01-02T02:04:05.000123Z"},
		{120_000_000 + 1, "2025-01-02T02:04:05.120000001Z"},
	} {
		if got := string(appendTimestamp(nil, base.Add(time.Duration(tc.ns)))); got != tc.want {
			t.Errorf("%d ns: %s, want %s", tc.ns, got, tc.want)
		}
	}
}

// TestMinimalRecords reads hand-written entries that leave out most
// fields; the reader fills in upstream's defaults.
func TestMinimalRecords(t *testing.T) {
	data, err := os.ReadFile("testdata/minimal-v1.cma")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	entries, _, err := readAll(data, ReaderOptions{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if len(entries) != 2 {
		t.Fatalf("%d entries, want 2", len(entries))
	}
	r := entries[0].Record
	if r.Version != 1 || !r.CreatedAt.Equal(now) || !r.UpdatedAt.Equal(now) || !r.LastAccessedAt.Equal(now) || !r.Fidelity.LastDecayTick.Equal(now) {
		t.Errorf("defaults not applied: version %d, times %v %v %v %v", r.Version, r.CreatedAt, r.UpdatedAt, r.LastAccessedAt, r.Fidelity.LastDecayTick)
	}
	if r.Meta.CaptureStatus != memory.CaptureLegacy || r.Meta.Rationale == nil || *r.Meta.Rationale != memory.LegacyRationale {
		t.Errorf("meta = %+v, want the legacy marker", r.Meta)
	}
	if text, _ := r.Content.Text(); text != "hi" {
		t.Errorf("text = %q", text)
	}
}

// TestLenientReading: CRLF terminators, blank and whitespace-only lines
// (also before the header) and a footer without its final newline.
func TestLenientReading(t *testing.T) {
	data, err := os.ReadFile("testdata/lenient-v2.cma")
	if err != nil {
		t.Fatal(err)
	}
	entries, sum, err := readAll(data, ReaderOptions{})
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if len(entries) != 2 || entries[0].Kind != KindRecord || entries[1].Kind != KindRaw {
		t.Fatalf("entries = %+v", entries)
	}
	if entries[0].Line != 4 || entries[1].Line != 7 {
		t.Errorf("lines %d and %d, want 4 and 7", entries[0].Line, entries[1].Line)
	}
	if sum.Size != int64(len(data)) {
		t.Errorf("size %d, want %d", sum.Size, len(data))
	}

	golden, err := os.ReadFile("testdata/golden-v2.cma")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(bytes.NewReader(bytes.TrimSuffix(golden, []byte("\n"))), ReaderOptions{}); err != nil {
		t.Errorf("footer without newline: %v", err)
	}
	crlf := bytes.ReplaceAll(golden, []byte("\n"), []byte("\r\n"))
	if s, err := Verify(bytes.NewReader(crlf), ReaderOptions{}); err != nil || s.Checksum != "1717b750761fd4dd80a600070cc02c170aa22482a3e1cda0531d5c518b55ac0d" {
		t.Errorf("CRLF archive: %+v, %v", s, err)
	}
}

// TestCorruptPlain reads every broken fixture and checks the sentinel and
// the line the error names.
func TestCorruptPlain(t *testing.T) {
	for _, tc := range []struct {
		file string
		opts ReaderOptions
		want []error
		line int // 0: no line expected
		msg  string
	}{
		{"corrupt/bad-checksum.cma", ReaderOptions{}, []error{ErrCorrupt, ErrChecksum}, 4, "footer says"},
		{"corrupt/count-short.cma", ReaderOptions{}, []error{ErrCorrupt, ErrCountMismatch}, 4, "declares 3 entries, the footer follows 2"},
		{"corrupt/count-long.cma", ReaderOptions{}, []error{ErrCorrupt, ErrCountMismatch}, 3, "more entries than the 1"},
		{"corrupt/missing-footer.cma", ReaderOptions{}, []error{ErrCorrupt, ErrTruncated}, 4, "missing footer"},
		{"corrupt/truncated-entry.cma", ReaderOptions{}, []error{ErrCorrupt, ErrTruncated}, 3, "not terminated"},
		{"corrupt/truncated-header.cma", ReaderOptions{}, []error{ErrCorrupt, ErrTruncated}, 1, "header line"},
		{"corrupt/unknown-version.cma", ReaderOptions{}, []error{ErrUnsupported}, 1, `"3.0"`},
		{"corrupt/bad-header.cma", ReaderOptions{}, []error{ErrCorrupt}, 1, "no timestamp"},
		{"corrupt/bad-entry-json.cma", ReaderOptions{}, []error{ErrCorrupt}, 3, "invalid record"},
		{"corrupt/invalid-record.cma", ReaderOptions{}, []error{ErrCorrupt}, 2, "fidelity.score"},
		{"corrupt/nil-id.cma", ReaderOptions{}, []error{ErrCorrupt}, 2, "nil UUID"},
		{"corrupt/unknown-kind.cma", ReaderOptions{}, []error{ErrCorrupt}, 2, `unknown kind "memory_snapshot"`},
		{"corrupt/v2-kind-count.cma", ReaderOptions{}, []error{ErrCorrupt, ErrCountMismatch}, 3, "more curated records than the 1"},
		{"corrupt/v2-bad-counts.cma", ReaderOptions{}, []error{ErrCorrupt}, 1, "differ from record_count"},
		{"corrupt/data-after-footer.cma", ReaderOptions{}, []error{ErrCorrupt}, 5, "after the footer"},
		{"corrupt/bad-footer.cma", ReaderOptions{}, []error{ErrCorrupt}, 3, "64 hex digits"},
		{"corrupt/not-json.txt", ReaderOptions{}, []error{ErrNotArchive}, 0, ""},
		{"corrupt/empty.cma", ReaderOptions{}, []error{ErrNotArchive}, 0, "empty input"},
		{"minimal-v1.cma", ReaderOptions{MaxLineSize: 130}, []error{ErrTooLarge}, 2, "line exceeds 130 bytes"},
		{"minimal-v1.cma", ReaderOptions{MaxSize: 300}, []error{ErrTooLarge}, 0, "archive exceeds 300 bytes"},
		{"golden-v1.cma", ReaderOptions{MaxLineSize: 500}, []error{ErrTooLarge}, 2, "line exceeds 500 bytes"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			_, err = Verify(bytes.NewReader(data), tc.opts)
			if err == nil {
				t.Fatal("Verify succeeded")
			}
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("error %q is not %q", err, w)
				}
			}
			var le *LineError
			switch {
			case tc.line == 0 && errors.As(err, &le):
				t.Errorf("error %q names line %d, want none", err, le.Line)
			case tc.line != 0 && !errors.As(err, &le):
				t.Errorf("error %q is not a LineError", err)
			case tc.line != 0 && le.Line != tc.line:
				t.Errorf("error %q names line %d, want %d", err, le.Line, tc.line)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not mention %q", err, tc.msg)
			}
			var me *memory.Error
			if errors.As(err, &me) {
				t.Errorf("error %q wraps a memory.Error (code %s); it must not", err, me.Code)
			}
		})
	}
}

// TestReaderStreams checks that entries come out one at a time and that
// a late failure is reported after the entries before it.
func TestReaderStreams(t *testing.T) {
	data, err := os.ReadFile("testdata/corrupt/bad-checksum.cma")
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(bytes.NewReader(data), ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := r.Next(); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
	}
	_, err = r.Next()
	if !errors.Is(err, ErrChecksum) {
		t.Fatalf("third Next = %v, want a checksum error", err)
	}
	if _, err2 := r.Next(); err2 != err {
		t.Errorf("error not sticky: %v then %v", err, err2)
	}
	if r.Summary() != (Summary{}) {
		t.Errorf("summary of a failed archive = %+v", r.Summary())
	}
}

// TestReaderSourceError passes an I/O error of the input through.
func TestReaderSourceError(t *testing.T) {
	golden, err := os.ReadFile("testdata/golden-v1.cma")
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk on fire")
	r := io.MultiReader(bytes.NewReader(golden[:200]), iotestErrReader{boom})
	_, err = Verify(r, ReaderOptions{})
	if !errors.Is(err, boom) {
		t.Fatalf("Verify = %v, want the source error", err)
	}
}

type iotestErrReader struct{ err error }

func (r iotestErrReader) Read([]byte) (int, error) { return 0, r.err }

func TestWriterMisuse(t *testing.T) {
	hdr := func(v string, c, r int) Header { return Header{Version: v, Timestamp: exportTime, Curated: c, Raw: r} }
	newW := func(t *testing.T, h Header) *Writer {
		w, err := NewWriter(io.Discard, h, WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}

	t.Run("bad headers", func(t *testing.T) {
		for _, h := range []Header{
			hdr("3.0", 0, 0),
			hdr(Version1, 0, 1),
			hdr(Version2, -1, 0),
			{Version: Version1},
		} {
			if _, err := NewWriter(io.Discard, h, WriterOptions{}); err == nil {
				t.Errorf("NewWriter(%+v) succeeded", h)
			}
		}
	})
	t.Run("too few", func(t *testing.T) {
		w := newW(t, hdr(Version1, 2, 0))
		if err := w.WriteRecord(goldenRecord()); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Close(); !errors.Is(err, ErrCountMismatch) {
			t.Fatalf("Close = %v, want ErrCountMismatch", err)
		}
		if err := w.WriteRecord(goldenRecord()); err == nil {
			t.Error("write after failed Close succeeded")
		}
	})
	t.Run("too many", func(t *testing.T) {
		w := newW(t, hdr(Version1, 1, 0))
		if err := w.WriteRecord(goldenRecord()); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteRecord(goldenRecord()); !errors.Is(err, ErrCountMismatch) {
			t.Fatalf("second record: %v, want ErrCountMismatch", err)
		}
		if _, err := w.Close(); err != nil {
			t.Fatalf("Close after a refused record: %v", err)
		}
	})
	t.Run("raw in v1", func(t *testing.T) {
		w := newW(t, hdr(Version1, 0, 0))
		if err := w.WriteRaw(goldenRaw()); err == nil || !strings.Contains(err.Error(), "curated records only") {
			t.Fatalf("WriteRaw in v1 = %v", err)
		}
	})
	t.Run("curated after raw", func(t *testing.T) {
		w := newW(t, hdr(Version2, 1, 1))
		if err := w.WriteRaw(goldenRaw()); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteRecord(goldenRecord()); err == nil || !strings.Contains(err.Error(), "before raw") {
			t.Fatalf("curated after raw = %v", err)
		}
	})
	t.Run("invalid records", func(t *testing.T) {
		w := newW(t, hdr(Version2, 1, 1))
		bad := goldenRecord()
		bad.Fidelity.Score = 2
		if err := w.WriteRecord(bad); err == nil || !strings.Contains(err.Error(), "fidelity.score") {
			t.Errorf("invalid record = %v", err)
		}
		noID := goldenRecord()
		noID.ID = memory.ID{}
		if err := w.WriteRecord(noID); err == nil || !strings.Contains(err.Error(), "nil UUID") {
			t.Errorf("nil id = %v", err)
		}
		badRaw := goldenRaw()
		badRaw.SessionID = " "
		if err := w.WriteRaw(badRaw); err == nil || !strings.Contains(err.Error(), "session_id") {
			t.Errorf("invalid raw = %v", err)
		}
		if err := w.WriteRecord(nil); err == nil {
			t.Error("nil record accepted")
		}
		// The refusals wrote nothing: the archive is still good.
		if err := w.WriteRecord(goldenRecord()); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteRaw(goldenRaw()); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("line too long", func(t *testing.T) {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, hdr(Version1, 1, 0), WriterOptions{MaxLineSize: 100})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteRecord(goldenRecord()); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("oversized record = %v, want ErrTooLarge", err)
		}
	})
	t.Run("closed", func(t *testing.T) {
		w := newW(t, hdr(Version1, 0, 0))
		if _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Close(); err == nil {
			t.Error("second Close succeeded")
		}
	})
}

// TestWriterOutputError makes the output fail at every byte offset and
// checks the error comes back (and stays) instead of a silent short
// archive.
func TestWriterOutputError(t *testing.T) {
	full, _ := writeArchive(t, Version2, sampleRecords(), sampleRaw(), WriterOptions{MaxLineSize: 0})
	boom := errors.New("disk full")
	for _, enc := range []bool{false, true} {
		step := 97
		if enc {
			step = 797
		}
		for n := 0; n < len(full); n += step {
			o := WriterOptions{}
			if enc {
				o.Encryption = &EncryptOptions{Passphrase: []byte("pw"), KDF: tinyKDF(), ChunkSize: 1024}
			}
			ew := &errWriter{n: n, err: boom}
			err := writeTo(ew, Version2, sampleRecords(), sampleRaw(), o)
			if !errors.Is(err, boom) {
				t.Fatalf("encrypted=%v fail after %d bytes: %v, want the write error", enc, n, err)
			}
		}
	}
}

// writeTo writes an archive and returns the first error.
func writeTo(out io.Writer, version string, recs []*memory.MemoryRecord, raws []*memory.RawJournalRecord, o WriterOptions) error {
	w, err := NewWriter(out, Header{Version: version, Timestamp: exportTime, Curated: len(recs), Raw: len(raws)}, o)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if err := w.WriteRecord(r); err != nil {
			return err
		}
	}
	for _, r := range raws {
		if err := w.WriteRaw(r); err != nil {
			return err
		}
	}
	_, err = w.Close()
	return err
}

func TestDetect(t *testing.T) {
	enc, _ := writeArchive(t, Version1, nil, nil, WriterOptions{Encryption: &EncryptOptions{Passphrase: []byte("pw"), KDF: tinyKDF()}})
	golden, err := os.ReadFile("testdata/golden-v1.cma")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		prefix []byte
		want   Format
	}{
		{"plain", golden, FormatPlain},
		{"plain, short", []byte(`{"v`), FormatPlain},
		{"plain, leading blank lines", []byte("\r\n\n  {\"version\":\"1.0\""), FormatPlain},
		{"plain, cut inside a character", []byte(`{"a":"caf` + "\xc3"), FormatPlain},
		{"encrypted", enc, FormatEncrypted},
		{"empty", nil, FormatUnknown},
		{"spaces", []byte("   \n"), FormatUnknown},
		{"text", []byte("hello"), FormatUnknown},
		{"brace then binary", []byte("{\"\x00\x01\x02"), FormatUnknown},
		{"brace, no quote", []byte("{x"), FormatUnknown},
		{"magic prefix only", []byte("MEMSVC-CMA"), FormatUnknown},
		{"invalid utf-8", []byte("{\"\xff\xfe"), FormatUnknown},
	} {
		if got := Detect(tc.prefix); got != tc.want {
			t.Errorf("%s: Detect = %v, want %v", tc.name, got, tc.want)
		}
		if got := IsEncrypted(tc.prefix); got != (tc.want == FormatEncrypted) {
			t.Errorf("%s: IsEncrypted = %v", tc.name, got)
		}
	}
}
