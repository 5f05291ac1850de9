package e2e

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/memory"
)

// These tests run memsvc on small tmpfs file systems that really fill up.
// The tmpfs is mounted in a private mount namespace (unshare -Urm), so it
// needs no privileges where unprivileged user namespaces are allowed, and
// it disappears with the process. The test reaches the files through
// /proc/<pid>/root. Where such namespaces are not available the tests are
// skipped: TestDiskSpaceGuard and TestStartOnFullDisk (pkg/server, with an
// injected free-space probe), TestReadinessFollowsAuditLog (pkg/server,
// with a file size limit that fails appends as a full disk does),
// TestCommitKeepsReserve (pkg/store) and TestRecoversAfterDiskFull
// (pkg/audit) cover the same paths everywhere.

// tmpfsScript mounts a tmpfs of $SIZE at $MNT (and one of $SIZE2 at $MNT2
// when given), writes $BALLAST bytes of ballast into $MNT, and runs memsvc
// serve with its data directory on it.
const tmpfsScript = `set -e
mount -t tmpfs -o size="$SIZE" tmpfs "$MNT"
if [ -n "$MNT2" ]; then mount -t tmpfs -o size="$SIZE2" tmpfs "$MNT2"; fi
if [ -n "$BALLAST" ]; then head -c "$BALLAST" /dev/zero > "$MNT/ballast"; fi
exec "$MEMSVC" serve --data-dir "$MNT/data" --port 0`

// needUnshare skips t where a private mount namespace cannot be made.
func needUnshare(t *testing.T) {
	t.Helper()
	if out, err := exec.Command("unshare", "-Urm", "true").CombinedOutput(); err != nil {
		t.Skipf("no private mount namespace here (unshare -Urm: %v %s); the pkg/server, pkg/store and pkg/audit disk-full tests cover this path", err, out)
	}
}

// tmpfsCmd prepares memsvc serve on a tmpfs (see tmpfsScript).
func tmpfsCmd(t *testing.T, vars map[string]string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("unshare", "-Urm", "sh", "-c", tmpfsScript)
	cmd.Env = cleanEnv(t, append([]string{"MEMSVC=" + filepath.Join(binDir, "memsvc")}, env...)...)
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

// inside is path as the process pid sees it.
func inside(pid int, path string) string {
	return filepath.Join("/proc", strconv.Itoa(pid), "root", path)
}

// randomText is n bytes of letters that do not compress, so records take
// the room they claim.
func randomText(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + r.IntN(26))
	}
	return string(b)
}

// TestDiskFullTmpfs: on a tmpfs that fills up, writes are refused with 507
// while the process lives on and reads work; freeing space makes writes
// work again without a restart.
func TestDiskFullTmpfs(t *testing.T) {
	needUnshare(t)
	mnt := t.TempDir()
	srv := startCmd(t, tmpfsCmd(t, map[string]string{"MNT": mnt, "SIZE": "64m", "BALLAST": strconv.Itoa(30 << 20)},
		"MEMSVC_STORAGE__MIN_FREE_BYTES="+strconv.Itoa(16<<20)))
	pid := srv.cmd.Process.Pid
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(1, 2))
	var first memory.ID
	stored, refused := 0, 0
	for i := 0; i < 200 && refused == 0; i++ {
		id, err := encodeNote(ctx, srv.url("/v1/encode"), randomText(rng, 256<<10))
		var status errStatus
		switch {
		case err == nil:
			if stored == 0 {
				first = id
			}
			stored++
		case errors.As(err, &status) && int(status) == http.StatusInsufficientStorage:
			refused++
		default:
			t.Fatalf("write %d: %v\n%s", i, err, srv.log())
		}
	}
	if refused == 0 || stored < 10 {
		t.Fatalf("%d writes stored and %d refused: the disk never filled, or filled at once\n%s", stored, refused, srv.log())
	}
	for range 3 {
		var env struct {
			Code    memory.Code `json:"code"`
			Message string      `json:"message"`
		}
		code := call(t, "POST", srv.url("/v1/encode"), textNote("refused"), &env)
		if code != http.StatusInsufficientStorage || env.Code != memory.CodeInsufficientStorage || !strings.Contains(env.Message, "low on disk space") {
			t.Fatalf("write on a full disk: %d %+v", code, env)
		}
	}
	// Alive, reading, ready.
	if code := call(t, "GET", srv.url("/v1/introspect/record/"+first.String()), nil, nil); code != 200 {
		t.Fatalf("read on a full disk: %d", code)
	}
	if code := call(t, "GET", srv.url("/readiness"), nil, nil); code != 200 {
		t.Fatalf("readiness on a full disk: %d", code)
	}
	if n := strings.Count(srv.log(), "refusing writes"); n != 1 {
		t.Errorf("the guard logged its refusal %d times, want once:\n%s", n, srv.log())
	}

	if err := os.Remove(inside(pid, filepath.Join(mnt, "ballast"))); err != nil {
		t.Fatal(err)
	}
	if _, err := encodeNote(ctx, srv.url("/v1/encode"), "space is back"); err != nil {
		t.Fatalf("write after space was freed: %v", err)
	}
	if err := srv.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("exit after a full disk: %v\n%s", err, srv.log())
	}
}

