// Package tools pins the project's code generators and linters (the tool
// directives in go.mod) and runs the linters as tests, so the one test
// command of the README also checks formatting, vet and staticcheck across
// every module of the workspace.
package tools

import (
	"os/exec"
	"strings"
	"testing"
)

// patterns names every package of the workspace.
var patterns = []string{"memsvc.dev/memsvc/...", "memsvc.dev/memsvc/e2e/...", "memsvc.dev/memsvc/tools/..."}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestGofmt(t *testing.T) {
	if out := run(t, "gofmt", "-l", ".."); strings.TrimSpace(out) != "" {
		t.Fatalf("files need gofmt -w:\n%s", out)
	}
}

func TestVet(t *testing.T) {
	run(t, "go", append([]string{"vet"}, patterns...)...)
}

func TestStaticcheck(t *testing.T) {
	run(t, "go", append([]string{"tool", "staticcheck"}, patterns...)...)
}
