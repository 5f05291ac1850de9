package fsutil

import (
	"testing"

	"memsvc.dev/memsvc/internal/depcheck"
)

// TestImports: the standard library only, as the packages that use it.
func TestImports(t *testing.T) {
	depcheck.OnlyImports(t)
}
