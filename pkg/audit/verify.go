package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"time"
)

// Report describes a verified log, or the verified part before a failure.
type Report struct {
	// Path is the file verified; empty for Verify.
	Path string
	// Entries is the number of verified entries.
	Entries uint64
	// LastSequence is the sequence of the last verified entry, 0 if none.
	// In a verified log it equals Entries.
	LastSequence uint64
	// HeadHash is the entry_hash of the last verified entry, GenesisHash
	// if none.
	HeadHash string
}

// Fault classifies why a line does not verify.
type Fault string

// The faults, in the order the verifier checks for them on a line.
const (
	// FaultTorn: the final line has no LF. Only this fault matches ErrTorn;
	// all others match ErrBroken.
	FaultTorn Fault = "torn"
	// FaultBlank: the line is empty or only spaces, tabs and CRs.
	FaultBlank Fault = "blank"
	// FaultSyntax: the line is not one JSON object.
	FaultSyntax Fault = "syntax"
	// FaultVersion: the version member is not 1.
	FaultVersion Fault = "version"
	// FaultNonCanonical: the line is a JSON object but not the canonical
	// rendering of an entry: unknown, duplicate, missing or reordered
	// members, a member of the wrong type or form, or any other byte that
	// differs from the rendering of the parsed values.
	FaultNonCanonical Fault = "noncanonical"
	// FaultSequence: the sequence is not one more than the previous line's.
	FaultSequence Fault = "sequence"
	// FaultPrevHash: prev_hash is not the previous line's entry_hash.
	FaultPrevHash Fault = "prev_hash"
	// FaultEntryHash: entry_hash is not the hash of the line.
	FaultEntryHash Fault = "entry_hash"
)

// BrokenError reports the first line of a log that does not verify.
type BrokenError struct {
	// Path is the file, when known.
	Path string
	// Line is the 1-based line number.
	Line int
	// Sequence is the sequence the line should carry: one more than the
	// last verified entry's.
	Sequence uint64
	// Fault classifies the failure.
	Fault Fault
	// Reason says what is wrong, for people.
	Reason string
}

func (e *BrokenError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("audit log line %d: %s", e.Line, e.Reason)
	}
	return fmt.Sprintf("audit log %s line %d: %s", e.Path, e.Line, e.Reason)
}

// Is makes a torn final line match ErrTorn and every other fault match
// ErrBroken.
func (e *BrokenError) Is(target error) bool {
	if e.Fault == FaultTorn {
		return target == ErrTorn
	}
	return target == ErrBroken
}

// Verify reads a whole log from r and verifies every line and the chain.
// On failure it returns the Report of the entries before the first bad
// line and a *BrokenError; any other error is a read error. A final line
// without LF is reported as FaultTorn (ErrTorn), not as broken.
func Verify(r io.Reader) (Report, error) {
	return verify(r, nil)
}

// VerifyFile verifies the log at path like Verify, reading only up to the
// file's size when it is opened, so that it can check a log another
// process is appending to. A missing file is a valid empty log.
func VerifyFile(path string) (Report, error) {
	empty := Report{Path: path, HeadHash: GenesisHash}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return empty, nil
	}
	if err != nil {
		return empty, fmt.Errorf("open audit log: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return empty, fmt.Errorf("stat audit log: %w", err)
	}
	var r io.Reader = f
	if st.Mode().IsRegular() {
		r = io.NewSectionReader(f, 0, st.Size())
	}
	rep, err := verify(r, nil)
	rep.Path = path
	if be, ok := errors.AsType[*BrokenError](err); ok {
		be.Path = path
	}
	return rep, err
}

// entry is a parsed line that is the canonical rendering of its values.
type entry struct {
	ev        Event // Summary holds the canonical bytes
	prevHash  string
	entryHash string
}

