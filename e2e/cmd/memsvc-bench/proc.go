package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Bounds of process lifecycles.
const (
	startTimeout = 2 * time.Minute // exec to "listening" and to /readiness 200
	stopTimeout  = time.Minute     // SIGTERM to exit before SIGKILL
	pollEvery    = 2 * time.Millisecond
)

// process is a child the driver started. Wait is called exactly once, by
// the goroutine started in startProcess.
type process struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has exited
	err    error         // exit status, valid once exited is closed
	tail   *tailBuffer   // the end of its stderr
}

// startProcess starts cmd and registers it with kids, which kills it when
// the run ends. stderrLine, when non-nil, sees every stderr line.
func startProcess(kids *children, cmd *exec.Cmd, stderrLine func(string)) (*process, error) {
	cmd.SysProcAttr = childAttr()
	p := &process{cmd: cmd, exited: make(chan struct{}), tail: &tailBuffer{max: 16 << 10}}
	pipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	kids.add(p)
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.tail.line(sc.Text())
			if stderrLine != nil {
				stderrLine(sc.Text())
			}
		}
		_, _ = io.Copy(io.Discard, pipe) // a line too long for the scanner
	}()
	go func() {
		<-read // Wait closes the pipe: read it all first
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

func (p *process) done() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// kill ends the process at once and waits for it.
func (p *process) kill() {
	if !p.done() {
		_ = p.cmd.Process.Kill()
	}
	<-p.exited
}

// stop asks the process to exit with SIGTERM and waits (bounded); after
// the bound it is killed and stop reports it.
func (p *process) stop() error {
	if p.done() {
		return fmt.Errorf("%s had already exited: %v", p.cmd.Path, p.err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("signal %s: %w", p.cmd.Path, err)
	}
	t := time.NewTimer(stopTimeout)
	defer t.Stop()
	select {
	case <-p.exited:
		if p.err != nil {
			return fmt.Errorf("%s exit after SIGTERM: %w\n%s", p.cmd.Path, p.err, p.tail)
		}
		return nil
	case <-t.C:
		p.kill()
		return fmt.Errorf("%s still running %v after SIGTERM; killed", p.cmd.Path, stopTimeout)
	}
}

// rss is the resident set size of the process in bytes, from VmRSS in
// /proc/<pid>/status.
func (p *process) rss() (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid()))
	if err != nil {
		return 0, fmt.Errorf("read process status: %w", err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) != 2 || f[1] != "kB" {
				return 0, fmt.Errorf("parse VmRSS %q", line)
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parse VmRSS: %w", err)
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("no VmRSS in process status")
}

// cpuTime is the CPU time the process has used. It sums the run time
// of its threads from /proc/<pid>/task/*/schedstat, in nanoseconds:
// /proc/<pid>/stat counts user and system time in clock ticks (10 ms),
// which a short start can fall under. Threads that have exited are not
// in that sum; a Go program's threads live as long as it does. Where
// schedstat cannot be read it falls back to the ticks of stat.
func (p *process) cpuTime() (time.Duration, error) {
	if d, err := p.threadRunTime(); err == nil {
		return d, nil
	}
	return p.statCPUTime()
}

// threadRunTime sums the first field (time on a CPU, ns) of the
// schedstat of every thread of the process.
func (p *process) threadRunTime() (time.Duration, error) {
	dir := fmt.Sprintf("/proc/%d/task", p.pid())
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var sum time.Duration
	read := 0
	for _, t := range tasks {
		data, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat"))
		if err != nil {
			continue // the thread has exited since the listing
		}
		f := strings.Fields(string(data))
		if len(f) == 0 {
			return 0, fmt.Errorf("parse %s/schedstat %q", t.Name(), data)
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse %s/schedstat: %w", t.Name(), err)
		}
		sum += time.Duration(ns)
		read++
	}
	if read == 0 {
		return 0, errors.New("no thread schedstat readable")
	}
	return sum, nil
}

// statCPUTime is the CPU time the process has used (user and system),
// from /proc/<pid>/stat, assuming the usual 100 clock ticks per second.
func (p *process) statCPUTime() (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid()))
	if err != nil {
		return 0, fmt.Errorf("read process stat: %w", err)
	}
	// The command name (field 2) may hold spaces; count from after it.
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("parse process stat %q", s)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("parse process stat: %w", err)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// children are the processes of one run; killAll ends those still running.
type children struct {
	mu    sync.Mutex
	procs []*process
}

func (c *children) add(p *process) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.procs = append(c.procs, p)
}

