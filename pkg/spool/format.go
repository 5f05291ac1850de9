package spool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// MalformedError describes why a batch file cannot be parsed. It matches
// ErrMalformed.
type MalformedError struct {
	Line   int // 1-based; 0 when the problem is the file as a whole
	Reason string
}

func (e *MalformedError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%v: line %d: %s", ErrMalformed, e.Line, e.Reason)
	}
	return fmt.Sprintf("%v: %s", ErrMalformed, e.Reason)
}

// Is makes errors.Is(err, ErrMalformed) true.
func (e *MalformedError) Is(target error) bool { return target == ErrMalformed }

// Parse splits a batch file into its records, following the format in the
// package comment. Each returned record is a sub-slice of data with
// surrounding white space removed.
func Parse(data []byte) ([][]byte, error) {
	if len(data) == 0 {
		return nil, &MalformedError{Reason: "empty file"}
	}
	if data[len(data)-1] != '\n' {
		return nil, &MalformedError{Reason: "no final newline (the file was cut short)"}
	}
	if !utf8.Valid(data) {
		return nil, &MalformedError{Reason: "not valid UTF-8"}
	}
	var recs [][]byte
	rest := data
	for line := 1; len(rest) > 0; line++ {
		i := bytes.IndexByte(rest, '\n')
		l := bytes.TrimSpace(rest[:i])
		rest = rest[i+1:]
		if len(l) == 0 {
			continue
		}
		if l[0] != '{' || !json.Valid(l) {
			return nil, &MalformedError{Line: line, Reason: "not a JSON object"}
		}
		recs = append(recs, l)
	}
	if len(recs) == 0 {
		return nil, &MalformedError{Reason: "no records"}
	}
	return recs, nil
}

// Encode renders records as a batch file: each record compacted onto one
// line. It fails unless there is at least one record and every record is a
// JSON object.
func Encode(records [][]byte) ([]byte, error) {
	if len(records) == 0 {
		return nil, errors.New("encode spool batch: no records")
	}
	n := 0
	for _, r := range records {
		n += len(r) + 1
	}
	var buf bytes.Buffer
	buf.Grow(n)
	for i, r := range records {
		t := bytes.TrimSpace(r)
		if len(t) == 0 || t[0] != '{' || !utf8.Valid(t) {
			return nil, fmt.Errorf("encode spool batch: record %d: not a JSON object", i)
		}
		if err := json.Compact(&buf, t); err != nil {
			return nil, fmt.Errorf("encode spool batch: record %d: %w", i, err)
		}
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}