// TestAuditLogFullTmpfs: with the audit log on a file system of its own
// that fills up (and the guard off), changes are still accepted, readiness
// reports not ready, and once space is freed the audit log recovers by
// itself and holds every change exactly once.
func TestAuditLogFullTmpfs(t *testing.T) {
	needUnshare(t)
	mnt, mnt2 := t.TempDir(), t.TempDir()
	logPath := filepath.Join(mnt2, "audit.jsonl")
	srv := startCmd(t, tmpfsCmd(t, map[string]string{"MNT": mnt, "SIZE": "64m", "MNT2": mnt2, "SIZE2": "1m"},
		"MEMSVC_STORAGE__MIN_FREE_BYTES=0", "MEMSVC_SECURITY__AUDIT_LOG_PATH="+logPath))
	pid := srv.cmd.Process.Pid
	ctx := t.Context()
	// entries counts the stores in the audit log, which must verify (the
	// background decay loop adds entries of its own).
	entries := func() int {
		path := inside(pid, logPath)
		if _, err := audit.VerifyFile(path); err != nil && !errors.Is(err, audit.ErrTorn) {
			t.Fatalf("audit log: %v", err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), `"operation":"`+audit.OpEncodeStore+`"`)
	}
	for i := range 3 {
		if _, err := encodeNote(ctx, srv.url("/v1/encode"), "before "+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, srv, 10*time.Second, "three audit entries", func() bool { return entries() == 3 })

	// Fill the audit log's file system to the last byte.
	ballast := inside(pid, filepath.Join(mnt2, "ballast"))
	if err := os.WriteFile(ballast, make([]byte, 2<<20), 0o600); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("filling the audit file system: %v", err)
	}
	// The log's last page has room for a few entries; enough changes to
	// need another one.
	const during = 20
	for i := range during {
		if _, err := encodeNote(ctx, srv.url("/v1/encode"), "while the audit log is full "+strconv.Itoa(i)); err != nil {
			t.Fatalf("a change while the audit log is full: %v", err)
		}
	}
	waitFor(t, srv, 15*time.Second, "not ready while the audit log cannot append", func() bool {
		return call(t, "GET", srv.url("/readiness"), nil, nil) == http.StatusServiceUnavailable
	})
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	waitFor(t, srv, 20*time.Second, "ready once space is back", func() bool {
		return call(t, "GET", srv.url("/readiness"), nil, nil) == http.StatusOK
	})
	waitFor(t, srv, 10*time.Second, "the waiting entries appended", func() bool { return entries() == 3+during })
	if _, err := encodeNote(context.Background(), srv.url("/v1/encode"), "after"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, srv, 10*time.Second, "every entry, once", func() bool { return entries() == 3+during+1 })
	if err := srv.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("exit: %v\n%s", err, srv.log())
	}
}

// TestStartOnFullTmpfs: serve on a file system already below the reserve
// exits at once with one line that says what to do, instead of retrying or
// flooding its log.
func TestStartOnFullTmpfs(t *testing.T) {
	needUnshare(t)
	mnt := t.TempDir()
	cmd := tmpfsCmd(t, map[string]string{"MNT": mnt, "SIZE": "16m", "BALLAST": strconv.Itoa(15 << 20)},
		"MEMSVC_STORAGE__MIN_FREE_BYTES="+strconv.Itoa(16<<20))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	begin := time.Now()
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("serve on a full disk did not exit:\n%.2000s", stderr.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit %v:\n%s", err, stderr.String())
	}
	out := strings.TrimSpace(stderr.String())
	if strings.Count(out, "\n") != 0 || !strings.Contains(out, "not opening data directory") || !strings.Contains(out, "free some space") {
		t.Fatalf("want one line saying what to do, got:\n%s", out)
	}
	t.Logf("exited after %v: %s", time.Since(begin), out)
}
