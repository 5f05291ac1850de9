// Command memsvc-admin; see package memsvc.dev/memsvc/pkg/cli/admincmd.
package main

import (
	"os"

	"memsvc.dev/memsvc/pkg/cli/admincmd"
)

func main() { os.Exit(admincmd.Main()) }
