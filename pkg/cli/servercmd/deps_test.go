package servercmd

import (
	"testing"

	"memsvc.dev/memsvc/internal/depcheck"
)

// TestOpensDataOnlyThroughServer: the command opens the data directory, the
// audit log and the engine only through server.OpenLocal, so there is one
// way to open them, with one close order.
func TestOpensDataOnlyThroughServer(t *testing.T) {
	depcheck.NeverImports(t,
		"memsvc.dev/memsvc/pkg/store",
		"memsvc.dev/memsvc/pkg/engine",
		"memsvc.dev/memsvc/pkg/audit",
		"github.com/cockroachdb/pebble",
	)
}
