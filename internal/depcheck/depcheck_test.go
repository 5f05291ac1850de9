package depcheck

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that collects errors instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestRulesCatchViolations runs the checks on pkg/client, which imports
// pkg/memory and pkg/wire and so reaches both: each rule passes when the
// package keeps it and fails, naming the package, when it does not.
func TestRulesCatchViolations(t *testing.T) {
	t.Chdir("../../pkg/client")
	const memory, wire = "memsvc.dev/memsvc/pkg/memory", "memsvc.dev/memsvc/pkg/wire"

	r := &recorder{TB: t}
	OnlyImports(r, memory, wire)
	NeverReaches(r, "github.com/cockroachdb/pebble", "memsvc.dev/memsvc/pkg/engine")
	if len(r.errs) != 0 {
		t.Fatalf("rules the package keeps failed: %q", r.errs)
	}
	if !Reaches(t, memory) || !Reaches(t, "memsvc.dev/memsvc/pkg") {
		t.Error("Reaches misses a dependency (or the packages below a prefix)")
	}

	OnlyImports(r, memory)
	NeverReaches(r, wire)
	if len(r.errs) != 2 || !strings.Contains(r.errs[0], wire) || !strings.Contains(r.errs[1], wire) {
		t.Fatalf("broken rules reported %q, want two errors naming %s", r.errs, wire)
	}
}