func (c *children) killAll() {
	c.mu.Lock()
	procs := c.procs
	c.procs = nil
	c.mu.Unlock()
	for _, p := range procs {
		p.kill()
	}
}

// tailBuffer keeps the last max bytes of a child's stderr for error
// messages.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (t *tailBuffer) line(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.WriteString(s)
	t.buf.WriteByte('\n')
	if over := t.buf.Len() - t.max; over > 0 {
		t.buf.Next(over)
	}
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}

// server is a running `memsvc serve` on loopback.
type server struct {
	*process
	dir   string
	addr  string        // host:port it listens on
	ready time.Duration // from exec to the first /readiness 200
}

var listenRE = regexp.MustCompile(`HTTP +listening on (\S+)`)

// startServer runs `memsvc serve` over dir on a free loopback port with
// the rate limit lifted, and returns once /readiness answers 200. env
// adds NAME=value settings to its environment.
func startServer(ctx context.Context, kids *children, bin, dir, home string, env ...string) (*server, error) {
	cmd := exec.Command(bin, "serve", "--data-dir", dir, "--port", "0")
	cmd.Env = append([]string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"MEMSVC_HTTP__BIND_ADDRESS=127.0.0.1",
		"MEMSVC_RATE_LIMIT__REQUESTS_PER_SECOND=1000000000",
		"MEMSVC_RATE_LIMIT__BURST=1000000000",
	}, env...)
	found := make(chan string, 1)
	start := time.Now()
	p, err := startProcess(kids, cmd, func(line string) {
		if m := listenRE.FindStringSubmatch(line); m != nil {
			select {
			case found <- m[1]:
			default:
			}
		}
	})
	if err != nil {
		return nil, err
	}
	s := &server{process: p, dir: dir}
	t := time.NewTimer(startTimeout)
	defer t.Stop()
	select {
	case s.addr = <-found:
	case <-p.exited:
		return nil, fmt.Errorf("memsvc serve exited at start (%v):\n%s", p.err, p.tail)
	case <-t.C:
		p.kill()
		return nil, fmt.Errorf("memsvc serve printed no listen address within %v:\n%s", startTimeout, p.tail)
	case <-ctx.Done():
		p.kill()
		return nil, ctx.Err()
	}
	if err := checkLoopback(s.addr); err != nil {
		p.kill()
		return nil, err
	}
	if err := s.waitReady(ctx, time.Until(start.Add(startTimeout))); err != nil {
		p.kill()
		return nil, err
	}
	s.ready = time.Since(start)
	return s, nil
}

func (s *server) url() string { return "http://" + s.addr }

// waitReady polls /readiness until it answers 200.
func (s *server) waitReady(ctx context.Context, bound time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	defer hc.CloseIdleConnections()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url()+"/readiness", nil)
		if err != nil {
			return err
		}
		if resp, err := hc.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("memsvc at %s not ready: %w\n%s", s.addr, ctx.Err(), s.tail)
		case <-s.exited:
			return fmt.Errorf("memsvc exited before it was ready (%v):\n%s", s.err, s.tail)
		case <-time.After(pollEvery):
		}
	}
}

// checkLoopback refuses a listen address that is not on loopback: the
// driver sends traffic to this machine only.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("server listens on %s, not on loopback; refusing to send traffic there", addr)
	}
	return nil
}
