package testkit

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// AuditEntry is one entry of an audit log: the members tests look at.
type AuditEntry struct {
	Sequence  uint64          `json:"sequence"`
	Operation string          `json:"operation"`
	RecordIDs []string        `json:"record_ids"`
	Summary   json.RawMessage `json:"summary"`
}

// AuditEntries reads the audit log at path, in order. A last line without
// its newline (an append still being written, or one a kill cut short) is
// left out; a missing file, or any other line that is not a JSON object,
// fails the test.
func AuditEntries(t testing.TB, path string) []AuditEntry {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = b[:bytes.LastIndexByte(b, '\n')+1]
	var out []AuditEntry
	for line := range bytes.Lines(b) {
		var e AuditEntry
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("%s: audit line %.200q: %v", path, line, err)
		}
		out = append(out, e)
	}
	return out
}
