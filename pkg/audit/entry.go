package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode/utf8"
)

const (
	// Version is the entry format version written in every line.
	Version = 1

	// GenesisHash is the prev_hash of the first entry and the head of an
	// empty log.
	GenesisHash = "0000000000000000000000000000000000000000000000000000000000000000"

	// MaxLineSize is the largest line, without its LF, that the writer
	// produces and the verifier reads.
	MaxLineSize = 64 << 20
)

// The fixed parts of a line.
const (
	bodyStart   = `{"version":1,"sequence":`
	prevMember  = `,"prev_hash":"`
	entryMember = `,"entry_hash":"`
	hashLen     = 64
	// hashTail is the length of the entry_hash member plus the closing
	// brace: ,"entry_hash":"<64 hex>"}
	hashTail = len(entryMember) + hashLen + len(`"}`)
)

// Event is one state change to be logged.
type Event struct {
	// Sequence is the entry's position in the log, assigned by the caller:
	// 1 for the first entry, then one more for each.
	Sequence uint64
	// Time is when the change was committed. It is written in UTC.
	Time time.Time
	// Operation names the change, normally one of the Op constants.
	Operation string
	// RecordIDs lists the records affected; nil is written as [].
	RecordIDs []string
	// StoreTypes lists the stores affected; nil is written as [].
	StoreTypes []string
	// Summary is a JSON object describing the change, never memory
	// content. Nil, empty or null is written as {}; anything else is
	// written in canonical form (sorted keys, no whitespace).
	Summary json.RawMessage
}

// Sentinel errors of the package.
var (
	// ErrBroken matches a *BrokenError for a line that does not verify.
	ErrBroken = errors.New("audit log broken")
	// ErrTorn matches a *BrokenError for a final line without its LF.
	ErrTorn = errors.New("audit log has a torn final line")
	// ErrSequence matches a *SequenceError.
	ErrSequence = errors.New("audit event out of sequence")
	// ErrInvalidEvent is returned by Append for an event that cannot be
	// written (no time, empty operation, invalid UTF-8, a summary that is
	// not a JSON object, a line over MaxLineSize).
	ErrInvalidEvent = errors.New("invalid audit event")
	// ErrClosed is returned by Append on a closed Log.
	ErrClosed = errors.New("audit log closed")
	// ErrLocked is returned by Open when another Log holds the file.
	ErrLocked = errors.New("audit log locked by another writer")
)

// encoder renders JSON strings and summaries by the rules in the package
// comment. It is not safe for concurrent use.
type encoder struct {
	scratch bytes.Buffer
	enc     *json.Encoder
}

func newEncoder() *encoder {
	e := &encoder{}
	e.enc = json.NewEncoder(&e.scratch)
	e.enc.SetEscapeHTML(false)
	return e
}

// appendValue appends the compact encoding of v, without the LF that
// json.Encoder adds.
func (e *encoder) appendValue(dst []byte, v any) ([]byte, error) {
	e.scratch.Reset()
	if err := e.enc.Encode(v); err != nil {
		return dst, err
	}
	b := e.scratch.Bytes()
	return append(dst, b[:len(b)-1]...), nil
}

// appendString appends s as a JSON string. s must be valid UTF-8.
func (e *encoder) appendString(dst []byte, s string) ([]byte, error) {
	if !utf8.ValidString(s) {
		return dst, errors.New("string is not valid UTF-8")
	}
	return e.appendValue(dst, s)
}

func (e *encoder) appendStrings(dst []byte, list []string) ([]byte, error) {
	dst = append(dst, '[')
	for i, s := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = e.appendString(dst, s); err != nil {
			return dst, fmt.Errorf("element %d: %w", i, err)
		}
	}
	return append(dst, ']'), nil
}

