package audit

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the testdata fixtures")

// fixture is a log file under testdata and what verifying it must report.
type fixture struct {
	name    string
	data    []byte
	line    int // 0: the log verifies
	fault   Fault
	reason  string
	entries uint64 // entries verified (before the broken line)
}

// fixtures builds one log per verifier outcome from three valid entries.
// The files under testdata are these bytes; run the tests with -update to
// rewrite them after a deliberate change.
func fixtures(t testing.TB) []fixture {
	t.Helper()
	evs := testEvents(1, 4)
	l1, h1 := render(t, GenesisHash, evs[0])
	l2, h2 := render(t, h1, evs[1])
	l3, _ := render(t, h2, evs[2])
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	edit := func(line []byte, old, new string) []byte {
		if !bytes.Contains(line, []byte(old)) {
			t.Fatalf("fixture edit: %q not in %s", old, line)
		}
		return bytes.Replace(line, []byte(old), []byte(new), 1)
	}
	gap, _ := render(t, h2, evs[3])
	repeat, _ := render(t, h2, evs[1])
	wrongPrev, _ := render(t, h1, evs[2])
	notGenesis, _ := render(t, h2, evs[0])
	h2tampered := entryHash(bytes.TrimSuffix(edit(l2, `"associations_created":2`, `"associations_created":1`), []byte("\n")))
	bad := func(name string, data []byte, line int, fault Fault, reason string) fixture {
		return fixture{name: name, data: data, line: line, fault: fault, reason: reason, entries: uint64(line - 1)}
	}
	nc := FaultNonCanonical

	return []fixture{
		{name: "valid", data: cat(l1, l2, l3), entries: 3},
		{name: "empty", data: nil, entries: 0},
		bad("blank_line", cat(l1, []byte("\n"), l2), 2, FaultBlank, "blank line"),
		bad("whitespace_line", cat(l1, []byte(" \t\r\n"), l2), 2, FaultBlank, "blank line"),
		bad("trailing_blank_line", cat(l1, l2, l3, []byte("\n")), 4, FaultBlank, "blank line"),
		bad("invalid_json", cat(l1, l2[:40], []byte("\n"), l3), 2, FaultSyntax, "invalid JSON"),
		bad("not_object", []byte("[1,2,3]\n"), 1, FaultSyntax, "invalid JSON: not an object"),
		bad("data_after_object", cat(l1, edit(l2, "}\n", "} {}\n")), 2, FaultSyntax, "invalid JSON: data after the object"),
		bad("wrong_version", cat(l1, edit(l2, `"version":1,`, `"version":2,`), l3), 2, FaultVersion, "unsupported version 2"),
		bad("unknown_field", cat(l1, edit(l2, `,"entry_hash"`, `,"note":"hi","entry_hash"`), l3), 2, nc, `unknown field "note"`),
		bad("duplicate_field", cat(l1, edit(l2, `,"record_ids"`, `,"operation":"lifecycle.forget","record_ids"`), l3), 2, nc, `duplicate field "operation"`),
		bad("reordered_fields", cat(l1, edit(l2, `"record_ids":["0190f5d2-8c4e-7a1b-9c3d-000000000002"],"store_types":["episodic"]`, `"store_types":["episodic"],"record_ids":["0190f5d2-8c4e-7a1b-9c3d-000000000002"]`), l3), 2, nc, `field "record_ids" out of order`),
		bad("missing_field", cat(l1, edit(l2, `,"store_types":["episodic"]`, ``), l3), 2, nc, `missing field "store_types"`),
		bad("whitespace", cat(l1, edit(l2, `{"version":1,`, `{"version": 1,`), l3), 2, nc, "non-canonical encoding at byte 11"),
		bad("noninteger_sequence", cat(l1, edit(l2, `"sequence":2,`, `"sequence":2.0,`), l3), 2, nc, "sequence is not an unsigned integer"),
		bad("timestamp_offset", cat(l1, edit(l2, `18Z"`, `18+00:00"`), l3), 2, nc, "non-canonical encoding at byte 58"),
		bad("string_escape", cat(l1, edit(l2, `"lifecycle.decay_tick"`, `"lifecycle\u002edecay_tick"`), l3), 2, nc, "non-canonical encoding at byte 83"),
		bad("duplicate_summary_key", cat(l1, edit(l2, `{"associations_created":2,`, `{"store":"episodic","associations_created":2,`), l3), 2, nc, "non-canonical encoding at byte 189"),
		bad("unsorted_summary_keys", cat(l1, edit(edit(l2, `"associations_created":2,`, ``), `"store":"episodic"}`, `"store":"episodic","associations_created":2}`), l3), 2, nc, "non-canonical encoding at byte 189"),
		bad("crlf", cat(edit(l1, "}\n", "}\r\n"), l2), 1, nc, "non-canonical encoding at byte 441"),
		bad("uppercase_hash", cat(l1, edit(l2, `"entry_hash":"`+h2, `"entry_hash":"`+strings.ToUpper(h2)), l3), 2, nc, "entry_hash is not 64 lowercase hex digits"),
		bad("wrong_type", cat(l1, edit(l2, `"record_ids":["0190f5d2-8c4e-7a1b-9c3d-000000000002"]`, `"record_ids":"0190f5d2-8c4e-7a1b-9c3d-000000000002"`), l3), 2, nc, "record_ids is not an array of strings"),
		bad("summary_not_object", cat(l1, edit(l2, `"summary":{"associations_created":2,"record_id":"0190f5d2-8c4e-7a1b-9c3d-000000000002","store":"episodic"}`, `"summary":null`), l3), 2, nc, "summary is not an object"),
		bad("empty_operation", cat(l1, edit(l2, `"lifecycle.decay_tick"`, `""`), l3), 2, nc, "empty operation"),
		bad("deleted_line", cat(l1, l3), 2, FaultSequence, "sequence gap: expected 2, got 3"),
		bad("sequence_gap", cat(l1, l2, gap), 3, FaultSequence, "sequence gap: expected 3, got 4"),
		bad("sequence_repeat", cat(l1, l2, repeat), 3, FaultSequence, "sequence repeat: expected 3, got 2"),
		bad("prev_hash_mismatch", cat(l1, l2, wrongPrev), 3, FaultPrevHash, fmt.Sprintf("prev_hash mismatch: expected %s, got %s", h2, h1)),
		bad("genesis_mismatch", notGenesis, 1, FaultPrevHash, fmt.Sprintf("prev_hash mismatch: expected %s, got %s", GenesisHash, h2)),
		bad("entry_hash_mismatch", cat(l1, edit(l2, `"associations_created":2`, `"associations_created":1`), l3), 2, FaultEntryHash, fmt.Sprintf("entry_hash mismatch: stored %s, computed %s", h2, h2tampered)),
		bad("torn", cat(l1, l2, l3[:50]), 3, FaultTorn, "torn final line: 50 bytes without a newline"),
		bad("torn_first_line", l1[:len(l1)-1], 1, FaultTorn, fmt.Sprintf("torn final line: %d bytes without a newline", len(l1)-1)),
	}
}

