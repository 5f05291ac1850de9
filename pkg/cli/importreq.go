package cli

import (
	"path/filepath"
	"strings"

	"memsvc.dev/memsvc/pkg/memory"
)

// ImportRequest is the request that imports the archive at path, as
// `memsvc import` and `memsvc-admin restore` build it from their flags:
// strategy and conflict are the values of --strategy and
// --conflict-resolution (case and surrounding space do not matter),
// preserve that of --preserve-namespaces. An unknown strategy or
// resolution is a usage error naming its flag.
func ImportRequest(path, strategy, conflict string, preserve bool) (memory.ImportRequest, error) {
	req := memory.DefaultImportRequest()
	req.ArchiveID = filepath.Base(path)
	req.PreserveNamespaces = preserve
	var err error
	if req.Strategy, err = memory.ParseImportStrategy(strings.ToLower(strings.TrimSpace(strategy))); err != nil {
		return req, Usagef("--strategy: %v", err)
	}
	if req.ConflictResolution, err = memory.ParseConflictResolution(strings.ToLower(strings.TrimSpace(conflict))); err != nil {
		return req, Usagef("--conflict-resolution: %v", err)
	}
	return req, nil
}
