package engine

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
)

// startChild runs this test binary again with only the test named test
// and extra environment variables (KEY=value), the way the crash tests
// make a process they can SIGKILL. It returns the command, started, and
// its standard output; its standard error is the test's.
func startChild(t *testing.T, ctx context.Context, test string, env ...string) (*exec.Cmd, io.Reader) {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, out
}

// childFail ends a crash test's child process on err: it reports the
// error on standard output, which the parent reads, and exits with 1.
func childFail(err error) {
	fmt.Println("error", err)
	os.Exit(1)
}
