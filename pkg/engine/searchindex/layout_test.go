package searchindex

import (
	"testing"
	"unsafe"
)

// TestDocEntrySize guards the document table's footprint: one entry per
// document, so every byte counts a hundred thousand times.
func TestDocEntrySize(t *testing.T) {
	if got := unsafe.Sizeof(docEntry{}); got != 48 {
		t.Errorf("docEntry takes %d bytes, want 48", got)
	}
}
