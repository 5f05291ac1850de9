package grpcapi

import (
	"testing"

	"memsvc.dev/memsvc/internal/depcheck"
)

// TestNoBusinessLogicDependencies keeps the gRPC layer a transport: it
// converts messages and calls whatever memory.Service it is given. If its
// non-test code reached the engine, the record store or pebble, even
// through another package, logic or storage access could start to live
// here and drift from the HTTP and MCP transports.
func TestNoBusinessLogicDependencies(t *testing.T) {
	depcheck.NeverReaches(t, "memsvc.dev/memsvc/pkg/engine", "memsvc.dev/memsvc/pkg/store", "github.com/cockroachdb/pebble")
}
