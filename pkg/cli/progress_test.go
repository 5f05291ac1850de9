package cli

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 5 << 20: "5.0 MiB", 3 << 30: "3.0 GiB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestFormatCount(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 123456: "123,456", 1234567: "1,234,567", -4321: "-4,321"} {
		if got := FormatCount(n); got != want {
			t.Errorf("FormatCount(%d) = %q, want %q", n, got, want)
		}
	}
}

// fakeClock advances by step on every reading.
type fakeClock struct {
	t    time.Time
	step time.Duration
}

func (c *fakeClock) now() time.Time { t := c.t; c.t = c.t.Add(c.step); return t }

func TestProgressLine(t *testing.T) {
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	p := NewProgress(&bytes.Buffer{}, true, ProgressOptions{Label: "import", Noun: "records", Total: 1000, Now: func() time.Time { return start }})
	p.n = 250
	if got, want := p.Line(start.Add(5*time.Second)), "import [======                  ]  25% 250/1,000 records 50/s 5s"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	p.n = 1500 // more than announced: the bar stops at full, the count is true
	if got := p.Line(start.Add(10 * time.Second)); !strings.Contains(got, "[========================] 100% 1,500/1,000") {
		t.Errorf("overfull line %q", got)
	}
	b := NewProgress(&bytes.Buffer{}, true, ProgressOptions{Label: "export", Unit: Bytes, Now: func() time.Time { return start }})
	b.n = 3 << 20
	if got, want := b.Line(start.Add(2*time.Second)), "export 3.0 MiB 1.5 MiB/s 2s"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
}

// TestProgressDraws: redraws in place with a carriage return, at most once
// per redrawEvery, and ends with a newline; a hidden progress draws
// nothing and its methods are safe on nil.
func TestProgressDraws(t *testing.T) {
	var buf bytes.Buffer
	c := &fakeClock{t: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), step: 10 * time.Millisecond}
	p := NewProgress(&buf, true, ProgressOptions{Label: "x", Total: 100, Now: c.now})
	for i := int64(1); i <= 100; i++ {
		p.Set(i)
	}
	p.Done()
	out := buf.String()
	draws := strings.Count(out, "\r")
	if draws < 2 || draws > 15 || !strings.HasSuffix(out, "\n") || !strings.Contains(out, "100% 100/100") {
		t.Fatalf("%d draws: %q", draws, out)
	}
	var none bytes.Buffer
	hidden := NewProgress(&none, false, ProgressOptions{Label: "x"})
	if hidden != nil {
		t.Fatal("hidden progress is not nil")
	}
	hidden.Set(1)
	hidden.Add(1)
	hidden.Clear()
	hidden.Done()
	w := &ProgressWriter{W: &none, P: hidden}
	if _, err := w.Write([]byte("abc")); err != nil || none.String() != "abc" {
		t.Fatalf("writer through a hidden progress: %v %q", err, none.String())
	}
}

// TestProgressCountsBytes: ProgressReader and ProgressWriter pass the
// bytes through and add each read's or write's count to the progress.
func TestProgressCountsBytes(t *testing.T) {
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	p := NewProgress(&bytes.Buffer{}, true, ProgressOptions{Label: "x", Unit: Bytes, Now: func() time.Time { return start }})
	var out bytes.Buffer
	w := &ProgressWriter{W: &out, P: p}
	for _, chunk := range []string{"abc", "defgh", ""} {
		if _, err := w.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	if out.String() != "abcdefgh" || p.n != 8 {
		t.Fatalf("writer passed %q and counted %d, want abcdefgh and 8", out.String(), p.n)
	}
	r := &ProgressReader{R: io.LimitReader(strings.NewReader(strings.Repeat("z", 5000)), 4096), P: p}
	got, err := io.ReadAll(r)
	if err != nil || len(got) != 4096 || p.n != 8+4096 {
		t.Fatalf("reader passed %d bytes (%v) and the count is %d, want 4096 and %d", len(got), err, p.n, 8+4096)
	}
}

func TestShowProgress(t *testing.T) {
	var buf bytes.Buffer
	if ShowProgress(&buf, &buf, false) {
		t.Error("progress shown on buffers")
	}
}

// TestProgressFinish: a failed run erases the line and passes its error
// through; a successful one draws the final state and ends the line; a
// hidden progress only passes the error through.
func TestProgressFinish(t *testing.T) {
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	boom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		err     error
		wantEnd string
	}{
		{"failed", boom, "\r"},
		{"done", nil, "\n"},
	} {
		var buf bytes.Buffer
		p := NewProgress(&buf, true, ProgressOptions{Label: "x", Total: 10, Now: func() time.Time { return start }})
		p.Set(5)
		if err := p.Finish(tc.err); err != tc.err {
			t.Errorf("%s: Finish returned %v, want %v", tc.name, err, tc.err)
		}
		out := buf.String()
		if !strings.HasSuffix(out, tc.wantEnd) {
			t.Errorf("%s: output %q does not end in %q", tc.name, out, tc.wantEnd)
		}
		if tc.err != nil && strings.TrimSpace(out[strings.LastIndex(out[:len(out)-1], "\r"):]) != "" {
			t.Errorf("%s: line not erased: %q", tc.name, out)
		}
	}
	var hidden *Progress
	if err := hidden.Finish(boom); err != boom {
		t.Errorf("hidden Finish returned %v", err)
	}
	if err := hidden.Finish(nil); err != nil {
		t.Errorf("hidden Finish(nil) returned %v", err)
	}
}
