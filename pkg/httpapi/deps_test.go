package httpapi

import (
	"testing"

	"memsvc.dev/memsvc/internal/depcheck"
)

// TestImports keeps the transport independent of the engine: it serves any
// memory.Service.
func TestImports(t *testing.T) {
	depcheck.OnlyImports(t,
		"github.com/gorilla/mux",
		"github.com/prometheus/client_golang/prometheus",
		"memsvc.dev/memsvc/pkg/access",
		"memsvc.dev/memsvc/pkg/memory",
		"memsvc.dev/memsvc/pkg/metrics",
		"memsvc.dev/memsvc/pkg/wire",
	)
}
