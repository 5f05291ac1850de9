package recorder

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"unicode/utf8"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/redact"
	"memsvc.dev/memsvc/pkg/spool"
)

// The fuzz targets of this file cover the recorder's readers of files and
// streams it does not control: event lines on stdin, the recent-events
// cache and spooled batches. Inputs are bounded (64 KiB of data plus at
// most 192 KiB of generated padding) so that every execution stays fast
// and so does minimising what the fuzzer finds.

const fuzzMaxInput = 64 << 10

// FuzzLineReader compares LineReader with a plain split of the input on
// "\n": the same lines in the same order with the same numbers, a
// *LineTooLongError exactly for lines over the limit (terminator and the
// "\r" of "\r\n" not counted), io.EOF at the end and after it, and a line
// buffer that never holds much more than the limit, however long a line
// is and however the input arrives.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("abc\ndef"), uint16(8), uint32(0), uint8(0))
	f.Add([]byte("a\r\n\r\n\r\rb\n\n"), uint16(1), uint32(0), uint8(1))
	f.Add([]byte("\nok\r\n"), uint16(100), uint32(70_000), uint8(200))
	f.Add([]byte("{\"session_id\":\"s\",\"event_type\":\"x\"}\n"), uint16(0), uint32(1), uint8(3))
	f.Add([]byte("12345678\r\n123456789\r\n"), uint16(8), uint32(0), uint8(7))
	f.Fuzz(func(t *testing.T, data []byte, limit uint16, pad uint32, chunk uint8) {
		if len(data) > fuzzMaxInput {
			return
		}
		// Padding makes a first line longer than the reader's buffer.
		in := append(bytes.Repeat([]byte{'x'}, int(pad%(3*lineChunk))), data...)
		lim := int(limit)
		if lim == 0 {
			lim = DefaultMaxEventBytes
		}
		lr := NewLineReader(&choppyReader{data: in, max: int(chunk) + 1}, int(limit))
		bound := 2*(lim+1) + (lim+1)/4 + 8<<10
		for i, want := range splitLines(in) {
			line, n, err := lr.Next()
			if n != i+1 {
				t.Fatalf("line %d numbered %d", i+1, n)
			}
			if len(lr.buf) > lim+1 || cap(lr.buf) > bound {
				t.Fatalf("line buffer holds %d bytes (capacity %d) for a limit of %d", len(lr.buf), cap(lr.buf), lim)
			}
			if len(want) > lim {
				tl, ok := errors.AsType[*LineTooLongError](err)
				if !ok || tl.Line != i+1 || tl.Size != int64(len(want)) || tl.Limit != lim || !errors.Is(err, ErrLineTooLong) {
					t.Fatalf("line %d of %d bytes over the limit %d: got %q, %v", i+1, len(want), lim, clipped(line), err)
				}
				continue
			}
			if err != nil || !bytes.Equal(line, want) {
				t.Fatalf("line %d: got %q, %v; want %q", i+1, clipped(line), err, clipped(want))
			}
		}
		for range 2 {
			if line, _, err := lr.Next(); !errors.Is(err, io.EOF) || line != nil {
				t.Fatalf("after the last line: %q, %v", clipped(line), err)
			}
		}
	})
}

// splitLines is the reference: lines end in "\n", a final line may lack
// it, and a terminated line loses one trailing "\r".
func splitLines(in []byte) [][]byte {
	var out [][]byte
	for len(in) > 0 {
		i := bytes.IndexByte(in, '\n')
		if i < 0 {
			return append(out, in)
		}
		out = append(out, bytes.TrimSuffix(in[:i], []byte("\r")))
		in = in[i+1:]
	}
	return out
}

func clipped(b []byte) []byte { return b[:min(len(b), 64)] }

// choppyReader hands out its data at most max bytes at a time.
type choppyReader struct {
	data []byte
	max  int
}

func (r *choppyReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.max)], r.data)
	r.data = r.data[n:]
	return n, nil
}

// FuzzRecentEvents reads arbitrary bytes as the recent-events cache. The
// window must hold what a plain list model holds (the last size distinct
// valid identities, oldest first, a repeat not refreshing its place);
// formatting it and reading that back gives the same window, and
// formatting again gives the same bytes.
func FuzzRecentEvents(f *testing.F) {
	k := func(b byte) string { return hex.EncodeToString(bytes.Repeat([]byte{b}, 16)) }
	f.Add([]byte(recentHeader+"\n"+k(1)+"\n"+k(2)+"\n"), uint16(2))
	f.Add([]byte(recentHeader+"\r\n"+k(1)+"\r\n"+k(2)+"\n"+k(1)+"\n"+k(3)+"\n"), uint16(2))
	f.Add([]byte(recentHeader+"\n"+"00\n"+k(0xab)[:31]+"g\n"+"ABABABABABABABABABABABABABABABAB\n"), uint16(512))
	f.Add([]byte("something else\n"+k(1)+"\n"), uint16(8))
	f.Add([]byte(recentHeader), uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, size uint16) {
		if len(data) > fuzzMaxInput {
			return // also keeps every line under bufio.Scanner's token limit
		}
		n := int(size % 1100)
		w := parseRecent(data, n)
		got := w.keys()
		if want := recentModel(data, n); !slices.Equal(got, want) {
			t.Fatalf("window %x, model %x", got, want)
		}
		out := formatRecent(w)
		again := parseRecent(out, n)
		if !slices.Equal(again.keys(), got) {
			t.Fatalf("read back %x, wrote %x", again.keys(), got)
		}
		if !bytes.Equal(formatRecent(again), out) {
			t.Fatalf("formatting is not stable:\n%s\n%s", out, formatRecent(again))
		}
	})
}

