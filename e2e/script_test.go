package e2e

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestScripts runs the testscript files in testdata/script against the
// built binaries (memsvc, memsvc-admin, memsvc-mcp and memsvc-recorder
// are on PATH). Each script is a user session at the command line: what
// is typed, what must come out, with which exit code. Besides the
// standard commands, scripts have:
//
//	serve DIR [ENV=VALUE...]  start `memsvc serve --port 0` over DIR in the
//	                          background and set $SERVER_URL, $SERVER_ADDR and
//	                          $SERVER_PORT;
//	                          the server is stopped when the script ends
//	grab VAR REGEXP FILE      set $VAR to the first submatch of REGEXP in FILE
//	                          (use "cp stdout FILE" first to grab from output)
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "script"),
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
			env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"serve": scriptServe,
			"grab":  scriptGrab,
		},
		RequireExplicitExec: true,
	})
}

var scriptListenRE = regexp.MustCompile(`HTTP +listening on (\S+)`)

// scriptServe is the serve command of TestScripts.
func scriptServe(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: serve DIR [ENV=VALUE...]")
	}
	cmd := exec.Command(filepath.Join(binDir, "memsvc"), "serve", "--data-dir", ts.MkAbs(args[0]), "--port", "0")
	cmd.Env = append([]string{"HOME=" + ts.Getenv("HOME"), "PATH=" + ts.Getenv("PATH"),
		"MEMSVC_DECAY__BACKGROUND_INTERVAL_SECS=86400", "MEMSVC_DREAM__BACKGROUND_INTERVAL_SECS=86400"}, args[1:]...)
	stderr, err := cmd.StderrPipe()
	ts.Check(err)
	ts.Check(cmd.Start())
	exited := make(chan struct{})
	ts.Defer(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	addr := make(chan string, 1)
	var log strings.Builder
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if m := scriptListenRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		_ = cmd.Wait()
	}()
	select {
	case a := <-addr:
		ts.Setenv("SERVER_ADDR", a)
		ts.Setenv("SERVER_PORT", a[strings.LastIndex(a, ":")+1:])
		ts.Setenv("SERVER_URL", "http://"+a)
	case <-exited:
		ts.Fatalf("memsvc serve exited before listening:\n%s", log.String())
	case <-time.After(30 * time.Second):
		ts.Fatalf("memsvc serve did not listen within 30s")
	}
	fmt.Fprintf(ts.Stdout(), "server at %s\n", ts.Getenv("SERVER_URL"))
}

// scriptGrab is the grab command of TestScripts.
func scriptGrab(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: grab VAR REGEXP FILE")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	m := re.FindStringSubmatch(ts.ReadFile(args[2]))
	if len(m) < 2 {
		ts.Fatalf("no match for %q in %s", args[1], args[2])
	}
	ts.Setenv(args[0], m[1])
}
