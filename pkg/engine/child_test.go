package engine

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testproc"
	"memsvc.dev/memsvc/pkg/store"
)

// startChild runs this test binary again with only the test named test
// and extra environment variables (KEY=value), the way the crash tests
// make a process they can SIGKILL; the process is killed once it has run
// for limit. It returns the command, started, and a scanner of the lines
// of its standard output; its standard error is the test's.
func startChild(t *testing.T, limit time.Duration, test string, env ...string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	t.Cleanup(cancel)
	cmd := testproc.Command(ctx, test, env...)
	return cmd, bufio.NewScanner(testproc.Start(t, cmd))
}

// childEngine opens the store in dir and an engine with opts over it for
// a crash test's child process, which ends through childFail when either
// does not open. The process is killed, never closes them.
func childEngine(dir string, opts Options) *Engine {
	db, err := store.Open(dir, store.Options{})
	if err != nil {
		childFail(err)
	}
	e, err := Open(context.Background(), db, opts)
	if err != nil {
		childFail(err)
	}
	return e
}

// childFail ends a crash test's child process on err: it reports the
// error on standard output, which the parent reads, and exits with 1.
func childFail(err error) {
	fmt.Println("error", err)
	os.Exit(1)
}
