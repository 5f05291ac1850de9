package audit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"syscall"
	"testing"

	"memsvc.dev/memsvc/internal/testproc"
)

const crashChildEnv = "MEMSVC_AUDIT_CRASH_CHILD"

func TestMain(m *testing.M) {
	if path := os.Getenv(crashChildEnv); path != "" {
		os.Exit(crashChild(path))
	}
	os.Exit(m.Run())
}

// crashChild appends testEvents to the log at path in groups of 1 to 7
// until it is killed, printing the last acknowledged sequence after each
// Append returns.
func crashChild(path string) int {
	l, err := Open(path, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	seq, _ := l.Last()
	for i := uint64(0); i < 1_000_000; i++ {
		n := i%7 + 1
		if err := l.Append(testEvents(seq+1, seq+n)...); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		seq += n
		fmt.Fprintln(os.Stdout, seq)
	}
	return 0
}

// TestCrashKill kills a writing process three times and checks that every
// acknowledged entry survives, that Open repairs whatever the kill left and
// that the chain then continues as if nothing had happened.
func TestCrashKill(t *testing.T) {
	path := logPath(t)
	var acked uint64
	for round := 1; round <= 3; round++ {
		cmd := testproc.Command(t.Context(), "", crashChildEnv+"="+path)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out := testproc.Start(t, cmd)
		target := acked + 100
		sc := bufio.NewScanner(out)
		for acked < target && sc.Scan() {
			var err error
			if acked, err = strconv.ParseUint(sc.Text(), 10, 64); err != nil {
				t.Fatal(err)
			}
		}
		cmd.Process.Kill()
		cmd.Wait()
		if acked < target {
			t.Fatalf("round %d: child stopped at %d: %s", round, acked, stderr.String())
		}

		l := openT(t, path, Options{VerifyFull: true})
		last, _ := l.Last()
		if last < acked {
			t.Fatalf("round %d: log ends at %d, but %d was acknowledged", round, last, acked)
		}
		acked = last
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	l := openT(t, path, Options{})
	appendT(t, l, testEvents(acked+1, acked+3)...)
	if got := readFile(t, path); !bytes.Equal(got, referenceLog(t, acked+3)) {
		t.Fatal("log after kills differs from the reference")
	}
}

// TestCrashAtEveryByte cuts a three-entry group write after every possible
// byte, as a crash would, and checks that Open plus an outbox replay always
// ends with exactly the log that no crash would have produced.
func TestCrashAtEveryByte(t *testing.T) {
	ref := referenceLog(t, 6)
	base := len(referenceLog(t, 3))
	path := logPath(t)
	for k := 0; k < len(ref)-base; k++ {
		writeFile(t, path, ref[:base+k])
		l, err := Open(path, Options{})
		if err != nil {
			t.Fatalf("cut after %d bytes: Open: %v", k, err)
		}
		last, _ := l.Last()
		if want := uint64(bytes.Count(ref[:base+k], []byte("\n"))); last != want {
			t.Fatalf("cut after %d bytes: Last = %d, want %d", k, last, want)
		}
		// The outbox still holds every event after Last.
		if err := l.Append(testEvents(last+1, 6)...); err != nil {
			t.Fatalf("cut after %d bytes: replay: %v", k, err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, path); !bytes.Equal(got, ref) {
			t.Fatalf("cut after %d bytes: log after replay differs from the reference", k)
		}
	}
}

// faultFS fails the failAt-th file system operation (counting from 1). A
// failed write first writes half of its bytes, like a crash mid-write.
type faultFS struct {
	osFS
	ops    int
	failAt int
	hit    bool
}

var errInjected = errors.New("injected fault")

func (f *faultFS) fail() bool {
	f.ops++
	if f.ops == f.failAt {
		f.hit = true
		return true
	}
	return false
}

func (f *faultFS) MkdirAll(dir string, perm fs.FileMode) error {
	if f.fail() {
		return errInjected
	}
	return f.osFS.MkdirAll(dir, perm)
}

func (f *faultFS) OpenLog(path string) (logFile, error) {
	if f.fail() {
		return nil, errInjected
	}
	lf, err := f.osFS.OpenLog(path)
	if err != nil {
		return nil, err
	}
	return &faultFile{logFile: lf, fs: f}, nil
}

func (f *faultFS) SyncDir(dir string) error {
	if f.fail() {
		return errInjected
	}
	return f.osFS.SyncDir(dir)
}

type faultFile struct {
	logFile
	fs *faultFS
}

func (f *faultFile) ReadAt(p []byte, off int64) (int, error) {
	if f.fs.fail() {
		return 0, errInjected
	}
	return f.logFile.ReadAt(p, off)
}

func (f *faultFile) Stat() (fs.FileInfo, error) {
	if f.fs.fail() {
		return nil, errInjected
	}
	return f.logFile.Stat()
}

func (f *faultFile) Write(p []byte) (int, error) {
	if f.fs.fail() {
		n, _ := f.logFile.Write(p[:len(p)/2])
		return n, errInjected
	}
	return f.logFile.Write(p)
}

func (f *faultFile) Truncate(size int64) error {
	if f.fs.fail() {
		return errInjected
	}
	return f.logFile.Truncate(size)
}

func (f *faultFile) Sync() error {
	if f.fs.fail() {
		return errInjected
	}
	return f.logFile.Sync()
}

// TestFailEachOperation fails each file system operation of a writer's
// life in turn: opening a log with a torn tail, then appending from an
// outbox. Whatever fails, nothing acknowledged is lost; after a failed
// append the same Log takes the events again and goes on, and after a
// failed open, reopening plus replaying the outbox does; either way the
// result is exactly the reference log.
func TestFailEachOperation(t *testing.T) {
	ref := referenceLog(t, 12)
	start := len(referenceLog(t, 3)) + 40 // three entries and a torn fourth
	groups := [][2]uint64{{4, 6}, {7, 7}, {8, 12}}
	for _, full := range []bool{false, true} {
		failEachOperation(t, full, ref, start, groups)
	}
}

func failEachOperation(t *testing.T, full bool, ref []byte, start int, groups [][2]uint64) {
	total := groups[len(groups)-1][1]
	for i := 1; ; i++ {
		if i > 100 {
			t.Fatal("the scenario never ran without a fault")
		}
		path := logPath(t)
		writeFile(t, path, ref[:start])
		fsys := &faultFS{failAt: i}
		var acked uint64
		func() {
			l, err := open(path, Options{VerifyFull: full}, fsys)
			if err != nil {
				if !errors.Is(err, errInjected) {
					t.Fatalf("full=%v fault %d: Open: %v", full, i, err)
				}
				return
			}
			defer l.Close()
			for _, g := range groups {
				if err := l.Append(testEvents(g[0], g[1])...); err != nil {
					if !errors.Is(err, errInjected) {
						t.Fatalf("full=%v fault %d: Append: %v", full, i, err)
					}
					if !errors.Is(l.Err(), errInjected) {
						t.Fatalf("full=%v fault %d: Err after a failed append = %v", full, i, l.Err())
					}
					// The outbox still holds the events: the same Log
					// takes them again.
					seq, _ := l.Last()
					if err := l.Append(testEvents(seq+1, g[1])...); err != nil || l.Err() != nil {
						t.Fatalf("full=%v fault %d: Append after a failed one: %v (Err %v)", full, i, err, l.Err())
					}
				}
				acked = g[1]
			}
		}()
		if !fsys.hit {
			if acked != total {
				t.Fatalf("clean run acknowledged %d of %d", acked, total)
			}
			if got := readFile(t, path); !bytes.Equal(got, ref) {
				t.Fatal("clean run differs from the reference")
			}
			return
		}

		l := openT(t, path, Options{VerifyFull: true})
		last, _ := l.Last()
		if last < acked {
			t.Fatalf("full=%v fault %d: log ends at %d, but %d was acknowledged", full, i, last, acked)
		}
		appendT(t, l, testEvents(last+1, total)...)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, path); !bytes.Equal(got, ref) {
			t.Fatalf("full=%v fault %d: log after recovery differs from the reference", full, i)
		}
	}
}

// fullFS is a file system that runs out of space while full is set: a
// write then stores half of its bytes and fails with ENOSPC.
type fullFS struct {
	osFS
	full bool
}

func (f *fullFS) OpenLog(path string) (logFile, error) {
	lf, err := f.osFS.OpenLog(path)
	if err != nil {
		return nil, err
	}
	return &fullFile{logFile: lf, fs: f}, nil
}

type fullFile struct {
	logFile
	fs *fullFS
}

func (f *fullFile) Write(p []byte) (int, error) {
	if f.fs.full {
		n, _ := f.logFile.Write(p[:len(p)/2])
		return n, &fs.PathError{Op: "write", Path: "audit.jsonl", Err: syscall.ENOSPC}
	}
	return f.logFile.Write(p)
}

// TestRecoversAfterDiskFull: while the disk is full appends fail and Err
// says why; once space returns the same Log appends the same events, with
// no reopening, and the file is exactly what an undisturbed log would be.
func TestRecoversAfterDiskFull(t *testing.T) {
	path := logPath(t)
	fsys := &fullFS{}
	l, err := open(path, Options{}, fsys)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	appendT(t, l, testEvents(1, 3)...)
	if l.Err() != nil || l.Failures() != 0 {
		t.Fatalf("Err of a healthy log: %v, Failures %d", l.Err(), l.Failures())
	}
	fsys.full = true
	for range 3 {
		if err := l.Append(testEvents(4, 6)...); !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("append on a full disk: %v", err)
		}
		if !errors.Is(l.Err(), syscall.ENOSPC) {
			t.Fatalf("Err on a full disk: %v", l.Err())
		}
		if last, _ := l.Last(); last != 3 {
			t.Fatalf("Last after failed appends = %d", last)
		}
	}
	if n := l.Failures(); n != 3 {
		t.Fatalf("Failures after 3 failed appends = %d", n)
	}
	fsys.full = false
	appendT(t, l, testEvents(4, 6)...)
	if l.Err() != nil {
		t.Fatalf("Err after recovering: %v", l.Err())
	}
	if n := l.Failures(); n != 3 {
		t.Fatalf("Failures after recovering = %d, want the 3 failures still counted", n)
	}
	appendT(t, l, testEvent(7))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); !bytes.Equal(got, referenceLog(t, 7)) {
		t.Fatalf("log after recovering differs from the reference:\n%s", got)
	}
	if rep, err := VerifyFile(path); err != nil || rep.Entries != 7 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}
