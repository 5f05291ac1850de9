// Package e2e holds tests that run the built binaries as a user would:
// several processes, real data directories, loopback only.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testkit"
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

// cleanEnv is the environment the tests give the built binaries: a fresh
// HOME, PATH, then env (of two entries with the same name, exec uses the
// later).
func cleanEnv(t testing.TB, env ...string) []string {
	return append([]string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, env...)
}

// binCmd is a command for the built binary name with args and the
// environment of cleanEnv.
func binCmd(t testing.TB, name string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	cmd.Env = cleanEnv(t, env...)
	return cmd
}

// runBin runs one of the built binaries with a clean environment (plus env)
// and a time limit.
func runBin(t *testing.T, timeout time.Duration, env []string, name string, args ...string) result {
	t.Helper()
	return runBinInput(t, timeout, nil, env, name, args...)
}

// runBinInput is runBin with stdin (nil: none).
func runBinInput(t *testing.T, timeout time.Duration, stdin io.Reader, env []string, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, name), args...)
	cmd.Env = cleanEnv(t, env...)
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	if ctx.Err() != nil {
		t.Fatalf("%s %v did not finish within %v:\n%s", name, args, timeout, r.stderr)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %s: %v", name, err)
	}
	return r
}

// child is a started process whose stderr is kept for failure messages.
type child struct {
	cmd    *exec.Cmd
	stderr testkit.SyncBuffer
	exited chan error // how it exited, once its stderr is read to the end
}

// startChild starts cmd, keeps its stderr and hands each line of it to
// onLine (when not nil) as it comes. The process is killed when the test
// ends, unless it has exited by then.
func startChild(t testing.TB, cmd *exec.Cmd, onLine func(line string)) *child {
	t.Helper()
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, exited: make(chan error, 1)}
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			fmt.Fprintln(&c.stderr, sc.Text())
			if onLine != nil {
				onLine(sc.Text())
			}
		}
	}()
	go func() { <-scanned; c.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-c.exited
		}
	})
	return c
}

// log is what the process has written to stderr so far.
func (c *child) log() string { return c.stderr.String() }

// signalExit sends sig and waits up to 30 s for the process to exit; it
// returns how the process exited.
func (c *child) signalExit(t testing.TB, sig os.Signal) error {
	t.Helper()
	if err := c.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-c.exited:
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not exit after %v:\n%s", filepath.Base(c.cmd.Path), sig, c.log())
		return nil
	}
}
