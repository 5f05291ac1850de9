// Command memsvc-mcp; see package memsvc.dev/memsvc/pkg/cli/mcpcmd.
package main

import (
	"os"

	"memsvc.dev/memsvc/pkg/cli/mcpcmd"
)

func main() { os.Exit(mcpcmd.Main()) }
