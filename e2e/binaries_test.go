// Package e2e holds tests that run the built binaries as a user would:
// several processes, real data directories, loopback only.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// binDir holds the binaries built once for the whole test run.
var binDir string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "memsvc-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	build := exec.Command("go", "build", "-o", dir+string(os.PathSeparator),
		"memsvc.dev/memsvc/cmd/memsvc", "memsvc.dev/memsvc/cmd/memsvc-recorder",
		"memsvc.dev/memsvc/cmd/memsvc-mcp", "memsvc.dev/memsvc/cmd/memsvc-admin")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build binaries:", err)
		return 1
	}
	binDir = dir
	return m.Run()
}

// result is what a finished command printed.
type result struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

// runBin runs one of the built binaries with a clean environment (plus env)
// and a time limit.
func runBin(t *testing.T, timeout time.Duration, env []string, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, name), args...)
	cmd.Env = append([]string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	if ctx.Err() != nil {
		t.Fatalf("%s %v did not finish within %v", name, args, timeout)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %s: %v", name, err)
	}
	return r
}
