package recorder

import (
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

type lineResult struct {
	line string
	n    int
	size int64 // > 0: a LineTooLongError of this size
}

func readAll(t *testing.T, in string, limit int) []lineResult {
	t.Helper()
	lr := NewLineReader(strings.NewReader(in), limit)
	var out []lineResult
	for {
		line, n, err := lr.Next()
		var tl *LineTooLongError
		switch {
		case errors.Is(err, io.EOF):
			return out
		case errors.As(err, &tl):
			if tl.Line != n || tl.Limit != limit || !errors.Is(err, ErrLineTooLong) {
				t.Fatalf("too-long error %+v for line %d", tl, n)
			}
			out = append(out, lineResult{n: n, size: tl.Size})
		case err != nil:
			t.Fatal(err)
		default:
			out = append(out, lineResult{line: string(line), n: n})
		}
		if len(out) > 100 {
			t.Fatal("runaway reader")
		}
	}
}

func TestLineReader(t *testing.T) {
	const limit = 8
	cases := []struct {
		name string
		in   string
		want []lineResult
	}{
		{"empty input", "", nil},
		{"one line", "abc\n", []lineResult{{line: "abc", n: 1}}},
		{"no final newline", "abc\ndef", []lineResult{{line: "abc", n: 1}, {line: "def", n: 2}}},
		{"CRLF", "abc\r\ndef\r\n", []lineResult{{line: "abc", n: 1}, {line: "def", n: 2}}},
		{"lone CR kept", "a\rb\n", []lineResult{{line: "a\rb", n: 1}}},
		{"empty lines counted", "\n\nx\n", []lineResult{{line: "", n: 1}, {line: "", n: 2}, {line: "x", n: 3}}},
		{"exactly the limit", "12345678\n", []lineResult{{line: "12345678", n: 1}}},
		{"exactly the limit with CRLF", "12345678\r\n", []lineResult{{line: "12345678", n: 1}}},
		{"exactly the limit at EOF", "12345678", []lineResult{{line: "12345678", n: 1}}},
		{"one over", "123456789\nok\n", []lineResult{{n: 1, size: 9}, {line: "ok", n: 2}}},
		{"one over with CRLF", "123456789\r\nok\n", []lineResult{{n: 1, size: 9}, {line: "ok", n: 2}}},
		{"one over at EOF", "ok\n123456789", []lineResult{{line: "ok", n: 1}, {n: 2, size: 9}}},
		{"surrounding white space counts", "  {\"a\":1}  \n", []lineResult{{n: 1, size: 11}}},
		{"white space only, over the limit", "          \nok\n", []lineResult{{n: 1, size: 10}, {line: "ok", n: 2}}},
		{"white space only, within", "    \n", []lineResult{{line: "    ", n: 1}}},
		{"lines around a long one", "a\n" + strings.Repeat("x", 1000) + "\nb\n", []lineResult{{line: "a", n: 1}, {n: 2, size: 1000}, {line: "b", n: 3}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := readAll(t, tc.in, limit)
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("line %d: got %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// TestLineReaderDefaultLimit: exactly 256 KiB is accepted, one byte more
// is rejected, both counted without the terminator.
func TestLineReaderDefaultLimit(t *testing.T) {
	exact := strings.Repeat("x", DefaultMaxEventBytes)
	got := readAll(t, exact+"\r\n"+exact+"y\n"+"z\n", DefaultMaxEventBytes)
	if len(got) != 3 || got[0].line != exact || got[1].size != DefaultMaxEventBytes+1 || got[2].line != "z" {
		t.Fatalf("got %d results: first %d bytes, second size %d", len(got), len(got[0].line), got[1].size)
	}
}

// endlessLine produces a line of n bytes (and then "\nok\n") without
// holding it in memory.
type endlessLine struct {
	left int64
	tail string
}

func (e *endlessLine) Read(p []byte) (int, error) {
	if e.left > 0 {
		n := int64(len(p))
		n = min(n, e.left)
		for i := range p[:n] {
			p[i] = 'x'
		}
		e.left -= n
		return int(n), nil
	}
	if e.tail == "" {
		return 0, io.EOF
	}
	n := copy(p, e.tail)
	e.tail = e.tail[n:]
	return n, nil
}

// TestLineReaderDoesNotBufferLongLines: a 64 MiB line is counted and
// skipped with memory bounded by the limit, not by the line.
func TestLineReaderDoesNotBufferLongLines(t *testing.T) {
	const size = 64 << 20
	lr := NewLineReader(&endlessLine{left: size, tail: "\nok\n"}, DefaultMaxEventBytes)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, n, err := lr.Next()
	runtime.ReadMemStats(&after)
	var tl *LineTooLongError
	if !errors.As(err, &tl) || tl.Size != size || n != 1 {
		t.Fatalf("long line: %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4*DefaultMaxEventBytes {
		t.Fatalf("reading a %d-byte line allocated %d bytes", size, alloc)
	}
	if c := cap(lr.buf); c > 2*(DefaultMaxEventBytes+1) {
		t.Fatalf("line buffer grew to %d bytes", c)
	}
	line, n, err := lr.Next()
	if err != nil || string(line) != "ok" || n != 2 {
		t.Fatalf("line after the long one: %q %d %v", line, n, err)
	}
}

type failingReader struct{ err error }

func (f failingReader) Read([]byte) (int, error) { return 0, f.err }

func TestLineReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	_, n, err := NewLineReader(failingReader{boom}, 10).Next()
	if !errors.Is(err, boom) || n != 1 {
		t.Fatalf("read error: %v on line %d", err, n)
	}
}
