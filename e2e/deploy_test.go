package e2e

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// TestSystemdUnit runs the command line of deploy-docs/memsvc.service the
// way systemd would (binary and config paths swapped for test ones, the
// config derived from the documented example), kills it with SIGKILL while
// it works, restarts it, and finds everything acknowledged.
func TestSystemdUnit(t *testing.T) {
	unit, err := os.ReadFile("../deploy-docs/memsvc.service")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^ExecStart=(\S+) (.*)$`).FindSubmatch(unit)
	if m == nil || string(m[1]) != "/usr/local/bin/memsvc" {
		t.Fatalf("ExecStart not found or unexpected: %q", m)
	}
	// systemctl reload sends SIGHUP, which reloads the configuration
	// (TestSIGHUPReloads).
	if !regexp.MustCompile(`(?m)^ExecReload=/bin/kill -HUP \$MAINPID$`).Match(unit) {
		t.Fatal("the unit does not reload with SIGHUP")
	}
	args := strings.Fields(string(m[2]))
	if strings.Join(args, " ") != "serve --config /etc/memsvc/memsvc.toml" {
		t.Fatalf("unit runs %q", args)
	}
	example, err := os.ReadFile("../deploy-docs/memsvc.example.toml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := strings.Replace(string(example), `data_dir = "./data"`, fmt.Sprintf("data_dir = %q", filepath.Join(dir, "data")), 1)
	cfg = strings.Replace(cfg, "port = 8420", "port = 0", 1)
	cfgPath := filepath.Join(dir, "memsvc.toml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	args[len(args)-1] = cfgPath

	run := func() *server {
		cmd := exec.Command(filepath.Join(binDir, "memsvc"), args...)
		cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}
		return startCmd(t, cmd)
	}
	srv := run()
	var acked []memory.ID
	for i := 0; i < 20; i++ {
		var resp memory.EncodeStoreResponse
		if code := call(t, "POST", srv.url("/v1/encode"), map[string]any{
			"content": map[string]any{"blocks": []map[string]any{{"modality": "text", "format": "text/plain", "data": []byte(fmt.Sprint("unit ", i))}}},
		}, &resp); code != 200 {
			t.Fatalf("store: %d", code)
		}
		acked = append(acked, resp.RecordID)
	}
	_ = srv.stop(syscall.SIGKILL)
	srv = run()
	for _, id := range acked {
		if code := call(t, "GET", srv.url("/v1/introspect/record/"+id.String()), nil, nil); code != 200 {
			t.Fatalf("record %s lost: %d", id, code)
		}
	}
	if err := srv.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
}

// startCmd starts a prepared `memsvc serve` command and waits until it
// answers.
func startCmd(t *testing.T, cmd *exec.Cmd) *server {
	t.Helper()
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, cmd: cmd, exited: make(chan error, 1)}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			s.mu.Lock()
			s.stderr.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			if m := listenRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	go func() { s.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-s.exited
		}
	})
	select {
	case s.addr = <-found:
	case err := <-s.exited:
		t.Fatalf("server exited (%v):\n%s", err, s.log())
	case <-time.After(30 * time.Second):
		t.Fatalf("server did not start:\n%s", s.log())
	}
	return s
}
