package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// buildBench builds memsvc-bench into a new temporary directory and
// returns the directory and the binary.
func buildBench(ctx context.Context, t *testing.T) (dir, bin string) {
	t.Helper()
	dir = t.TempDir()
	build := exec.CommandContext(ctx, "go", "build", "-o", dir+string(os.PathSeparator), "memsvc.dev/memsvc/e2e/cmd/memsvc-bench")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build memsvc-bench: %v\n%s", err, out)
	}
	return dir, filepath.Join(dir, "memsvc-bench")
}

// runBench runs the memsvc-bench binary bin with args and its temporary
// files in dir, and returns its report (stdout); a failed run ends the
// test with both outputs.
func runBench(ctx context.Context, t *testing.T, dir, bin string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("memsvc-bench %v: %v (after %v)\nstdout:\n%s\nstderr:\n%s", args, err, time.Since(start), stdout.String(), stderr.String())
	}
	t.Logf("memsvc-bench %s took %v", args[0], time.Since(start).Round(time.Millisecond))
	return stdout.String()
}

// TestBenchDriver builds cmd/memsvc-bench and runs it the way CI can
// afford (--quick, 1,000 records, memsvc-mcp but not the npm peer), then
// checks that the report has a row for every section and the JSON agrees,
// so the documented benchmark command keeps working. The numbers
// themselves are not checked: a shared machine makes them noise.
func TestBenchDriver(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 150*time.Second)
	defer cancel()
	dir, bench := buildBench(ctx, t)
	jsonPath := filepath.Join(dir, "bench.json")
	out := runBench(ctx, t, dir, bench, "--quick", "--sizes", "1000", "--embeddings", "--skip-peer",
		"--memsvc-bin", filepath.Join(binDir, "memsvc"), "--mcp-bin", filepath.Join(binDir, "memsvc-mcp"),
		"--json", jsonPath, "--timeout", "140s")

	number := `[0-9][0-9.,]*`
	for _, op := range []string{
		"corpus load (batch of 1,000)", "store (single, synced)", "batch store (100 per batch)",
		"raw batch ingest (1,000 per batch)", "recall (text)", "recall (text, reconsolidate=false)",
		"recall (vector)", "recall (hybrid)", "recall (no query)", "associate", "timeline", "decay tick",
		"dream tick", "export (streaming)", "import (streaming)", "cold start (to /readiness 200)",
	} {
		re := regexp.MustCompile(`(?m)^\| ` + regexp.QuoteMeta(op) + ` \| 1,000 \| [1-9][0-9]* \| ` + number + ` \| ` + number + ` \| ` + number + ` \| `)
		if !re.MatchString(out) {
			t.Errorf("no row for %q in the report:\n%s", op, out)
		}
	}
	for _, want := range []string{
		"| memsvc-mcp | ", "| store (store) | 50 | ", "| search (recall) | 20 | ",
		"The peer did not run: skipped with --skip-peer.",
		"| 1,000 | ", // the memory table
		"| store p50 under 2 ms, synced | p50 ",
		"| start-up under 2 s at 100,000 records | no run of 100,000 records or more | not measured |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}

	var rep struct {
		Sizes []struct {
			Records int
			Rows    []struct {
				Operation string
				Ops       int
				P50ms     float64 `json:"p50_ms"`
				P99ms     float64 `json:"p99_ms"`
			}
			Memory struct {
				EmptyRSS  int64 `json:"empty_rss_bytes"`
				LoadedRSS int64 `json:"loaded_rss_bytes"`
			}
		}
		MCP struct {
			Servers []struct{ Name string }
		}
		Budgets []struct{ Budget, Verdict string }
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, data)
	}
	if len(rep.Sizes) != 1 || rep.Sizes[0].Records != 1000 || len(rep.Sizes[0].Rows) != 16 {
		t.Fatalf("JSON sizes: %+v", rep.Sizes)
	}
	for _, r := range rep.Sizes[0].Rows {
		if r.Ops < 1 || r.P50ms <= 0 || r.P99ms < r.P50ms {
			t.Errorf("implausible row %+v", r)
		}
	}
	if m := rep.Sizes[0].Memory; m.EmptyRSS <= 0 || m.LoadedRSS <= m.EmptyRSS {
		t.Errorf("memory: %+v", m)
	}
	if len(rep.MCP.Servers) != 1 || rep.MCP.Servers[0].Name != "memsvc-mcp" {
		t.Errorf("MCP servers: %+v", rep.MCP.Servers)
	}
	if len(rep.Budgets) != 6 {
		t.Errorf("budgets: %+v", rep.Budgets)
	}
	// Nothing is left behind in the scratch area.
	left, err := filepath.Glob(filepath.Join(dir, "memsvc-bench-*"))
	if err != nil || len(left) != 0 {
		t.Errorf("scratch directories left behind: %v %v", left, err)
	}
}
