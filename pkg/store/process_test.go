package store

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testproc"
	"memsvc.dev/memsvc/pkg/memory"
)

// Tests in this file re-execute the test binary as a child process
// (TestHelperProcess) to hold a directory lock or to be killed in the middle
// of writes.

const (
	helperEnv    = "MEMSVC_STORE_TEST_HELPER"
	helperDirEnv = "MEMSVC_STORE_TEST_DIR"
)

// TestHelperProcess is the child side. It does nothing in a normal run.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		return
	}
	dir := os.Getenv(helperDirEnv)
	var err error
	switch mode {
	case "hold-lock":
		err = helperHoldLock(dir)
	case "write-loop":
		err = helperWriteLoop(dir)
	default:
		err = fmt.Errorf("unknown helper mode %q", mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(2)
	}
	os.Exit(0)
}

// helperHoldLock opens dir, says "ready" and keeps it open until stdin is
// closed.
func helperHoldLock(dir string) error {
	db, err := Open(dir, Options{})
	if err != nil {
		return err
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return db.Close()
}

// crashWrites bounds the child's write loop; the parent kills it long
// before.
const crashWrites = 100_000

// helperWriteLoop writes one record per synced batch and prints
// "<counter> <id>" only after Commit has returned.
func helperWriteLoop(dir string) error {
	db, err := Open(dir, Options{})
	if err != nil {
		return err
	}
	ids := memory.NewIDSource(nil, nil)
	out := bufio.NewWriter(os.Stdout)
	for i := range crashWrites {
		id := ids.New()
		b := db.NewBatch()
		if i%3 == 0 {
			b.PutRaw(DefaultNS, realisticRaw(i, id), nil)
		} else {
			b.PutRecord(DefaultNS, realisticRecord(i, id))
		}
		if err := b.Commit(); err != nil {
			return err
		}
		b.Close()
		fmt.Fprintf(out, "%d %s\n", i, id)
		if err := out.Flush(); err != nil {
			return err
		}
	}
	return db.Close()
}

func helperCommand(t *testing.T, mode, dir string) *exec.Cmd {
	t.Helper()
	return testproc.Command(t.Context(), "TestHelperProcess", helperEnv+"="+mode, helperDirEnv+"="+dir)
}

// startHelper starts cmd and returns the lines it prints on stdout. A
// child the test has not waited for is killed and reaped when the test
// ends.
func startHelper(t *testing.T, cmd *exec.Cmd) <-chan string {
	t.Helper()
	return readLines(testproc.Start(t, cmd))
}

// readLines delivers the child's stdout lines on a channel, closed at EOF.
func readLines(r io.Reader) <-chan string {
	ch := make(chan string, 64)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}

func TestLockedByAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	cmd := helperCommand(t, "hold-lock", dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	lines := startHelper(t, cmd)
	select {
	case l, ok := <-lines:
		if !ok || l != "ready" {
			t.Fatalf("child said %q (open %v)", l, ok)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("child did not open the directory within 30s")
	}

	// Open through a relative path: the error must still name the
	// absolute directory.
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, abs)
	if err != nil {
		rel = abs
	}
	start := time.Now()
	db, err := Open(rel, Options{})
	elapsed := time.Since(start)
	if err == nil {
		db.Close()
		t.Fatal("second process opened a locked directory")
	}
	if elapsed > 500*time.Millisecond {
		t.Errorf("Open took %v to fail, want well under a second", elapsed)
	}
	if !errors.Is(err, ErrLocked) {
		t.Errorf("error %v does not match ErrLocked", err)
	}
	var le *LockedError
	if !errors.As(err, &le) || le.Dir != abs {
		t.Errorf("LockedError dir = %+v, want %s", le, abs)
	}
	for _, want := range []string{abs, "--server-url"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}

	// When the other process exits, the directory opens.
	_ = stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	db, err = Open(dir, Options{})
	if err != nil {
		t.Fatalf("Open after the child exited: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCrashKeepsAcknowledgedWrites kills a writer with SIGKILL after at
// least 200 acknowledged commits and checks that every acknowledged record
// is there, intact, and that no raw entry is half-written.
func TestCrashKeepsAcknowledgedWrites(t *testing.T) {
	const minAcked = 200
	dir := t.TempDir()
	cmd := helperCommand(t, "write-loop", dir)
	lines := startHelper(t, cmd)

	// Kill at a point that varies from run to run, past the minimum.
	target := minAcked + int(time.Now().UnixNano()%50)
	acked := map[int]memory.ID{}
	deadline := time.After(2 * time.Minute)
	for len(acked) < target {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("child exited after %d writes", len(acked))
			}
			n, id, err := parseAck(l)
			if err != nil {
				t.Fatal(err)
			}
			acked[n] = id
		case <-deadline:
			t.Fatalf("only %d writes acknowledged within 2 minutes", len(acked))
		}
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL on Unix
		t.Fatal(err)
	}
	// Acknowledgements already in the pipe count too.
	for l := range lines {
		n, id, err := parseAck(l)
		if err != nil {
			t.Fatal(err) // a torn line would be a test bug: each line is one write
		}
		acked[n] = id
	}
	_ = cmd.Wait()
	if st := cmd.ProcessState; st == nil || st.Success() {
		t.Fatalf("child was not killed: %v", st)
	}

	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer db.Close()

	rawAcked := 0
	for n, id := range acked {
		if n%3 == 0 {
			rawAcked++
			got, err := db.GetRaw(DefaultNS, id)
			if err != nil {
				t.Fatalf("acknowledged raw entry %d (%s): %v", n, id, err)
			}
			if want := normaliseRaw(realisticRaw(n, id)); !reflect.DeepEqual(got, want) {
				t.Fatalf("raw entry %d differs after the crash", n)
			}
			continue
		}
		want := realisticRecord(n, id)
		got, err := db.GetRecord(DefaultNS, want.Store, id)
		if err != nil {
			t.Fatalf("acknowledged record %d (%s): %v", n, id, err)
		}
		if !reflect.DeepEqual(got, normaliseRecord(want)) {
			t.Fatalf("record %d differs after the crash", n)
		}
	}

	// Batches are atomic: every raw entry on disk has both index entries
	// and every index entry has its entry (at most one write past the
	// last acknowledgement may be there too).
	onDisk := map[memory.ID]*memory.RawJournalRecord{}
	if err := db.ScanRaw(DefaultNS, func(r *memory.RawJournalRecord) error { onDisk[r.ID] = r; return nil }); err != nil {
		t.Fatal(err)
	}
	if len(onDisk) < rawAcked || len(onDisk) > rawAcked+1 {
		t.Errorf("%d raw entries on disk, %d acknowledged", len(onDisk), rawAcked)
	}
	timeIndexed := map[memory.ID]bool{}
	if err := db.ScanRawNewest(DefaultNS, RawRange{}, func(id memory.ID, _ RawFlags) (bool, error) {
		timeIndexed[id] = true
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	sessionIndexed := map[memory.ID]bool{}
	for s := range 3 {
		name := fmt.Sprintf("session-%d", s)
		if err := db.ScanRawNewest(DefaultNS, RawRange{Session: &name}, func(id memory.ID, _ RawFlags) (bool, error) {
			sessionIndexed[id] = true
			return true, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if len(timeIndexed) != len(onDisk) || len(sessionIndexed) != len(onDisk) {
		t.Errorf("raw entries %d, time index %d, session index %d", len(onDisk), len(timeIndexed), len(sessionIndexed))
	}
	for id := range onDisk {
		if !timeIndexed[id] || !sessionIndexed[id] {
			t.Errorf("raw entry %s lacks an index entry", id)
		}
	}
	t.Logf("killed after %d acknowledged writes (%d raw)", len(acked), rawAcked)
}

func parseAck(line string) (int, memory.ID, error) {
	f := strings.Fields(line)
	if len(f) != 2 {
		return 0, memory.ID{}, fmt.Errorf("bad ack line %q", line)
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return 0, memory.ID{}, fmt.Errorf("bad ack line %q: %v", line, err)
	}
	id, err := memory.ParseID(f[1])
	if err != nil {
		return 0, memory.ID{}, fmt.Errorf("bad ack line %q: %v", line, err)
	}
	return n, id, nil
}
