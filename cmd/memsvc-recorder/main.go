// Command memsvc-recorder; see package memsvc.dev/memsvc/pkg/cli/recordercmd.
package main

import (
	"os"

	"memsvc.dev/memsvc/pkg/cli/recordercmd"
)

func main() { os.Exit(recordercmd.Main()) }
