package archive

import (
	"testing"

	"memsvc.dev/memsvc/internal/depcheck"
)

// TestImports keeps the package linkable by tools that must not pull in
// the storage engine: the standard library, golang.org/x/crypto and the
// record model only.
func TestImports(t *testing.T) {
	depcheck.OnlyImports(t, "golang.org/x/crypto", "memsvc.dev/memsvc/pkg/memory")
}