func TestFixtures(t *testing.T) {
	dir := filepath.Join("testdata", "fixtures")
	fxs := fixtures(t)
	if *update {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, fx := range fxs {
			if err := os.WriteFile(filepath.Join(dir, fx.name+".jsonl"), fx.data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(fxs) {
		t.Errorf("%d fixture files in %s, want %d (run with -update)", len(files), dir, len(fxs))
	}
	for _, fx := range fxs {
		t.Run(fx.name, func(t *testing.T) {
			path := filepath.Join(dir, fx.name+".jsonl")
			if got := readFile(t, path); !bytes.Equal(got, fx.data) {
				t.Fatalf("%s differs from its generator (run with -update)", path)
			}
			rep, err := VerifyFile(path)
			if fx.line == 0 {
				if err != nil {
					t.Fatalf("VerifyFile: %v", err)
				}
			} else {
				be := wantBroken(t, err, fx.line, fx.fault, fx.reason)
				if be.Path != path || be.Sequence != uint64(fx.line) {
					t.Errorf("BrokenError path %q sequence %d, want %q %d", be.Path, be.Sequence, path, fx.line)
				}
				if want := fmt.Sprintf("audit log %s line %d: %s", path, fx.line, fx.reason); err.Error() != want {
					t.Errorf("message %q, want %q", err, want)
				}
			}
			if rep.Path != path || rep.Entries != fx.entries || rep.LastSequence != fx.entries {
				t.Errorf("report %+v, want %d entries", rep, fx.entries)
			}
			// Verify on a reader agrees with VerifyFile.
			rep2, err2 := Verify(bytes.NewReader(fx.data))
			rep2.Path = rep.Path
			if rep2 != rep || (err == nil) != (err2 == nil) {
				t.Errorf("Verify = %+v, %v; VerifyFile = %+v, %v", rep2, err2, rep, err)
			}
		})
	}
}

func TestVerifyMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none", "audit.jsonl")
	rep, err := VerifyFile(path)
	want := Report{Path: path, HeadHash: GenesisHash}
	if err != nil || rep != want {
		t.Fatalf("VerifyFile = %+v, %v; want %+v", rep, err, want)
	}
}

func TestVerifyReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(bytes.NewReader(referenceLog(t, 2)), iotestErrReader{boom})
	rep, err := Verify(r)
	if !errors.Is(err, boom) || errors.Is(err, ErrBroken) || rep.Entries != 2 {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
}

type iotestErrReader struct{ err error }

func (r iotestErrReader) Read([]byte) (int, error) { return 0, r.err }

func TestVerifyLongLine(t *testing.T) {
	// A line of MaxLineSize+1 bytes is refused without being kept whole.
	long := io.MultiReader(
		bytes.NewReader(referenceLog(t, 1)),
		strings.NewReader("{"),
		io.LimitReader(repeatReader(' '), MaxLineSize-1),
		strings.NewReader("}\n"),
	)
	rep, err := Verify(long)
	wantBroken(t, err, 2, FaultNonCanonical, fmt.Sprintf("line longer than %d bytes", MaxLineSize))
	if rep.Entries != 1 {
		t.Fatalf("entries %d, want 1", rep.Entries)
	}
	// One byte less is read and judged on its content.
	short := io.MultiReader(strings.NewReader("["), io.LimitReader(repeatReader(' '), MaxLineSize-2), strings.NewReader("]\n"))
	_, err = Verify(short)
	wantBroken(t, err, 1, FaultSyntax, "invalid JSON: not an object")
}

type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = byte(r)
	for n := 1; n < len(p); n *= 2 {
		copy(p[n:], p[:n])
	}
	return len(p), nil
}

// TestVerifyWhileAppending checks a log while another writer appends to it:
// every result is a valid prefix, at worst with a torn final line, never
// broken.
func TestVerifyWhileAppending(t *testing.T) {
	path := logPath(t)
	l := openT(t, path, Options{})
	const total = 200
	done := make(chan error, 1)
	go func() {
		for s := uint64(1); s <= total; s += 4 {
			if err := l.Append(testEvents(s, s+3)...); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	var last uint64
	for i := 0; ; i++ {
		rep, err := VerifyFile(path)
		if err != nil && !errors.Is(err, ErrTorn) {
			t.Fatalf("VerifyFile during appends: %v", err)
		}
		if errors.Is(err, ErrBroken) {
			t.Fatalf("torn error also matches ErrBroken: %v", err)
		}
		if rep.Entries < last {
			t.Fatalf("entries went back from %d to %d", last, rep.Entries)
		}
		last = rep.Entries
		if last == total {
			break
		}
		if i > 1_000_000 {
			t.Fatalf("appends did not finish; %d entries", last)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
