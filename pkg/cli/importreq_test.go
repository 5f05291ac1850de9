package cli

import (
	"errors"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

func TestImportRequest(t *testing.T) {
	req, err := ImportRequest("/backups/b.cma", " Replace ", "KEEP_IMPORTED", true)
	if err != nil {
		t.Fatal(err)
	}
	if req.ArchiveID != "b.cma" || req.Strategy != memory.ImportReplace || req.ConflictResolution != memory.KeepImported || !req.PreserveNamespaces {
		t.Fatalf("request %+v", req)
	}
	for _, tc := range []struct{ strategy, conflict, flag string }{
		{"overwrite", "keep_newer", "--strategy: "},
		{"merge", "newest", "--conflict-resolution: "},
	} {
		_, err := ImportRequest("b.cma", tc.strategy, tc.conflict, false)
		var usage *UsageError
		if !errors.As(err, &usage) || !strings.HasPrefix(err.Error(), tc.flag) {
			t.Errorf("%s/%s: %v, want a usage error starting %q", tc.strategy, tc.conflict, err, tc.flag)
		}
	}
}
