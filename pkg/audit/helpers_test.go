package audit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// baseTime is the time of testEvent(1); each later sequence is 1.5 s later.
var baseTime = time.Date(2026, 4, 28, 3, 14, 15, 0, time.UTC)

// testEvent returns a deterministic event for seq, so that a log of the
// same sequences is the same bytes however it was written.
func testEvent(seq uint64) Event {
	ops := []string{OpEncodeStore, OpEncodeStoreRaw, OpDecayTick, OpSetMode, OpForget}
	id := fmt.Sprintf("0190f5d2-8c4e-7a1b-9c3d-%012x", seq)
	return Event{
		Sequence:   seq,
		Time:       baseTime.Add(time.Duration(seq) * 1500 * time.Millisecond),
		Operation:  ops[seq%uint64(len(ops))],
		RecordIDs:  []string{id},
		StoreTypes: []string{"episodic"},
		Summary:    []byte(fmt.Sprintf(`{"record_id":%q,"store":"episodic","associations_created":%d}`, id, seq%3)),
	}
}

func testEvents(from, to uint64) []Event {
	var evs []Event
	for s := from; s <= to; s++ {
		evs = append(evs, testEvent(s))
	}
	return evs
}

// render returns the log bytes for events appended to a log whose head is
// prev, and the new head.
func render(t testing.TB, prev string, events ...Event) ([]byte, string) {
	t.Helper()
	enc := newEncoder()
	var out []byte
	for i := range events {
		body, err := enc.appendBody(nil, &events[i])
		if err != nil {
			t.Fatalf("render event %d: %v", events[i].Sequence, err)
		}
		out, prev = appendLine(out, body, prev)
	}
	return out, prev
}

// referenceLog returns the bytes of a log holding testEvent(1..n).
func referenceLog(t testing.TB, n uint64) []byte {
	t.Helper()
	b, _ := render(t, GenesisHash, testEvents(1, n)...)
	return b
}

func openT(t testing.TB, path string, opts Options) *Log {
	t.Helper()
	l, err := Open(path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func appendT(t testing.TB, l *Log, events ...Event) {
	t.Helper()
	if err := l.Append(events...); err != nil {
		t.Fatalf("Append %d..: %v", events[0].Sequence, err)
	}
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func logPath(t testing.TB) string {
	return filepath.Join(t.TempDir(), "audit.jsonl")
}

// wantBroken checks that err is a *BrokenError with the given line, fault
// and reason.
func wantBroken(t testing.TB, err error, line int, fault Fault, reason string) *BrokenError {
	t.Helper()
	be, ok := errors.AsType[*BrokenError](err)
	if !ok {
		t.Fatalf("error = %v (%T), want *BrokenError", err, err)
	}
	if be.Line != line || be.Fault != fault || be.Reason != reason {
		t.Fatalf("broken at line %d, %s, %q; want line %d, %s, %q", be.Line, be.Fault, be.Reason, line, fault, reason)
	}
	if got, want := errors.Is(err, ErrTorn), fault == FaultTorn; got != want {
		t.Errorf("errors.Is(err, ErrTorn) = %v, want %v", got, want)
	}
	if got, want := errors.Is(err, ErrBroken), fault != FaultTorn; got != want {
		t.Errorf("errors.Is(err, ErrBroken) = %v, want %v", got, want)
	}
	return be
}