// recentModel reads the recent-events file into a plain list.
func recentModel(data []byte, size int) []dedupeKey {
	lines := bytes.Split(data, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	for i := range lines {
		lines[i] = bytes.TrimSuffix(lines[i], []byte("\r"))
	}
	if len(lines) == 0 || string(lines[0]) != recentHeader {
		return nil
	}
	var keys []dedupeKey
	for _, l := range lines[1:] {
		var k dedupeKey
		if len(l) != hex.EncodedLen(len(k)) {
			continue
		}
		if _, err := hex.Decode(k[:], l); err != nil || slices.Contains(keys, k) || size <= 0 {
			continue
		}
		keys = append(keys, k)
		if len(keys) > size {
			keys = keys[1:]
		}
	}
	return keys
}

// FuzzSpoolFile reads arbitrary bytes as a spooled batch, as a spool flush
// does. A file is refused as malformed (and so quarantined), or every
// record comes back with an id and content, redacted, as a line that
// decodes and encodes to itself; writing the lines back and reading the
// file again gives the same lines (re-redaction is idempotent).
func FuzzSpoolFile(f *testing.F) {
	ids := memory.NewIDSource(nil, nil)
	rec := func(extra string) string {
		return `{"record_id":"` + ids.New().String() + `","session_id":"s","content":{"blocks":[{"modality":"text","format":"text/plain","data":"dG9rZW49Z2hwXzEyMzQ1Njc4OTBhYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejEy"}]}` + extra + "}\n"
	}
	for _, s := range []string{
		rec(""),
		rec(`,"turn_id":"password=hunter22","metadata":{"api_key":"k"},"meta":{"intent":"i","confidence":0.5}`) + "\n" + rec(`,"visibility":"sealed","secrecy_level":"secret"`),
		rec(`,"content":{"blocks":[]}`),
		`{"session_id":"s"}` + "\n",
		rec("")[:40],
		"[]\n",
	} {
		f.Add([]byte(s))
	}
	// One spool directory and recorder serve every input: creating them
	// and syncing files would make each execution cost milliseconds.
	dir, err := spool.Open(filepath.Join(f.TempDir(), "spool"), spool.Options{})
	if err != nil {
		f.Fatal(err)
	}
	r, err := New(Config{Spool: dir})
	if err != nil {
		f.Fatal(err)
	}
	const name = "batch-0000000000001-0190b6a47c1e7a559f1a5f2b3c4d5e6f.jsonl"
	path := filepath.Join(dir.Path(), name)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > fuzzMaxInput {
			return
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		lines, reqs, err := r.readSpoolFile(name)
		if err != nil {
			if !errors.Is(err, spool.ErrMalformed) {
				t.Fatalf("error %v is not ErrMalformed", err)
			}
			return
		}
		if len(lines) == 0 || len(lines) != len(reqs) {
			t.Fatalf("%d lines for %d requests", len(lines), len(reqs))
		}
		for i := range reqs {
			checkSpooled(t, lines[i], &reqs[i])
		}
		back, err := spool.Encode(lines) // what Rewrite writes after a partial send
		if err != nil {
			t.Fatalf("encode the lines read: %v", err)
		}
		if err := os.WriteFile(path, back, 0o600); err != nil {
			t.Fatal(err)
		}
		again, _, err := r.readSpoolFile(name)
		if err != nil || len(again) != len(lines) {
			t.Fatalf("read back %d lines: %v", len(again), err)
		}
		for i := range lines {
			if !bytes.Equal(again[i], lines[i]) {
				t.Fatalf("record %d changed on the second read:\n%s\n%s", i+1, lines[i], again[i])
			}
		}
	})
}

// checkSpooled checks one record as read from the spool.
func checkSpooled(t *testing.T, line []byte, req *memory.EncodeStoreRawRequest) {
	t.Helper()
	if req.RecordID == nil || req.RecordID.IsNil() || len(req.Content.Blocks) == 0 {
		t.Fatalf("accepted a record without id or content: %s", line)
	}
	for _, b := range req.Content.Blocks {
		if s := string(b.Data); b.Modality == memory.ModalityText && utf8.ValidString(s) && redact.Text(s) != s {
			t.Fatalf("text block not redacted: %q", s)
		}
	}
	var back memory.EncodeStoreRawRequest
	if err := json.Unmarshal(line, &back); err != nil {
		t.Fatalf("line does not decode: %v\n%s", err, line)
	}
	b, err := json.Marshal(&back)
	if err != nil || !bytes.Equal(b, line) {
		t.Fatalf("line does not encode to itself (%v):\n%s\n%s", err, line, b)
	}
}
