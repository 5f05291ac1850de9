package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// bench is one run of the driver: its configuration, scratch directory,
// child processes and the results gathered so far.
type bench struct {
	cfg    *config
	log    io.Writer
	begin  time.Time
	tmp    string // removed by close
	kids   *children
	result *report
	// targets is what the targets subcommand measured so far.
	targets *targetsReport
	// peer, when set, replaces the npm package as the server memsvc-mcp
	// is compared with, so the comparison can run against any stdio MCP
	// server (the tests use a second memsvc-mcp).
	peer peerStarter
}

func newBench(cfg *config, stderr io.Writer) (*bench, error) {
	tmp, err := os.MkdirTemp("", "memsvc-bench-")
	if err != nil {
		return nil, fmt.Errorf("scratch directory: %w", err)
	}
	return &bench{cfg: cfg, log: stderr, begin: time.Now(), tmp: tmp, kids: &children{},
		result: &report{runInfo: runInfo{Command: commandLine(cfg.args), Started: time.Now().UTC()}}}, nil
}

// close kills every child still running, then removes the scratch
// directory (servers must be gone before their data directories are).
func (b *bench) close() {
	b.kids.killAll()
	if err := os.RemoveAll(b.tmp); err != nil {
		b.logf("remove %s: %v", b.tmp, err)
	}
}

func (b *bench) logf(format string, a ...any) {
	el := time.Since(b.begin).Round(time.Second)
	fmt.Fprintf(b.log, "memsvc-bench [%02d:%02d:%02d] %s\n", int(el.Hours()), int(el.Minutes())%60, int(el.Seconds())%60, fmt.Sprintf(format, a...))
}

// scratch returns a new private directory under the run's scratch
// directory.
func (b *bench) scratch(name string) (string, error) {
	return os.MkdirTemp(b.tmp, name+"-")
}

// run measures everything the configuration asks for. What was measured
// before an error stays in b.result.
func (b *bench) run(ctx context.Context) error {
	r := b.result
	r.Machine = readMachine()
	r.LoadBefore = loadAvg()
	r.Quick = b.cfg.quick
	r.Embeddings = b.cfg.embeddings
	defer func() { r.LoadAfter = loadAvg() }()

	if err := b.binaries(ctx); err != nil {
		return err
	}
	if b.cfg.embeddings {
		b.logf("measuring memory read bandwidth")
		r.MemBandwidth = memBandwidth()
	}
	for _, n := range b.cfg.sizes {
		s := &sizeReport{Records: n}
		r.Sizes = append(r.Sizes, s)
		if err := b.runSize(ctx, s); err != nil {
			return fmt.Errorf("%s records: %w", group(n), err)
		}
	}
	if b.cfg.skipMCP {
		return nil
	}
	return b.runMCP(ctx)
}

// binaries builds memsvc and memsvc-mcp unless the flags name them.
func (b *bench) binaries(ctx context.Context) error {
	var pkgs []string
	dir := filepath.Join(b.tmp, "bin")
	if b.cfg.memsvcBin == "" {
		pkgs = append(pkgs, "memsvc.dev/memsvc/cmd/memsvc")
		b.cfg.memsvcBin = filepath.Join(dir, "memsvc")
	}
	if b.cfg.mcpBin == "" && !b.cfg.skipMCP {
		pkgs = append(pkgs, "memsvc.dev/memsvc/cmd/memsvc-mcp")
		b.cfg.mcpBin = filepath.Join(dir, "memsvc-mcp")
	}
	if len(pkgs) == 0 {
		return nil
	}
	b.logf("building %s", strings.Join(pkgs, " "))
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", append([]string{"build", "-o", dir + string(os.PathSeparator)}, pkgs...)...)
	cmd.SysProcAttr = childAttr()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build (run from the memsvc repository, or pass --memsvc-bin and --mcp-bin): %w\n%s", err, out)
	}
	return nil
}

// commandLine is how the run was invoked, for the report.
func commandLine(args []string) string {
	q := make([]string, 0, len(args)+1)
	q = append(q, "memsvc-bench")
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\"'$\\") {
			a = fmt.Sprintf("%q", a)
		}
		q = append(q, a)
	}
	return strings.Join(q, " ")
}
