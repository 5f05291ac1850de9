// Command memsvc; see package memsvc.dev/memsvc/pkg/cli/servercmd.
package main

import (
	"os"

	"memsvc.dev/memsvc/pkg/cli/servercmd"
)

func main() { os.Exit(servercmd.Main()) }
