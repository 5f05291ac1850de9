// Package audittest reads audit logs for tests: the entries, with the
// members tests look at. It imports nothing of the module, so the
// engine's own tests can use it as well as the server's and e2e's.
package audittest

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// Entry is one entry of an audit log: the members tests look at.
type Entry struct {
	Sequence  uint64          `json:"sequence"`
	Operation string          `json:"operation"`
	RecordIDs []string        `json:"record_ids"`
	Summary   json.RawMessage `json:"summary"`
}

// Entries reads the audit log at path, in order. A last line without
// its newline (an append still being written, or one a kill cut short) is
// left out; a missing file, or any other line that is not a JSON object,
// fails the test.
func Entries(t testing.TB, path string) []Entry {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = b[:bytes.LastIndexByte(b, '\n')+1]
	var out []Entry
	for line := range bytes.Lines(b) {
		var e Entry
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("%s: audit line %.200q: %v", path, line, err)
		}
		out = append(out, e)
	}
	return out
}
