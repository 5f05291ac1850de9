package engine

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"

	"memsvc.dev/memsvc/internal/testproc"
)

// startChild runs this test binary again with only the test named test
// and extra environment variables (KEY=value), the way the crash tests
// make a process they can SIGKILL. It returns the command, started, and
// its standard output; its standard error is the test's.
func startChild(t *testing.T, ctx context.Context, test string, env ...string) (*exec.Cmd, io.Reader) {
	t.Helper()
	cmd := testproc.Command(ctx, test, env...)
	return cmd, testproc.Start(t, cmd)
}

// childFail ends a crash test's child process on err: it reports the
// error on standard output, which the parent reads, and exits with 1.
func childFail(err error) {
	fmt.Println("error", err)
	os.Exit(1)
}
