package spool

import (
	"testing"

	"memsvc.dev/memsvc/internal/depcheck"
)

// TestImports holds the package to the standard library (DESIGN.md §3):
// every binary links it, the companions included.
func TestImports(t *testing.T) {
	depcheck.OnlyImports(t)
}
