package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"memsvc.dev/memsvc/internal/testkit"
)

// unitExecStart reads the systemd unit at path and returns its text and the
// arguments of its ExecStart line, which must run bin.
func unitExecStart(t *testing.T, path, bin string) (unit string, args []string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^ExecStart=(\S+) (.*)$`).FindStringSubmatch(string(data))
	if m == nil || m[1] != bin {
		t.Fatalf("%s: ExecStart not found or unexpected: %q", path, m)
	}
	return string(data), strings.Fields(m[2])
}

// TestSystemdUnit runs the command line of deploy-docs/memsvc.service the
// way systemd would (binary and config paths swapped for test ones, the
// config derived from the documented example), kills it with SIGKILL while
// it works, restarts it, and finds everything acknowledged.
func TestSystemdUnit(t *testing.T) {
	unit, args := unitExecStart(t, "../deploy-docs/memsvc.service", "/usr/local/bin/memsvc")
	// systemctl reload sends SIGHUP, which reloads the configuration
	// (TestSIGHUPReloads).
	if !regexp.MustCompile(`(?m)^ExecReload=/bin/kill -HUP \$MAINPID$`).MatchString(unit) {
		t.Fatal("the unit does not reload with SIGHUP")
	}
	if strings.Join(args, " ") != "serve --config /etc/memsvc/memsvc.toml" {
		t.Fatalf("unit runs %q", args)
	}
	cfgPath := testkit.ExampleConfig(t, "../deploy-docs/memsvc.example.toml")
	dir := filepath.Dir(cfgPath)
	args[len(args)-1] = cfgPath

	run := func() *server {
		return startCmd(t, binCmd(t, "memsvc", []string{"HOME=" + dir}, args...))
	}
	srv := run()
	acked := storeNotes(t, srv, "unit ", 20)
	_ = srv.stop(syscall.SIGKILL)
	srv = run()
	requireRecords(t, srv, acked, "after kill -9 under the unit")
	if err := srv.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
}
