package cli

import (
	"errors"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

func TestImportRequest(t *testing.T) {
	req, ask, err := ImportRequest("/backups/b.cma", " Replace ", "KEEP_IMPORTED", true, false)
	if err != nil {
		t.Fatal(err)
	}
	if req.ArchiveID != "b.cma" || req.Strategy != memory.ImportReplace || req.ConflictResolution != memory.KeepImported || !req.PreserveNamespaces || !ask {
		t.Fatalf("request %+v, ask %v", req, ask)
	}
	// Only a replace without --yes asks.
	for _, tc := range []struct {
		strategy string
		yes      bool
	}{{"replace", true}, {"merge", false}, {"merge", true}} {
		if _, ask, err := ImportRequest("b.cma", tc.strategy, "keep_newer", false, tc.yes); err != nil || ask {
			t.Errorf("%s, yes %v: ask %v, err %v", tc.strategy, tc.yes, ask, err)
		}
	}
	for _, tc := range []struct{ strategy, conflict, flag string }{
		{"overwrite", "keep_newer", "--strategy: "},
		{"merge", "newest", "--conflict-resolution: "},
	} {
		_, _, err := ImportRequest("b.cma", tc.strategy, tc.conflict, false, false)
		var usage *UsageError
		if !errors.As(err, &usage) || !strings.HasPrefix(err.Error(), tc.flag) {
			t.Errorf("%s/%s: %v, want a usage error starting %q", tc.strategy, tc.conflict, err, tc.flag)
		}
	}
}