func verify(r io.Reader, visit func(line []byte, e *entry)) (Report, error) {
	rep := Report{HeadHash: GenesisHash}
	br := bufio.NewReaderSize(r, 64<<10)
	enc := newEncoder()
	var buf []byte
	for n := 1; ; n++ {
		var size int
		var complete bool
		var err error
		buf, size, complete, err = readLine(br, buf[:0])
		if err != nil && err != io.EOF {
			return rep, fmt.Errorf("read audit log: %w", err)
		}
		broken := func(f Fault, reason string) (Report, error) {
			return rep, &BrokenError{Line: n, Sequence: rep.LastSequence + 1, Fault: f, Reason: reason}
		}
		if !complete {
			if size == 0 {
				return rep, nil
			}
			return broken(FaultTorn, fmt.Sprintf("torn final line: %d bytes without a newline", size))
		}
		if size-1 > MaxLineSize {
			return broken(FaultNonCanonical, fmt.Sprintf("line longer than %d bytes", MaxLineSize))
		}
		line := buf[:size-1]
		e, f, reason := parseLine(enc, line)
		if f != "" {
			return broken(f, reason)
		}
		if f, reason := checkLink(rep.LastSequence, rep.HeadHash, &e); f != "" {
			return broken(f, reason)
		}
		if h := entryHash(line); h != e.entryHash {
			return broken(FaultEntryHash, fmt.Sprintf("entry_hash mismatch: stored %s, computed %s", e.entryHash, h))
		}
		if visit != nil {
			visit(line, &e)
		}
		rep.Entries++
		rep.LastSequence = e.ev.Sequence
		rep.HeadHash = e.entryHash
	}
}

// checkLink checks that e follows the entry with sequence prevSeq and hash
// prevHash (0 and GenesisHash for the first entry).
func checkLink(prevSeq uint64, prevHash string, e *entry) (Fault, string) {
	if want := prevSeq + 1; e.ev.Sequence != want {
		kind := "gap"
		if e.ev.Sequence < want {
			kind = "repeat"
		}
		return FaultSequence, fmt.Sprintf("sequence %s: expected %d, got %d", kind, want, e.ev.Sequence)
	}
	if e.prevHash != prevHash {
		return FaultPrevHash, fmt.Sprintf("prev_hash mismatch: expected %s, got %s", prevHash, e.prevHash)
	}
	return "", ""
}

// readLine reads one line into buf. size counts every byte read for the
// line, LF included; complete reports whether it ended with LF. Bytes
// beyond MaxLineSize+1 are counted but not kept.
func readLine(br *bufio.Reader, buf []byte) (_ []byte, size int, complete bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		size += len(chunk)
		if len(buf) <= MaxLineSize {
			buf = append(buf, chunk...)
		}
		switch err {
		case nil:
			return buf, size, true, nil
		case bufio.ErrBufferFull:
			continue
		default:
			return buf, size, false, err
		}
	}
}

// Member positions in a line.
const (
	mVersion = iota
	mSequence
	mTimestamp
	mOperation
	mRecordIDs
	mStoreTypes
	mSummary
	mPrevHash
	mEntryHash
	numMembers
)

func memberNames() [numMembers]string {
	return [numMembers]string{"version", "sequence", "timestamp", "operation", "record_ids", "store_types", "summary", "prev_hash", "entry_hash"}
}

func memberIndex(name string) int {
	for i, n := range memberNames() {
		if n == name {
			return i
		}
	}
	return -1
}

type member struct {
	key string
	raw json.RawMessage
}

// parseLine parses a line (without LF) and checks that it is the canonical
// rendering of its values. It does not check the chain or the hash. A
// non-empty Fault means the line is bad.
func parseLine(enc *encoder, line []byte) (entry, Fault, string) {
	var e entry
	if isBlank(line) {
		return e, FaultBlank, "blank line"
	}
	if e, ok := parseFast(enc, line); ok {
		return e, "", ""
	}
	members, f, reason := splitObject(line)
	if f != "" {
		return e, f, reason
	}
	for _, m := range members {
		if m.key == "version" {
			if string(m.raw) != "1" {
				return e, FaultVersion, "unsupported version " + clip(string(m.raw))
			}
			break
		}
	}

	var raws [numMembers]json.RawMessage
	var seen [numMembers]bool
	next := 0
	for _, m := range members {
		i := memberIndex(m.key)
		switch {
		case i < 0:
			return e, FaultNonCanonical, fmt.Sprintf("unknown field %q", clip(m.key))
		case seen[i]:
			return e, FaultNonCanonical, fmt.Sprintf("duplicate field %q", m.key)
		case i < next:
			return e, FaultNonCanonical, fmt.Sprintf("field %q out of order", m.key)
		}
		seen[i] = true
		raws[i] = m.raw
		next = i + 1
	}
	for i, ok := range seen {
		if !ok {
			return e, FaultNonCanonical, fmt.Sprintf("missing field %q", memberNames()[i])
		}
	}

	bad := func(reason string) (entry, Fault, string) { return e, FaultNonCanonical, reason }
	seq, err := strconv.ParseUint(string(raws[mSequence]), 10, 64)
	if err != nil {
		return bad("sequence is not an unsigned integer")
	}
	var ts string
	if json.Unmarshal(raws[mTimestamp], &ts) != nil || raws[mTimestamp][0] != '"' {
		return bad("timestamp is not a string")
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return bad("timestamp is not RFC 3339")
	}
	var op string
	if json.Unmarshal(raws[mOperation], &op) != nil || raws[mOperation][0] != '"' {
		return bad("operation is not a string")
	}
	var ids, stores []string
	if json.Unmarshal(raws[mRecordIDs], &ids) != nil || raws[mRecordIDs][0] != '[' {
		return bad("record_ids is not an array of strings")
	}
	if json.Unmarshal(raws[mStoreTypes], &stores) != nil || raws[mStoreTypes][0] != '[' {
		return bad("store_types is not an array of strings")
	}
	if raws[mSummary][0] != '{' {
		return bad("summary is not an object")
	}
	var prev, stored string
	if json.Unmarshal(raws[mPrevHash], &prev) != nil || !isHash(prev) {
		return bad("prev_hash is not 64 lowercase hex digits")
	}
	if json.Unmarshal(raws[mEntryHash], &stored) != nil || !isHash(stored) {
		return bad("entry_hash is not 64 lowercase hex digits")
	}
	e = entry{
		ev: Event{
			Sequence:   seq,
			Time:       t,
			Operation:  op,
			RecordIDs:  ids,
			StoreTypes: stores,
			Summary:    raws[mSummary],
		},
		prevHash:  prev,
		entryHash: stored,
	}
	if reason := checkRendering(enc, line, &e); reason != "" {
		return bad(reason)
	}
	return e, "", ""
}

