package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"memsvc.dev/memsvc/internal/fsutil"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nested", "dir", "audit.jsonl")
	l := openT(t, path, Options{})
	if seq, head := l.Last(); seq != 0 || head != GenesisHash {
		t.Fatalf("new log Last = %d %s", seq, head)
	}
	appendT(t, l, testEvent(1))
	appendT(t, l, testEvents(2, 10)...)
	appendT(t, l) // nothing to do

	// Several goroutines append; each takes the next sequence from Last
	// and retries when another goroutine got there first.
	const workers, perWorker = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Go(func() {
			for done, tries := 0, 0; done < perWorker; tries++ {
				if tries > 10_000 {
					errs <- errors.New("worker starved")
					return
				}
				seq, _ := l.Last()
				err := l.Append(testEvent(seq+1), testEvent(seq+2))
				switch {
				case err == nil:
					done++
				case !errors.Is(err, ErrSequence):
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	const afterWorkers = 10 + workers*perWorker*2
	seq, head := l.Last()
	if seq != afterWorkers {
		t.Fatalf("Last = %d, want %d", seq, afterWorkers)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	for _, full := range []bool{false, true} {
		l2 := openT(t, path, Options{VerifyFull: full})
		if s, h := l2.Last(); s != seq || h != head {
			t.Fatalf("reopened (full=%v) Last = %d %s, want %d %s", full, s, h, seq, head)
		}
		next := seq + 1
		appendT(t, l2, testEvents(next, next+4)...)
		seq, head = l2.Last()
		if err := l2.Close(); err != nil {
			t.Fatal(err)
		}
	}

	rep, err := VerifyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := Report{Path: path, Entries: seq, LastSequence: seq, HeadHash: head}
	if rep != want {
		t.Fatalf("VerifyFile = %+v, want %+v", rep, want)
	}
	if got := readFile(t, path); !bytes.Equal(got, referenceLog(t, seq)) {
		t.Fatal("log differs from the reference rendering of the same events")
	}
}

func TestOpenCreates(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	path := filepath.Join(dir, "audit.jsonl")
	openT(t, path, Options{})
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != 0 || st.Mode().Perm() != 0o600 {
		t.Fatalf("new file: size %d mode %v", st.Size(), st.Mode())
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("new directory: %v, %v", st.Mode(), err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open("", Options{}); err == nil {
		t.Error("Open with empty path: no error")
	}
	if _, err := Open(dir, Options{}); err == nil {
		t.Error("Open of a directory: no error")
	}
	blocker := filepath.Join(dir, "file")
	writeFile(t, blocker, nil)
	if _, err := Open(filepath.Join(blocker, "audit.jsonl"), Options{}); err == nil {
		t.Error("Open under a file: no error")
	}
}

func TestAppendSequenceErrors(t *testing.T) {
	path := logPath(t)
	l := openT(t, path, Options{})
	for _, c := range []struct {
		name      string
		events    []Event
		want, got uint64
	}{
		{"zero on empty log", []Event{testEvent(0)}, 1, 0},
		{"gap on empty log", []Event{testEvent(2)}, 1, 2},
		{"gap inside batch", []Event{testEvent(1), testEvent(3)}, 2, 3},
		{"repeat inside batch", []Event{testEvent(1), testEvent(1)}, 2, 1},
	} {
		err := l.Append(c.events...)
		var se *SequenceError
		if !errors.As(err, &se) || !errors.Is(err, ErrSequence) || se.Want != c.want || se.Got != c.got {
			t.Errorf("%s: err = %v, want SequenceError want %d got %d", c.name, err, c.want, c.got)
		}
	}
	appendT(t, l, testEvents(1, 3)...)
	before := readFile(t, path)
	for _, c := range []struct {
		events []Event
		msg    string
	}{
		{[]Event{testEvent(3)}, "audit event sequence 3 repeats an entry: next is 4"},
		{[]Event{testEvent(1), testEvent(2)}, "audit event sequence 1 repeats an entry: next is 4"},
		{[]Event{testEvent(5)}, "audit event sequence 5 leaves a gap: next is 4"},
		{[]Event{testEvent(4), testEvent(5), testEvent(7)}, "audit event sequence 7 leaves a gap: next is 6"},
	} {
		if err := l.Append(c.events...); !errors.Is(err, ErrSequence) || err.Error() != c.msg {
			t.Errorf("Append %d..: %v, want %q", c.events[0].Sequence, err, c.msg)
		}
	}
	if got := readFile(t, path); !bytes.Equal(got, before) {
		t.Fatal("a refused Append changed the file")
	}
	if seq, _ := l.Last(); seq != 3 {
		t.Fatalf("Last = %d after refused appends, want 3", seq)
	}
	appendT(t, l, testEvent(4))
	if rep, err := VerifyFile(path); err != nil || rep.Entries != 4 {
		t.Fatalf("VerifyFile = %+v, %v", rep, err)
	}
}

func TestAppendInvalidEvent(t *testing.T) {
	path := logPath(t)
	l := openT(t, path, Options{})
	appendT(t, l, testEvent(1))
	before := readFile(t, path)
	mod := func(f func(*Event)) Event {
		ev := testEvent(2)
		f(&ev)
		return ev
	}
	for name, ev := range map[string]Event{
		"zero time":           mod(func(e *Event) { e.Time = time.Time{} }),
		"year 10000":          mod(func(e *Event) { e.Time = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }),
		"empty operation":     mod(func(e *Event) { e.Operation = "" }),
		"invalid operation":   mod(func(e *Event) { e.Operation = "encode.\xff" }),
		"invalid record id":   mod(func(e *Event) { e.RecordIDs = []string{"ok", "\xc3"} }),
		"invalid store":       mod(func(e *Event) { e.StoreTypes = []string{"\xff"} }),
		"summary array":       mod(func(e *Event) { e.Summary = []byte(`[1]`) }),
		"summary syntax":      mod(func(e *Event) { e.Summary = []byte(`{"a":`) }),
		"summary two objects": mod(func(e *Event) { e.Summary = []byte(`{}{}`) }),
		"summary invalid utf8": mod(func(e *Event) {
			e.Summary = []byte("{\"a\":\"\xff\"}")
		}),
		"line too long": mod(func(e *Event) {
			e.RecordIDs = []string{strings.Repeat("x", MaxLineSize)}
		}),
	} {
		// The bad event comes second, so the good first one must not be
		// written either.
		err := l.Append(testEvent(2), func() Event { ev.Sequence = 3; return ev }())
		if !errors.Is(err, ErrInvalidEvent) {
			t.Errorf("%s: err = %v, want ErrInvalidEvent", name, err)
		}
	}
	if got := readFile(t, path); !bytes.Equal(got, before) {
		t.Fatal("a refused Append changed the file")
	}
	if seq, _ := l.Last(); seq != 1 {
		t.Fatalf("Last = %d, want 1", seq)
	}
}

func TestAppendDefaults(t *testing.T) {
	for _, c := range []struct {
		name    string
		summary json.RawMessage
	}{{"nil", nil}, {"empty", json.RawMessage{}}, {"null", json.RawMessage("null")}, {"spaces", json.RawMessage(" {} ")}} {
		path := logPath(t)
		l := openT(t, path, Options{})
		appendT(t, l, Event{Sequence: 1, Time: baseTime, Operation: OpSetMode, Summary: c.summary})
		b := readFile(t, path)
		want := `{"version":1,"sequence":1,"timestamp":"2026-04-28T03:14:15Z","operation":"lifecycle.set_mode","record_ids":[],"store_types":[],"summary":{},"prev_hash":"` + GenesisHash + `","entry_hash":"`
		if !strings.HasPrefix(string(b), want) {
			t.Errorf("%s summary: line %s", c.name, b)
		}
	}
}

func TestClose(t *testing.T) {
	path := logPath(t)
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	appendT(t, l, testEvent(1))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := l.Append(testEvent(2)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v", err)
	}
	if l.Path() != path {
		t.Fatalf("Path = %q", l.Path())
	}
}

func TestOpenTornTail(t *testing.T) {
	full := referenceLog(t, 4)
	three := referenceLog(t, 3)
	partial := full[len(three) : len(full)-30]
	for _, c := range []struct {
		name string
		kept []byte // complete lines
		torn []byte
	}{
		{"partial entry", three, partial},
		{"partial first entry", nil, full[:17]},
		{"brace only", three, []byte("{")},
		{"entry without newline", three, full[len(three) : len(full)-1]},
		{"zeros", three, make([]byte, 4096)},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := logPath(t)
			writeFile(t, path, append(bytes.Clone(c.kept), c.torn...))
			kept := uint64(bytes.Count(c.kept, []byte("\n")))

			// Without Open, the verifier reports the torn line, distinct
			// from a broken log, and the report covers the lines before.
			rep, err := VerifyFile(path)
			wantBroken(t, err, int(kept)+1, FaultTorn, fmt.Sprintf("torn final line: %d bytes without a newline", len(c.torn)))
			if rep.Entries != kept {
				t.Fatalf("report %+v, want %d entries", rep, kept)
			}

			for _, full := range []bool{false, true} {
				var logs bytes.Buffer
				logger := slog.New(slog.NewTextHandler(&logs, nil))
				l := openT(t, path, Options{Logger: logger, VerifyFull: full})
				if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "torn") {
					t.Fatalf("no warning logged: %q", logs.String())
				}
				if got := readFile(t, path); !bytes.Equal(got, c.kept) {
					t.Fatalf("after Open the file is %q, want the complete lines", got)
				}
				if seq, _ := l.Last(); seq != kept {
					t.Fatalf("Last = %d, want %d", seq, kept)
				}
				l.Close()
				writeFile(t, path, append(bytes.Clone(c.kept), c.torn...))
			}

			l := openT(t, path, Options{})
			appendT(t, l, testEvents(kept+1, 5)...)
			if got := readFile(t, path); !bytes.Equal(got, referenceLog(t, 5)) {
				t.Fatal("the chain did not continue from the complete lines")
			}
		})
	}
}

func TestOpenRefusesForeignTail(t *testing.T) {
	three := referenceLog(t, 3)
	for _, c := range []struct {
		name   string
		data   []byte
		braces int // '{' bytes appended to data
	}{
		{"not an entry", append(bytes.Clone(three), "hello"...), 0},
		{"text file", []byte("hello world"), 0},
		{"longer than a line", three, MaxLineSize + 1},
	} {
		path := logPath(t)
		writeFile(t, path, c.data)
		if c.braces > 0 {
			appendBraces(t, path, c.braces)
		}
		before := fileSum(t, path)
		_, err := Open(path, Options{})
		be, ok := errors.AsType[*BrokenError](err)
		if !ok || !errors.Is(err, ErrBroken) || errors.Is(err, ErrTorn) || be.Fault != FaultSyntax || !strings.Contains(be.Reason, "not truncating") {
			t.Errorf("%s: Open error %v", c.name, err)
		}
		if fileSum(t, path) != before {
			t.Errorf("%s: Open changed the file", c.name)
		}
	}
}

func appendBraces(t *testing.T, path string, n int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := bytes.Repeat([]byte("{"), 1<<20)
	for n > 0 {
		k := min(n, len(chunk))
		if _, err := f.Write(chunk[:k]); err != nil {
			t.Fatal(err)
		}
		n -= k
	}
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return [32]byte(h.Sum(nil))
}

func TestOpenBrokenLog(t *testing.T) {
	ref := referenceLog(t, 5)
	ls := bytes.SplitAfter(ref, []byte("\n"))[:5]
	tamper := func(i int) []byte {
		c := make([][]byte, len(ls))
		copy(c, ls)
		c[i] = bytes.Replace(c[i], []byte(`"store":"episodic"`), []byte(`"store":"semantic"`), 1)
		return bytes.Join(c, nil)
	}
	for _, c := range []struct {
		name   string
		data   []byte
		tailOK bool // passes the default tail check
		line   int
		fault  Fault
		reason string // prefix
	}{
		{"last line tampered", tamper(4), false, 5, FaultEntryHash, "entry_hash mismatch: stored "},
		{"second last line tampered", tamper(3), false, 4, FaultEntryHash, "entry_hash mismatch: stored "},
		{"deep line tampered", tamper(1), true, 2, FaultEntryHash, "entry_hash mismatch: stored "},
		{"blank final line", append(bytes.Clone(ref), '\n'), false, 6, FaultBlank, "blank line"},
		{"torn after a broken line", append(tamper(4), `{"vers`...), false, 5, FaultEntryHash, "entry_hash mismatch: stored "},
		{"single line not at genesis", ls[1], false, 1, FaultSequence, "sequence gap: expected 1, got 2"},
		{"lines swapped", bytes.Join([][]byte{ls[0], ls[1], ls[2], ls[4], ls[3]}, nil), false, 4, FaultSequence, "sequence gap: expected 4, got 5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := logPath(t)
			writeFile(t, path, c.data)
			for _, full := range []bool{false, true} {
				l, err := Open(path, Options{VerifyFull: full})
				if !full && c.tailOK {
					if err != nil {
						t.Fatalf("default Open: %v", err)
					}
					l.Close()
					continue
				}
				if err == nil {
					l.Close()
					t.Fatalf("Open(full=%v) accepted the log", full)
				}
				if !strings.HasPrefix(errReason(err), c.reason) {
					t.Fatalf("Open(full=%v): %v; want reason %q...", full, err, c.reason)
				}
				be := wantBroken(t, err, c.line, c.fault, errReason(err))
				if be.Path != path {
					t.Errorf("error path %q", be.Path)
				}
				if got := readFile(t, path); !bytes.Equal(got, c.data) {
					t.Fatal("a failed Open changed the file")
				}
			}
		})
	}
}

func errReason(err error) string {
	if be, ok := errors.AsType[*BrokenError](err); ok {
		return be.Reason
	}
	return ""
}

func TestOpenLocked(t *testing.T) {
	if !fsutil.CanLock {
		return // documented: no writer lock on this platform
	}
	path := logPath(t)
	l := openT(t, path, Options{})
	if _, err := Open(path, Options{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := openT(t, path, Options{})
	appendT(t, l2, testEvent(1))
}
