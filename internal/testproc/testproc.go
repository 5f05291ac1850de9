// Package testproc runs the test binary again as a child process, for the
// tests that need a second process: crash tests that kill a writer with
// SIGKILL mid-write, lock tests that hold a data directory elsewhere. Only
// tests import it.
package testproc

import (
	"context"
	"io"
	"os"
	"os/exec"
	"testing"
)

// Command returns a command that runs this test binary again: only the
// test named test, or no test when test is empty (for a TestMain that
// recognises the child by its environment), once and without verbose
// output, so its standard output is what the child prints. The child has
// this process's environment plus env (KEY=value entries) and writes its
// standard error to this process's. It is killed when ctx is done.
func Command(ctx context.Context, test string, env ...string) *exec.Cmd {
	run := "^$"
	if test != "" {
		run = "^" + test + "$"
	}
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run="+run, "-test.count=1", "-test.v=false")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	return cmd
}

// Start starts cmd and returns its standard output. A child the test has
// not waited for by the time it ends is killed and waited for then.
func Start(t testing.TB, cmd *exec.Cmd) io.Reader {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return out
}
