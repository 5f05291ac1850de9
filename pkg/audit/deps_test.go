package audit

import (
	"testing"

	"memsvc.dev/memsvc/internal/depcheck"
)

// TestImports holds the package to the standard library (DESIGN.md §3),
// plus the project's stdlib-only file system helpers: every binary links
// it, the companions included.
func TestImports(t *testing.T) {
	depcheck.OnlyImports(t, "memsvc.dev/memsvc/internal/fsutil")
}
