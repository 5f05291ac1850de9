package wire

import (
	"testing"

	"memsvc.dev/memsvc/internal/depcheck"
)

// TestImports keeps the package linkable by every client binary: the
// standard library and pkg/memory only (DESIGN.md §3).
func TestImports(t *testing.T) {
	depcheck.OnlyImports(t, "memsvc.dev/memsvc/pkg/memory")
}
