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
// preserve that of --preserve-namespaces and yes that of --yes. An
// unknown strategy or resolution is a usage error naming its flag.
//
// ask reports that the import replaces the stored data without --yes:
// the command must then have the user type a confirmation, and refuse
// when there is no terminal to ask on.
func ImportRequest(path, strategy, conflict string, preserve, yes bool) (req memory.ImportRequest, ask bool, err error) {
	req = memory.DefaultImportRequest()
	req.ArchiveID = filepath.Base(path)
	req.PreserveNamespaces = preserve
	if req.Strategy, err = memory.ParseImportStrategy(strings.ToLower(strings.TrimSpace(strategy))); err != nil {
		return req, false, Usagef("--strategy: %v", err)
	}
	if req.ConflictResolution, err = memory.ParseConflictResolution(strings.ToLower(strings.TrimSpace(conflict))); err != nil {
		return req, false, Usagef("--conflict-resolution: %v", err)
	}
	return req, req.Strategy == memory.ImportReplace && !yes, nil
}