// appendSummary appends the canonical form of the JSON object raw.
func (e *encoder) appendSummary(dst []byte, raw []byte) ([]byte, error) {
	trimmed := bytes.Trim(raw, " \t\r\n")
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return append(dst, "{}"...), nil
	}
	if !utf8.Valid(trimmed) {
		return dst, errors.New("not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return dst, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return dst, errors.New("data after the object")
	}
	if m == nil {
		return append(dst, "{}"...), nil
	}
	return e.appendValue(dst, m)
}

// formatTime renders t as the timestamp member's value.
func formatTime(t time.Time) (string, error) {
	if t.IsZero() {
		return "", errors.New("no time")
	}
	u := t.UTC()
	if y := u.Year(); y < 1 || y > 9999 {
		return "", fmt.Errorf("year %d out of range", y)
	}
	return u.Format(time.RFC3339Nano), nil
}

// appendBody appends the chain-independent part of an entry's canonical
// form, everything before prev_hash's value:
// {"version":1, ... ,"summary":{...},"prev_hash":"
func (e *encoder) appendBody(dst []byte, ev *Event) ([]byte, error) {
	ts, err := formatTime(ev.Time)
	if err != nil {
		return dst, fmt.Errorf("time: %w", err)
	}
	if ev.Operation == "" {
		return dst, errors.New("empty operation")
	}
	// Escaping only lengthens strings: refuse early what cannot fit.
	n := len(ev.Operation) + len(ev.Summary)
	for _, s := range ev.RecordIDs {
		n += len(s)
	}
	for _, s := range ev.StoreTypes {
		n += len(s)
	}
	if n > MaxLineSize {
		return dst, fmt.Errorf("%d bytes of text is more than a line can hold", n)
	}
	dst = append(dst, bodyStart...)
	dst = strconv.AppendUint(dst, ev.Sequence, 10)
	dst = append(dst, `,"timestamp":"`...)
	dst = append(dst, ts...) // RFC 3339 text needs no escapes
	dst = append(dst, `","operation":`...)
	if dst, err = e.appendString(dst, ev.Operation); err != nil {
		return dst, fmt.Errorf("operation: %w", err)
	}
	dst = append(dst, `,"record_ids":`...)
	if dst, err = e.appendStrings(dst, ev.RecordIDs); err != nil {
		return dst, fmt.Errorf("record_ids: %w", err)
	}
	dst = append(dst, `,"store_types":`...)
	if dst, err = e.appendStrings(dst, ev.StoreTypes); err != nil {
		return dst, fmt.Errorf("store_types: %w", err)
	}
	dst = append(dst, `,"summary":`...)
	if dst, err = e.appendSummary(dst, ev.Summary); err != nil {
		return dst, fmt.Errorf("summary: %w", err)
	}
	return append(dst, prevMember...), nil
}

// appendLine appends the full line (with LF) for an entry whose body was
// made by appendBody and whose predecessor's hash is prev, and returns the
// entry's hash.
func appendLine(dst, body []byte, prev string) ([]byte, string) {
	start := len(dst)
	dst = append(dst, body...)
	dst = append(dst, prev...)
	dst = append(dst, `"}`...)
	sum := sha256.Sum256(dst[start:])
	dst = dst[:len(dst)-1] // reopen the object for entry_hash
	dst = append(dst, entryMember...)
	dst = hex.AppendEncode(dst, sum[:])
	dst = append(dst, "\"}\n"...)
	return dst, hex.EncodeToString(sum[:])
}

// lineSize is the length, without LF, of a line with the given body.
func lineSize(body []byte) int {
	return len(body) + hashLen + len(`"`) + hashTail
}

// entryHash computes the hash of a line (without LF) that is known to end
// with a well-formed entry_hash member.
func entryHash(line []byte) string {
	h := sha256.New()
	h.Write(line[:len(line)-hashTail])
	h.Write([]byte{'}'})
	return hex.EncodeToString(h.Sum(nil))
}

func isHash(s string) bool {
	if len(s) != hashLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
