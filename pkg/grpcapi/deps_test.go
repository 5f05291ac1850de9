package grpcapi

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoBusinessLogicDependencies keeps the gRPC layer a transport: it
// converts messages and calls whatever memory.Service it is given. If its
// non-test code reached the engine, the record store or pebble, even
// through another package, logic or storage access could start to live
// here and drift from the HTTP and MCP transports. The check is on the
// whole transitive import graph, as the go tool sees it, so an indirect
// path is caught too.
func TestNoBusinessLogicDependencies(t *testing.T) {
	forbidden := []string{
		"memsvc.dev/memsvc/pkg/engine",
		"memsvc.dev/memsvc/pkg/store",
		"github.com/cockroachdb/pebble",
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go tool is needed to list the package's dependencies: %v", err)
	}
	// Without -test, go list reports the dependencies of the package as
	// built into a binary, leaving out the test files (which use the
	// engine on purpose).
	out, err := exec.CommandContext(t.Context(), goTool, "list", "-deps", "-f", "{{.ImportPath}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 || deps[len(deps)-1] != "memsvc.dev/memsvc/pkg/grpcapi" {
		t.Fatalf("go list -deps did not list this package last; output:\n%s", out)
	}
	for _, dep := range deps {
		for _, bad := range forbidden {
			if dep == bad || strings.HasPrefix(dep, bad+"/") {
				t.Errorf("the gRPC transport depends on %s (matches %s): it must serve a memory.Service and leave engine and storage to the server", dep, bad)
			}
		}
	}
}