// checkRendering renders e and compares the result with line. It returns
// why they differ, or "" if they are the same.
func checkRendering(enc *encoder, line []byte, e *entry) string {
	body, err := enc.appendBody(make([]byte, 0, len(line)), &e.ev)
	if err != nil {
		return err.Error()
	}
	want := append(body, e.prevHash...)
	want = append(want, '"')
	want = append(want, entryMember...)
	want = append(want, e.entryHash...)
	want = append(want, `"}`...)
	if !bytes.Equal(want, line) {
		return fmt.Sprintf("non-canonical encoding at byte %d", firstDiff(want, line))
	}
	return ""
}

// wireEntry receives a line in parseFast.
type wireEntry struct {
	Version    json.RawMessage `json:"version"`
	Sequence   json.RawMessage `json:"sequence"`
	Timestamp  string          `json:"timestamp"`
	Operation  string          `json:"operation"`
	RecordIDs  []string        `json:"record_ids"`
	StoreTypes []string        `json:"store_types"`
	Summary    json.RawMessage `json:"summary"`
	PrevHash   string          `json:"prev_hash"`
	EntryHash  string          `json:"entry_hash"`
}

// parseFast parses a line with a single json.Unmarshal. It only ever
// accepts: a line is good if it equals the rendering of the values read
// from it, however leniently they were read, because that rendering is
// canonical. When it returns false, parseLine's stricter reading finds out
// what is wrong.
func parseFast(enc *encoder, line []byte) (entry, bool) {
	var w wireEntry
	if json.Unmarshal(line, &w) != nil || string(w.Version) != "1" || !isHash(w.PrevHash) || !isHash(w.EntryHash) {
		return entry{}, false
	}
	seq, err := strconv.ParseUint(string(w.Sequence), 10, 64)
	if err != nil {
		return entry{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, w.Timestamp)
	if err != nil {
		return entry{}, false
	}
	e := entry{
		ev: Event{
			Sequence:   seq,
			Time:       t,
			Operation:  w.Operation,
			RecordIDs:  w.RecordIDs,
			StoreTypes: w.StoreTypes,
			Summary:    w.Summary,
		},
		prevHash:  w.PrevHash,
		entryHash: w.EntryHash,
	}
	return e, checkRendering(enc, line, &e) == ""
}

// splitObject parses line as one JSON object and returns its members in
// order, duplicates included.
func splitObject(line []byte) ([]member, Fault, string) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, FaultSyntax, "invalid JSON"
	}
	if tok != json.Delim('{') {
		return nil, FaultSyntax, "invalid JSON: not an object"
	}
	var members []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, FaultSyntax, "invalid JSON"
		}
		key, ok := tok.(string)
		if !ok {
			return nil, FaultSyntax, "invalid JSON"
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, FaultSyntax, "invalid JSON"
		}
		members = append(members, member{key: key, raw: raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, FaultSyntax, "invalid JSON"
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, FaultSyntax, "invalid JSON: data after the object"
	}
	return members, "", ""
}

func isBlank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

func firstDiff(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// clip shortens s for an error message.
func clip(s string) string {
	const max = 40
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}
