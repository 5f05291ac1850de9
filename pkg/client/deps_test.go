package client

import (
	"testing"

	"memsvc.dev/memsvc/internal/depcheck"
)

// TestImports keeps the client linkable by the recorder and the MCP proxy,
// which must never pull in the storage engine: the standard library,
// pkg/wire and pkg/memory only (both of which are held to the standard
// library by their own tests).
func TestImports(t *testing.T) {
	depcheck.OnlyImports(t, "memsvc.dev/memsvc/pkg/memory", "memsvc.dev/memsvc/pkg/wire")
}
