//go:build linux

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair: the controlling side for the test
// and the terminal side for the command.
func openPTY(t *testing.T) (ctl, tty *os.File) {
	t.Helper()
	ctl, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(ctl.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ctl.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctl.Close(); tty.Close() })
	return ctl, tty
}

// terminalRun runs a binary with stdin, stdout and stderr on a terminal,
// types each answer once the screen shows its prompt, and returns the
// screen and the exit code.
func terminalRun(t *testing.T, answers map[string]string, name string, args ...string) (string, int) {
	t.Helper()
	ctl, tty := openPTY(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, name), args...)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "TERM=dumb"}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var (
		mu     sync.Mutex
		screen bytes.Buffer
		done   = make(chan struct{})
	)
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := ctl.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			for prompt, answer := range answers {
				if strings.Contains(screen.String(), prompt) {
					delete(answers, prompt)
					_, _ = io.WriteString(ctl, answer)
				}
			}
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	err := cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("%s %q did not finish within 60s", name, args)
	}
	ctl.Close()
	<-done
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return screen.String(), code
}

// TestTerminal runs import --strategy replace and export as a person at a
// terminal would: replace asks for a typed confirmation and does nothing
// unless it gets it, and long work draws a progress line that --quiet
// hides (without a terminal the other tests see none).
func TestTerminal(t *testing.T) {
	src := t.TempDir()
	memsvc := func(args ...string) result {
		t.Helper()
		r := runBin(t, 30*time.Second, nil, "memsvc", args...)
		if r.code != 0 {
			t.Fatalf("memsvc %q: %+v", args, r)
		}
		return r
	}
	memsvc("--data-dir", src, "store", "the archived note")
	archive := filepath.Join(t.TempDir(), "a.cma")

	screen, code := terminalRun(t, nil, "memsvc", "--data-dir", src, "export", "--output", archive)
	if code != 0 || !strings.Contains(screen, "\rexport ") || !strings.Contains(screen, "B/s") {
		t.Fatalf("export on a terminal: exit %d, screen %q", code, screen)
	}
	if strings.Contains(memsvc("--data-dir", src, "export", "--output", archive+"2").stderr, "B/s") {
		t.Error("export without a terminal drew progress")
	}
	if screen, _ := terminalRun(t, nil, "memsvc", "--data-dir", src, "export", "--output", archive+"3", "--quiet"); strings.Contains(screen, "B/s") {
		t.Errorf("export --quiet drew progress: %q", screen)
	}

	dst := t.TempDir()
	memsvc("--data-dir", dst, "store", "the note only the destination has")
	const prompt = `Type "replace" to continue: `
	screen, code = terminalRun(t, map[string]string{prompt: "no\n"}, "memsvc", "--data-dir", dst, "import", archive, "--strategy", "replace")
	if code != 0 || !strings.Contains(screen, "This deletes ALL stored memories") || !strings.Contains(screen, "nothing was changed") {
		t.Fatalf("declined replace: exit %d, screen %q", code, screen)
	}
	if r := memsvc("--data-dir", dst, "recall", "destination", "--mode", "perfect"); !strings.Contains(r.stdout, "the note only the destination has") {
		t.Fatalf("a declined replace changed the data: %+v", r)
	}

	screen, code = terminalRun(t, map[string]string{prompt: "replace\n"}, "memsvc", "--data-dir", dst, "import", archive, "--strategy", "replace")
	if code != 0 || !strings.Contains(screen, "Imported 1 records from "+archive) || !strings.Contains(screen, "\rimport [") {
		t.Fatalf("confirmed replace: exit %d, screen %q", code, screen)
	}
	if r := memsvc("--data-dir", dst, "recall", "--mode", "perfect"); !strings.Contains(r.stdout, "the archived note") || strings.Contains(r.stdout, "destination") {
		t.Fatalf("after the replace: %+v", r)
	}
}
