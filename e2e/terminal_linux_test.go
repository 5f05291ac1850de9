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
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"memsvc.dev/memsvc/pkg/memory"
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
	return terminalRunEnv(t, nil, answers, name, args...)
}

// terminalRunEnv is terminalRun with more environment variables.
func terminalRunEnv(t *testing.T, env []string, answers map[string]string, name string, args ...string) (string, int) {
	t.Helper()
	ctl, tty := openPTY(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, name), args...)
	cmd.Env = cleanEnv(t, append([]string{"TERM=dumb"}, env...)...)
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

// TestTerminalLongWork: dream-tick over a backlog of many groups and
// migrate-store-encryption draw a progress line with counts on a
// terminal, none without one, none with --quiet, and do the same work
// either way.
func TestTerminalLongWork(t *testing.T) {
	const sessions = 60 // one dream group each
	dir := t.TempDir()
	srv := startServer(t, dir, "MEMSVC_DREAM__BACKGROUND_INTERVAL_SECS=86400")
	req := memory.EncodeBatchStoreRawRequest{}
	for i := range 2 * sessions {
		r := memory.DefaultEncodeStoreRawRequest()
		r.SessionID = fmt.Sprint("session-", i%sessions)
		r.Content = memory.TextContent(fmt.Sprintf("turn %d of session %d about the deployment plan", i/sessions, i%sessions))
		req.Records = append(req.Records, r)
	}
	if code := call(t, "POST", srv.url("/v1/encode/raw/batch"), req, nil); code != 200 {
		t.Fatalf("raw batch: %d", code)
	}
	if err := srv.stop(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}

	// A dry run without a terminal: the whole backlog, no progress.
	r := runBin(t, 60*time.Second, nil, "memsvc", "--data-dir", dir, "dream-tick", "--dry-run", "--max-groups", "1000")
	if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("groups processed: %d\n", sessions)) || strings.Contains(r.stderr, "dream-tick") {
		t.Fatalf("dream-tick --dry-run without a terminal: %+v", r)
	}
	if screen, code := terminalRun(t, nil, "memsvc", "--data-dir", dir, "dream-tick", "--dry-run", "--quiet"); code != 0 || strings.Contains(screen, "\rdream-tick") {
		t.Fatalf("dream-tick --quiet on a terminal: exit %d, screen %q", code, screen)
	}
	// On a terminal: a bar counting groups, and every group processed
	// (in several requests of at most 10 groups).
	screen, code := terminalRun(t, nil, "memsvc", "--data-dir", dir, "dream-tick", "--max-groups", "100", "--promote-semantic=false")
	if code != 0 || !strings.Contains(screen, "\rdream-tick [") || !strings.Contains(screen, fmt.Sprintf("%d/100 groups", sessions)) ||
		!strings.Contains(screen, fmt.Sprintf("groups processed: %d\r\n", sessions)) || !strings.Contains(screen, fmt.Sprintf("raw entries processed: %d\r\n", 2*sessions)) {
		t.Fatalf("dream-tick on a terminal: exit %d, screen %q", code, screen)
	}
	if r := runBin(t, 60*time.Second, nil, "memsvc", "--data-dir", dir, "dream-tick", "--max-groups", "1000"); r.code != 0 || !strings.Contains(r.stdout, "groups processed: 0\n") {
		t.Fatalf("a second dream-tick found work left: %+v", r)
	}

	// Migration: raw entries plus the summaries the dream wrote (one per
	// group; no semantic memories).
	env := []string{"MEMSVC_SECURITY__STORE_ENCRYPTION_PASSPHRASE=correct horse battery staple"}
	values := 2*sessions + sessions
	screen, code = terminalRunEnv(t, env, nil, "memsvc", "--data-dir", dir, "migrate-store-encryption", "--confirm")
	if code != 0 || !strings.Contains(screen, "\rmigrate [") || !strings.Contains(screen, fmt.Sprintf("%d/%d records", values, values)) ||
		!strings.Contains(screen, fmt.Sprintf("raw_journal: total=%d, migrated=%d", 2*sessions, 2*sessions)) {
		t.Fatalf("migrate-store-encryption on a terminal: exit %d, screen %q", code, screen)
	}
	if screen, code := terminalRunEnv(t, env, nil, "memsvc", "--data-dir", dir, "migrate-store-encryption", "--confirm", "--quiet"); code != 0 || strings.Contains(screen, "\rmigrate") {
		t.Fatalf("migrate-store-encryption --quiet on a terminal: exit %d, screen %q", code, screen)
	}
	r = runBin(t, 60*time.Second, env, "memsvc", "--data-dir", dir, "migrate-store-encryption", "--confirm")
	if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("raw_journal: total=%d, migrated=0, already_encrypted=%d", 2*sessions, 2*sessions)) || strings.Contains(r.stderr, "migrate") {
		t.Fatalf("migrate-store-encryption without a terminal: %+v", r)
	}
}
